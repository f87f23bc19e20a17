/*
 * snap_gc.c - see snap_gc.h.
 */
#include "config.h"

#include "snap/snap_gc.h"

#include "snap/snap_gitdir.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define LOOSE_DUE 5000
#define PACKS_DUE 16

/* ---- the sessions file ---------------------------------------------------------- */

typedef struct gc_session {
    char key[96];
    double start, end;
} gc_session;

static gc_session *read_sessions(snap_store *st, size_t *n)
{
    char *path = xasprintf("%s/sessions", st->dir);
    char *text = snap_read_small(path, 16u << 20, NULL);
    free(path);
    gc_session *v = NULL;
    *n = 0;
    for (char *line = text, *save = NULL, *tok = text ? strtok_r(line, "\n", &save) : NULL; tok;
         tok = strtok_r(NULL, "\n", &save)) {
        gc_session s;
        memset(&s, 0, sizeof s);
        if (sscanf(tok, "%95s %lf %lf", s.key, &s.start, &s.end) != 3)
            continue;
        size_t i = 0;
        while (i < *n && strcmp(v[i].key, s.key) != 0)
            i++;
        if (i == *n) {
            v = xrealloc(v, (*n + 1) * sizeof *v);
            (*n)++;
        }
        v[i] = s; /* the last line about a key wins */
    }
    free(text);
    return v;
}

static void write_sessions(snap_store *st, const gc_session *v, size_t n)
{
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "%s %.3f %.3f\n", v[i].key, v[i].start, v[i].end);
    char *path = xasprintf("%s/sessions", st->dir), *tmp = xasprintf("%s/sessions.tmp", st->dir);
    FILE *f = fopen(tmp, "we");
    if (f) {
        fwrite(b.data ? b.data : "", 1, b.len, f);
        if (fclose(f) == 0)
            rename(tmp, path);
        else
            unlink(tmp);
    }
    free(path);
    free(tmp);
    buf_free(&b);
}

void snap_gc_session(snap_store *st, const char *key, double start, double end)
{
    char *path = xasprintf("%s/sessions", st->dir);
    FILE *f = fopen(path, "ae");
    if (f) {
        fprintf(f, "%s %.3f %.3f\n", key, start, end);
        fclose(f);
    }
    free(path);
}

/* Whether the session's previous boundary already keeps this commit.  A
 * command that changed nothing ends on the snapshot it started from: a
 * second ref to it would keep nothing more, and costs a ref file and its
 * lock file (two inodes made, one left) on every such command.  A
 * session's refs only keep its snapshots from gc, and go all together
 * (drop_session_refs), so a gap in SEQ loses nothing. */
static bool anchored_before(snap_store *st, const char *key, int seq, const git_oid *id)
{
    char name[160];
    snprintf(name, sizeof name, "refs/snap/s/%s/%d", key, seq - 1);
    git_reference *prev = NULL;
    bool same = git_reference_lookup(&prev, st->repo, name) == 0 && git_reference_target(prev) &&
                git_oid_equal(git_reference_target(prev), id);
    git_reference_free(prev);
    if (!same)
        git_error_clear();
    return same;
}

int snap_gc_anchor(snap_store *st, const char *key, int seq, const char *commit, char *err, size_t errlen)
{
    git_oid id;
    char name[160];
    snprintf(name, sizeof name, "refs/snap/s/%s/%d", key, seq);
    git_reference *ref = NULL;
    int rc = git_oid_fromstr(&id, commit);
    if (rc == 0 && seq > 1 && anchored_before(st, key, seq, &id))
        return 0;
    if (rc == 0)
        rc = git_reference_create(&ref, st->repo, name, &id, 1, NULL);
    git_reference_free(ref);
    if (rc < 0) {
        snprintf(err, errlen, "cannot keep snapshot %.12s of %s: %s", commit, st->ws, snap_git_error());
        return -1;
    }
    return 0;
}

/* ---- what is in the store --------------------------------------------------------- */

/* Entries of st's directory rel (under the store) that counts(name) says
 * to count; 0 when it cannot be read. */
static long count_entries(snap_store *st, const char *rel, bool (*counts)(const char *name))
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", st->dir, rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += counts(e->d_name);
    closedir(d);
    return n;
}

static bool is_object(const char *name)
{
    return name[0] != '.';
}

static bool is_pack(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".pack") == 0;
}

/* Loose objects, estimated as git's gc --auto does: those of one fan-out
 * directory (objects/17) times 256.  Object names are uniform hashes, so
 * one directory in 256 is a fair sample, and the check is asked after
 * every command: counting all 256 directories made it cost a listing of
 * every loose object each time (most of an exec's server time in a big
 * workspace whose first snapshot was seeded loose). */
static long estimate_loose(snap_store *st)
{
    return count_entries(st, "objects/17", is_object) * 256;
}

bool snap_gc_due(snap_store *st)
{
    return estimate_loose(st) > LOOSE_DUE || count_entries(st, "objects/pack", is_pack) > PACKS_DUE;
}

void snap_gc_sweep(snap_store *st)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/objects/pack", st->dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "tmp_", 4) == 0 || strncmp(e->d_name, "pack_git2_", 10) == 0) {
            char p[PATH_MAX + NAME_MAX + 2];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

/* ---- dropping sessions ------------------------------------------------------------ */

static int drop_session_refs(snap_store *st, const char *key)
{
    char glob[160];
    snprintf(glob, sizeof glob, "refs/snap/s/%s/*", key);
    git_reference_iterator *it = NULL;
    if (git_reference_iterator_glob_new(&it, st->repo, glob) < 0)
        return -1;
    git_reference *ref;
    int n = 0;
    while (git_reference_next(&ref, it) == 0) {
        if (git_reference_delete(ref) == 0)
            n++;
        git_reference_free(ref);
    }
    git_reference_iterator_free(it);
    git_error_clear();
    return n;
}

static bool is_live(const char *key, const char *const *live, size_t n_live)
{
    for (size_t i = 0; i < n_live; i++)
        if (strcmp(live[i], key) == 0)
            return true;
    return false;
}

static int by_end(const void *a, const void *b)
{
    const gc_session *x = a, *y = b;
    double ex = x->end ? x->end : x->start, ey = y->end ? y->end : y->start;
    return ex < ey ? -1 : ex > ey;
}

static bool is_gone(const char *key, const snap_gc_gone *gone, size_t n_gone)
{
    int id;
    long long ms;
    char tail;
    if (sscanf(key, "%d-%lld%c", &id, &ms, &tail) != 2)
        return false;
    for (size_t i = 0; i < n_gone; i++)
        if (gone[i].id == id && (double)ms / 1000.0 >= gone[i].start_lo && (double)ms / 1000.0 < gone[i].start_hi)
            return true;
    return false;
}

int snap_gc_forget(snap_store *st, const snap_gc_gone *gone, size_t n_gone)
{
    if (!n_gone)
        return 0;
    size_t n = 0, kept = 0;
    gc_session *v = read_sessions(st, &n);
    int forgotten = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_gone(v[i].key, gone, n_gone)) {
            drop_session_refs(st, v[i].key);
            forgotten++;
            continue;
        }
        v[kept++] = v[i];
    }
    if (forgotten)
        write_sessions(st, v, kept);
    free(v);
    return forgotten;
}

/* ---- repacking ------------------------------------------------------------------- */

static void remove_loose_and_old_packs(snap_store *st, const char *keep)
{
    char path[PATH_MAX + NAME_MAX + 2];
    for (int i = 0; i < 256; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/objects/%02x", st->dir, i);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
        rmdir(dir);
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/objects/pack", st->dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    size_t kl = strlen(keep);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (strncmp(e->d_name, "pack-", 5) == 0 && strncmp(e->d_name + 5, keep, kl) == 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* The store's handles again: packs were removed under them. */
static int reopen(snap_store *st, char *err, size_t errlen)
{
    git_index_free(st->index);
    git_repository_free(st->repo);
    st->index = NULL;
    st->repo = NULL;
    char *ipath = xasprintf("%s/snap.index", st->dir);
    int rc = git_repository_open_bare(&st->repo, st->dir);
    if (rc == 0)
        rc = git_repository_set_workdir(st->repo, st->ws, 0);
    if (rc == 0)
        rc = git_index_open(&st->index, ipath);
    free(ipath);
    if (rc < 0) {
        snprintf(err, errlen, "cannot open the snapshot store %s again: %s", st->dir, snap_git_error());
        return -1;
    }
    git_repository_set_index(st->repo, st->index);
    return 0;
}

static int repack(snap_store *st, char *err, size_t errlen)
{
    uint64_t size = snap_disk_usage(st->dir);
    struct statvfs vfs;
    if (statvfs(st->dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < size + size / 10) {
        snprintf(err, errlen, "not repacking %s: less free space than the store takes (%llu bytes)", st->dir,
                 (unsigned long long)size);
        return -1;
    }
    git_packbuilder *pb = NULL;
    git_revwalk *walk = NULL;
    int rc = git_packbuilder_new(&pb, st->repo);
    if (rc == 0) {
        git_packbuilder_set_threads(pb, 1);
        rc = git_revwalk_new(&walk, st->repo);
    }
    if (rc == 0) {
        rc = git_revwalk_push_glob(walk, "refs/snap/*");
        if (rc == GIT_ENOTFOUND)
            rc = 0;
    }
    if (rc == 0)
        rc = git_packbuilder_insert_walk(pb, walk);
    /* What the index names but no snapshot does yet (none, normally). */
    if (rc == 0 && git_packbuilder_object_count(pb) > 0)
        rc = git_packbuilder_write(pb, NULL, 0, NULL, NULL);
    char keep[64] = "";
    if (rc == 0 && git_packbuilder_object_count(pb) > 0)
        snprintf(keep, sizeof keep, "%s", git_packbuilder_name(pb));
    git_revwalk_free(walk);
    git_packbuilder_free(pb);
    if (rc < 0) {
        snprintf(err, errlen, "cannot repack %s: %s", st->dir, snap_git_error());
        snap_gc_sweep(st);
        return -1;
    }
    if (!keep[0])
        snprintf(keep, sizeof keep, "%s", "-none-");
    remove_loose_and_old_packs(st, keep);
    git_refdb *db = NULL;
    if (git_repository_refdb(&db, st->repo) == 0)
        git_refdb_compress(db);
    git_refdb_free(db);
    return reopen(st, err, errlen);
}

int snap_gc_run(snap_store *st, bool force, const char *const *live, size_t n_live, snap_gc_result *out)
{
    memset(out, 0, sizeof *out);
    atomic_store(&st->progress->phase, SNAP_MAINTAINING);
    out->bytes_before = snap_disk_usage(st->dir);
    size_t n = 0;
    gc_session *v = read_sessions(st, &n);
    double now = wall_sec(), keep_for = (double)st->conf.retention_ms / 1000.0;
    bool dropped = false;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool ended = !is_live(v[i].key, live, n_live);
        double end = v[i].end ? v[i].end : v[i].start;
        if (ended && now - end > keep_for) {
            drop_session_refs(st, v[i].key);
            out->sessions_dropped++;
            dropped = true;
            continue;
        }
        v[kept++] = v[i];
    }
    n = kept;
    int rc = 0;
    if (dropped || force || snap_gc_due(st)) {
        rc = repack(st, out->error, sizeof out->error);
        out->repacked = rc == 0;
    }
    /* Over the cap: the oldest ended sessions go, one at a time. */
    if (n)
        qsort(v, n, sizeof *v, by_end); /* (v is NULL for a store without sessions) */
    while (rc == 0 && st->conf.max_store_size && snap_disk_usage(st->dir) > st->conf.max_store_size) {
        size_t i = 0;
        while (i < n && is_live(v[i].key, live, n_live))
            i++;
        if (i == n)
            break; /* only running sessions left: nothing to drop */
        drop_session_refs(st, v[i].key);
        out->sessions_dropped++;
        memmove(&v[i], &v[i + 1], (n - i - 1) * sizeof *v);
        n--;
        rc = repack(st, out->error, sizeof out->error);
        out->repacked = rc == 0;
    }
    write_sessions(st, v, n);
    free(v);
    out->bytes_after = snap_disk_usage(st->dir);
    atomic_store(&st->progress->phase, SNAP_IDLE);
    return rc;
}
