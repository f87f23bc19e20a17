/*
 * snap_take.c - see snap_take.h.
 */
#include "config.h"

#include "snap/snap_take.h"
#include "snap/snap_treepack.h"

#include "snap/snap_gitdir.h"
#include "snap/snap_meta.h"
#include "snap/snap_pack.h"
#include "snap/snap_reader.h"
#include "snap/snap_seed.h"
#include "snap/snap_wire.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Files above this are recorded by size only whatever the configured
 * cap says (0 means no cap): a file's bytes are held in memory twice on
 * their way into the store. */
#define HARD_MAX_FILE ((uint64_t)256 << 20)

static uint64_t read_cap(const snap_store *st)
{
    uint64_t cap = st->conf.max_file_size;
    return cap && cap < HARD_MAX_FILE ? cap : HARD_MAX_FILE;
}

/* ---- talking to the reader -------------------------------------------------------- */

typedef struct talk {
    snap_store *st;
    snap_reader *rd;
    int fd;
    snap_wire_out out;
    char *err;
    size_t errlen;
    bool seed_bad;  /* a seeded pack failed its check */
    snap_meta *meta;
    snap_pack *pack; /* many files to store and no seed: hashed on threads into one pack */
    bool packed;     /* a pack was made for this snapshot's files */
    struct later **later; /* what the reader said while the pack is made, in order */
    size_t n_later, cap_later;
} talk;

static int fail(talk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(talk *k, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snap_reader_fail(k->rd, why);
    snprintf(k->err, k->errlen, "snapshot of %s incomplete: %s", k->st->ws, why);
    return -1;
}

static int send_frame(talk *k)
{
    int rc = sw_send(k->fd, &k->out);
    if (rc < 0)
        return fail(k, rc == -EAGAIN ? "the workspace's reader stopped reading" : "the workspace's reader is gone (%s)",
                    strerror(-rc));
    return 0;
}

/* The next frame, within the stall timeout. */
static int next(talk *k, snap_wire_in *in)
{
    int rc = sw_recv(snap_reader_inbox(k->rd), in, snap_reader_stall_ms());
    if (rc == 1)
        return 0;
    if (snap_reader_failed(k->rd))
        return fail(k, "%s", snap_reader_why(k->rd));
    if (rc == -ETIMEDOUT)
        return fail(k, "the workspace's reader did not answer for %d s (stall-timeout)", snap_reader_stall_ms() / 1000);
    if (rc == 0)
        return fail(k, "the workspace's reader ended");
    if (rc == -EPROTO)
        return fail(k, "the workspace's reader sent a malformed message");
    return fail(k, "cannot read from the workspace's reader: %s", strerror(-rc));
}

static int64_t index_mtime_ns(const snap_store *st)
{
    char *path = xasprintf("%s/snap.index", st->dir);
    struct stat sb;
    int64_t t = lstat(path, &sb) == 0 ? (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec : 0;
    free(path);
    return t;
}

/* The reader's configuration and its copy of the stat cache (every entry
 * of the index), then its hello. */
static int configure_reader(talk *k, bool allowed)
{
    snap_store *st = k->st;
    sw_begin(&k->out, SW_CONFIG);
    sw_u64(&k->out, read_cap(st));
    sw_u32(&k->out, (uint32_t)st->conf.max_new_files);
    sw_u32(&k->out, (uint32_t)st->conf.max_files);
    sw_u8(&k->out, allowed);
    sw_u8(&k->out, st->latest[0] != '\0');
    sw_u64(&k->out, (uint64_t)index_mtime_ns(st));
    buf_t ex;
    buf_init(&ex);
    /* Lowest first, as git weighs them: the global excludes, then the
     * built-in and configured ones (the reader adds the repository's
     * info/exclude, then each .gitignore). */
    char *global = snap_global_excludes();
    if (global) {
        buf_printf(&ex, "%s\n", global);
        free(global);
    }
    buf_puts(&ex, snap_builtin_excludes);
    for (size_t i = 0; i < st->conf.n_exclude; i++)
        buf_printf(&ex, "%s\n", st->conf.exclude[i]);
    sw_str(&k->out, ex.data ? ex.data : "");
    buf_free(&ex);
    size_t n_deny;
    char *const *deny = snap_reader_deny(k->rd, &n_deny);
    sw_u32(&k->out, (uint32_t)n_deny);
    for (size_t i = 0; i < n_deny; i++)
        sw_str(&k->out, deny[i]);
    if (send_frame(k) < 0)
        return -1;
    size_t n = git_index_entrycount(st->index);
    for (size_t i = 0; i < n;) {
        sw_begin(&k->out, SW_CACHE);
        size_t count_at = k->out.b.len;
        sw_u32(&k->out, 0);
        uint32_t count = 0;
        for (; i < n && k->out.b.len < SNAP_WIRE_CHUNK / 2; i++) {
            const git_index_entry *e = git_index_get_byindex(st->index, i);
            if (!e)
                continue;
            snap_wire_stat s = {.mode = e->mode, .size = e->file_size,
                                .mtime_ns = (int64_t)e->mtime.seconds * 1000000000 + e->mtime.nanoseconds,
                                .ctime_ns = (int64_t)e->ctime.seconds * 1000000000 + e->ctime.nanoseconds,
                                .ino = e->ino, .dev = e->dev, .uid = e->uid, .gid = e->gid};
            sw_str(&k->out, e->path);
            sw_stat(&k->out, &s);
            count++;
        }
        memcpy(k->out.b.data + count_at, &count, sizeof count);
        if (send_frame(k) < 0)
            return -1;
    }
    sw_begin(&k->out, SW_CACHE);
    sw_u32(&k->out, 0);
    if (send_frame(k) < 0)
        return -1;
    snap_wire_in in;
    if (next(k, &in) < 0)
        return -1;
    int type = in.type;
    char *msg = NULL;
    if (type == SW_ERROR)
        sw_get_str(&in, &msg, 1000);
    sw_in_free(&in);
    if (type != SW_HELLO) {
        int rc = fail(k, "the workspace's reader could not start: %s", msg ? msg : "it said something else");
        free(msg);
        return rc;
    }
    snap_reader_set_configured(k->rd);
    return 0;
}

/* ---- what the reader found -------------------------------------------------------- */

/* A path as the reader sends it: relative, no empty, "." or ".."
 * component, no leading or doubled slash. */
static bool path_ok(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *c = p; *c;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c = slash ? slash + 1 : c + n;
        if (slash && !*c)
            return false;
    }
    return true;
}

/* A nested repository's state as the reader sent it: every string ends
 * inside its field, the hook count is in range. */
static bool gitdir_from_wire(const unsigned char *data, size_t len, snap_gitdir *g)
{
    if (len != sizeof *g)
        return false;
    memcpy(g, data, sizeof *g);
    g->head[sizeof g->head - 1] = '\0';
    g->config_sha[sizeof g->config_sha - 1] = '\0';
    g->hooks_path[sizeof g->hooks_path - 1] = '\0';
    if (g->n_hooks < 0 || g->n_hooks > SNAP_MAX_HOOKS)
        return false;
    for (int i = 0; i < g->n_hooks; i++) {
        g->hooks[i].name[sizeof g->hooks[i].name - 1] = '\0';
        g->hooks[i].sha[sizeof g->hooks[i].sha - 1] = '\0';
    }
    g->found = g->found != 0;
    g->valid = g->valid != 0;
    return true;
}

/* The gitlink id of a nested repository: its HEAD; one made up from its
 * config and hooks when it has none (unborn, or no repository at all), so
 * that what changes there still shows. */
static void gitlink_id(const snap_gitdir *g, git_oid *out)
{
    if (g->head[0] && git_oid_fromstr(out, g->head) == 0)
        return;
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "corral: a .git without a HEAD\nconfig %s\n", g->config_sha);
    for (int i = 0; i < g->n_hooks; i++)
        buf_printf(&b, "hook %s %o %s\n", g->hooks[i].name, g->hooks[i].mode, g->hooks[i].sha);
    git_odb_hash(out, b.data ? b.data : "", b.len, GIT_OBJECT_BLOB);
    buf_free(&b);
}

static void add_gitlink(snap_store *st, snap_meta *meta, const char *rel, const snap_gitdir *g)
{
    snap_meta_repo *r = snap_meta_add_repo(meta, rel);
    if (r)
        r->git = *g;
    git_index_entry e;
    memset(&e, 0, sizeof e);
    e.path = rel;
    e.mode = GIT_FILEMODE_COMMIT;
    gitlink_id(g, &e.id);
    if (git_index_add(st->index, &e) < 0) {
        snap_meta_add_invalid(meta, rel);
        git_error_clear();
    }
}

static void forget(snap_store *st, const char *path)
{
    st->forget = xrealloc(st->forget, (st->n_forget + 1) * sizeof *st->forget);
    st->forget[st->n_forget++] = xstrdup(path);
}

static void entry_from_stat(git_index_entry *e, const char *path, const snap_wire_stat *s)
{
    memset(e, 0, sizeof *e);
    e->path = path;
    e->mode = s->mode;
    e->file_size = (uint32_t)s->size;
    e->mtime.seconds = (int32_t)(s->mtime_ns / 1000000000);
    e->mtime.nanoseconds = (uint32_t)(s->mtime_ns % 1000000000);
    e->ctime.seconds = (int32_t)(s->ctime_ns / 1000000000);
    e->ctime.nanoseconds = (uint32_t)(s->ctime_ns % 1000000000);
    e->dev = (uint32_t)s->dev;
    e->ino = (uint32_t)s->ino;
    e->uid = s->uid;
    e->gid = s->gid;
}

/* A stored file into the index. */
static void index_add(talk *k, const git_index_entry *e)
{
    snap_store *st = k->st;
    if (git_index_add(st->index, e) < 0) {
        /* A name git cannot store: said in every snapshot, so the reader
         * must not take it as known. */
        git_error_clear();
        git_index_remove_bypath(st->index, e->path);
        git_error_clear();
        snap_meta_add_invalid(k->meta, e->path);
        forget(st, e->path);
    }
}

/* ---- many files: hashed on threads into one pack (snap_pack.h) ------------------- */

/* What the reader said about one path while files go into the pack, kept
 * to be applied in the order it was said once the pack is in place
 * (libgit2 adds an index entry only for an object it can find): a file
 * (its id filled in when the pack has it), or one left out of the index
 * (deleted, too large, invalid).  So the index and the record of what was
 * left out are built exactly as when each file is stored as it comes. */
typedef struct later {
    int type; /* SW_FILE, SW_DELETED, SW_LARGE, SW_INVALID */
    char *path;
    snap_wire_stat s;
    git_oid id;
    uint64_t size, mtime_ns;
    uint32_t mode;
} later;

static later *later_add(talk *k, int type, char *path)
{
    if (k->n_later == k->cap_later) {
        k->cap_later = k->cap_later ? k->cap_later * 2 : 1024;
        k->later = xrealloc(k->later, k->cap_later * sizeof *k->later);
    }
    later *l = xcalloc(1, sizeof *l);
    l->type = type;
    l->path = path;
    k->later[k->n_later++] = l;
    return l;
}

static void later_free(talk *k)
{
    for (size_t i = 0; i < k->n_later; i++) {
        free(k->later[i]->path);
        free(k->later[i]);
    }
    free(k->later);
    k->later = NULL;
    k->n_later = k->cap_later = 0;
}

/* A path left out of the index: deleted, too large (size, time, mode), or
 * invalid. */
static void leave_out(talk *k, int type, const char *path, uint64_t size, uint64_t mtime_ns, uint32_t mode)
{
    git_index_remove_bypath(k->st->index, path);
    git_error_clear();
    if (type == SW_LARGE)
        snap_meta_add_large(k->meta, path, size, (int64_t)mtime_ns, mode == 0100755 ? 0100755 : 0100644);
    else if (type == SW_INVALID)
        snap_meta_add_invalid(k->meta, path);
}

/* Stored: counted now, into the index when the pack is in place. */
static int pack_done(void *ctx, void *item, const git_oid *id)
{
    talk *k = ctx;
    later *l = item;
    git_oid_cpy(&l->id, id);
    atomic_fetch_add(&k->st->progress->done, 1);
    return 0;
}

/* The pack for a snapshot that stores total files, when it is worth one:
 * not with seeded packs (each object is checked against them), not for a
 * few files (loose objects are cheaper then). */
static void maybe_start_pack(talk *k, long total)
{
    snap_store *st = k->st;
    if (k->pack || st->n_seeded || total < st->pack_min)
        return;
    char objects[PATH_MAX], why[400];
    snprintf(objects, sizeof objects, "%s/objects", st->dir);
    k->pack = snap_pack_begin(objects, st->pack_threads, pack_done, k, why, sizeof why);
    k->packed = k->pack != NULL;
    /* Without it, the files are stored one by one as before. */
    if (!k->pack)
        fprintf(stderr, "corral: %s: %s\n", st->ws, why);
}

static int pack_file(talk *k, char *path, const snap_wire_stat *s, buf_t *data)
{
    later *l = later_add(k, SW_FILE, path);
    l->s = *s;
    char *bytes = data->data ? data->data : xmalloc(1);
    return snap_pack_add(k->pack, bytes, data->len, l, k->err, k->errlen);
}

/* The pack in place, then what was said while it was made applied in
 * order.  Before the tree is written, and before any message that is not
 * about one path read (a nested repository's gitlink replaces what was
 * below it). */
static int pack_finish(talk *k)
{
    if (!k->pack)
        return 0;
    snap_pack *p = k->pack;
    k->pack = NULL;
    int rc = snap_pack_finish(p, k->err, k->errlen);
    git_odb *odb = NULL;
    if (rc == 0 && ((rc = git_repository_odb(&odb, k->st->repo)) < 0 || (rc = git_odb_refresh(odb)) < 0))
        snprintf(k->err, k->errlen, "cannot read the new pack of %s: %s", k->st->ws, snap_git_error());
    git_odb_free(odb);
    for (size_t i = 0; rc == 0 && i < k->n_later; i++) {
        later *l = k->later[i];
        if (l->type == SW_FILE) {
            git_index_entry e;
            entry_from_stat(&e, l->path, &l->s);
            git_oid_cpy(&e.id, &l->id);
            index_add(k, &e);
        } else {
            leave_out(k, l->type, l->path, l->size, l->mtime_ns, l->mode);
        }
    }
    later_free(k);
    return rc < 0 ? -1 : 0;
}

/* A path left out now, or after the files before it when they go into a
 * pack. */
static void left_out(talk *k, int type, char *path, uint64_t size, uint64_t mtime_ns, uint32_t mode)
{
    if (!k->pack) {
        leave_out(k, type, path, size, mtime_ns, mode);
        free(path);
        return;
    }
    later *l = later_add(k, type, path);
    l->size = size;
    l->mtime_ns = mtime_ns;
    l->mode = mode;
}

/* A file's bytes, hashed here and stored; its stat as the reader checked
 * it is the index entry's. */
static int store_file(talk *k, snap_wire_in *head)
{
    snap_store *st = k->st;
    char *path = NULL;
    snap_wire_stat s;
    uint64_t len;
    if (!sw_get_str(head, &path, 4096) || !sw_get_stat(head, &s) || !sw_get_u64(head, &len) || !sw_done(head) ||
        !path_ok(path) || len > read_cap(st) ||
        (s.mode != 0100644 && s.mode != 0100755 && s.mode != 0120000)) {
        free(path);
        return fail(k, "the workspace's reader sent a malformed file");
    }
    buf_t data;
    buf_init(&data);
    buf_reserve(&data, (size_t)len);
    while (data.len < len) {
        snap_wire_in in;
        const unsigned char *bytes;
        size_t n;
        if (next(k, &in) < 0) {
            free(path);
            buf_free(&data);
            return -1;
        }
        bool ok = in.type == SW_BYTES && sw_get_bytes(&in, &bytes, &n) && sw_done(&in) && n <= len - data.len;
        if (ok)
            buf_append(&data, bytes, n);
        sw_in_free(&in);
        if (!ok) {
            free(path);
            buf_free(&data);
            return fail(k, "the workspace's reader sent a malformed file");
        }
    }
    if (k->pack)
        return pack_file(k, path, &s, &data);
    git_index_entry e;
    entry_from_stat(&e, path, &s);
    git_odb *odb = NULL;
    int rc = git_repository_odb(&odb, st->repo);
    const char *bytes = data.data ? data.data : "";
    if (rc == 0 && st->n_seeded) {
        /* What the seeded packs claim to have is checked before it is
         * taken as stored. */
        bool bad = false;
        rc = git_odb_hash(&e.id, bytes, data.len, GIT_OBJECT_BLOB);
        if (rc == 0 && !snap_seed_has(st, odb, &e.id, &bad)) {
            if (bad) {
                git_odb_free(odb);
                buf_free(&data);
                free(path);
                k->seed_bad = true;
                snprintf(k->err, k->errlen, "the pack files of the repository around %s do not hold what their "
                         "index claims: they are dropped and the next snapshot is taken without them", st->ws);
                return -1;
            }
            rc = git_odb_write(&e.id, odb, bytes, data.len, GIT_OBJECT_BLOB);
        }
    } else if (rc == 0) {
        rc = git_odb_write(&e.id, odb, bytes, data.len, GIT_OBJECT_BLOB);
    }
    git_odb_free(odb);
    buf_free(&data);
    if (rc < 0) {
        snprintf(k->err, k->errlen, "cannot store %s of %s: %s", path, st->ws, snap_git_error());
        free(path);
        return -1;
    }
    index_add(k, &e);
    atomic_fetch_add(&st->progress->done, 1);
    free(path);
    return 0;
}

/* Apply one message of the reader's answer.  1: the answer is complete. */
static int apply(talk *k, snap_wire_in *in, snap_meta *meta, snap_taken *out, int64_t *walk_start)
{
    snap_store *st = k->st;
    char *path = NULL, *text = NULL;
    uint64_t a = 0, b = 0;
    uint32_t mode = 0;
    uint8_t flag = 0;
    const unsigned char *raw;
    size_t rawlen;
    int rc = 0;
    switch (in->type) {
    case SW_PROGRESS:
        if (!sw_get_u64(in, &a) || !sw_get_u64(in, &b) || !sw_get_u8(in, &flag) || !sw_done(in))
            return fail(k, "the workspace's reader sent a malformed progress report");
        if (flag) {
            /* Reading and storing: b files to read, done counts what is
             * stored. */
            atomic_store(&st->progress->phase, SNAP_STORING);
            atomic_store(&st->progress->total, (long)b);
            maybe_start_pack(k, (long)b);
        } else {
            atomic_store(&st->progress->total, (long)a);
        }
        return 0;
    case SW_FILE:
        return store_file(k, in);
    case SW_DELETED:
    case SW_LARGE:
    case SW_INVALID:
    case SW_IGNORED: /* (only before the files) */
    case SW_CAPPED:
        break;
    default:
        if (pack_finish(k) < 0)
            return -1;
        break;
    }
    switch (in->type) {
    case SW_PACK: {
        char why[300];
        if (!sw_get_str(in, &path, 80) || !sw_done(in) || in->n_fds != 2)
            break;
        /* A pack that cannot be copied only means less seeding. */
        if (snap_seed_pack(st, path, in->fds[0], in->fds[1], why, sizeof why) < 0)
            fprintf(stderr, "corral: %s: %s\n", st->ws, why);
        free(path);
        return 0;
    }
    case SW_DELETED:
        if (!sw_get_str(in, &path, 4096) || !sw_done(in) || !path_ok(path))
            break;
        left_out(k, SW_DELETED, path, 0, 0, 0);
        return 0;
    case SW_GITLINK:
    case SW_AROUND: {
        snap_gitdir g;
        if (!sw_get_str(in, &path, 4096) || !sw_get_bytes(in, &raw, &rawlen) || !sw_done(in) ||
            !gitdir_from_wire(raw, rawlen, &g) || (in->type == SW_GITLINK ? !path_ok(path) : *path != '\0'))
            break;
        if (in->type == SW_GITLINK) {
            add_gitlink(st, meta, path, &g);
        } else {
            snap_meta_repo *r = snap_meta_add_repo(meta, "");
            if (r)
                r->git = g;
        }
        free(path);
        return 0;
    }
    case SW_LARGE:
        if (!sw_get_str(in, &path, 4096) || !sw_get_u64(in, &a) || !sw_get_u64(in, &b) || !sw_get_u32(in, &mode) ||
            !sw_done(in) || !path_ok(path))
            break;
        left_out(k, SW_LARGE, path, a, b, mode);
        return 0;
    case SW_IGNORED:
        if (!sw_get_str(in, &path, 4096) || !sw_done(in))
            break;
        snap_meta_add_ignored(meta, path);
        free(path);
        return 0;
    case SW_INVALID:
        if (!sw_get_str(in, &path, 4096) || !sw_get_str(in, &text, 200) || !sw_done(in) || !path_ok(path))
            break;
        left_out(k, SW_INVALID, path, 0, 0, 0);
        free(text);
        return 0;
    case SW_CAPPED:
        if (!sw_get_str(in, &path, 4096) || !sw_get_u64(in, &a) || !sw_done(in))
            break;
        snap_meta_add_capped(meta, path, (long)a);
        free(path);
        return 0;
    case SW_DONE:
        if (!sw_get_u8(in, &flag) || !sw_get_u64(in, &a) || !sw_get_u64(in, &b) || !sw_get_str(in, &text, 1000) ||
            !sw_done(in))
            break;
        *walk_start = (int64_t)a;
        if (flag) {
            out->refused = true;
            snprintf(k->err, k->errlen, "%s", text);
            rc = -1;
        } else {
            rc = 1;
        }
        free(text);
        return rc;
    case SW_ERROR:
        if (!sw_get_str(in, &text, 1000))
            break;
        rc = fail(k, "%s", text);
        free(text);
        return rc;
    default:
        break;
    }
    free(path);
    free(text);
    return fail(k, "the workspace's reader sent a malformed message ('%c')",
                in->type >= 0x20 && in->type < 0x7f ? in->type : '?');
}

/* Ask the reader what changed and apply it to the index.  0 with the
 * answer applied, 1 when nothing changed (the dirty bit), -1 with err. */
static int ask(talk *k, bool force, bool allowed, snap_meta *meta, snap_taken *out, int64_t *walk_start)
{
    snap_store *st = k->st;
    if (!snap_reader_configured(k->rd) && configure_reader(k, allowed) < 0)
        return -1;
    sw_begin(&k->out, SW_TAKE);
    sw_u8(&k->out, force);
    sw_u8(&k->out, !st->latest[0]);
    sw_u8(&k->out, snap_seed_wanted(st));
    sw_u8(&k->out, !st->uncapped_next);
    st->uncapped_next = false;
    /* Names the index refused last time: the reader reads them again, so
     * every snapshot says they were not captured. */
    sw_u32(&k->out, (uint32_t)st->n_forget);
    for (size_t i = 0; i < st->n_forget; i++) {
        sw_str(&k->out, st->forget[i]);
        free(st->forget[i]);
    }
    st->n_forget = 0;
    if (send_frame(k) < 0)
        return -1;
    for (;;) {
        snap_wire_in in;
        if (next(k, &in) < 0)
            return -1;
        if (in.type == SW_CLEAN) {
            bool ok = sw_done(&in) && st->latest[0];
            sw_in_free(&in);
            return ok ? 1 : fail(k, "the workspace's reader said nothing changed before the first snapshot");
        }
        int rc = apply(k, &in, meta, out, walk_start);
        sw_in_free(&in);
        if (rc > 0 && pack_finish(k) < 0)
            rc = -1;
        if (rc != 0)
            return rc > 0 ? 0 : -1;
    }
}

static int make_commit(snap_store *st, const git_oid *tree_id, const char *message, git_oid *out, char *err,
                       size_t errlen)
{
    git_tree *tree = NULL;
    git_signature *sig = NULL;
    int rc = git_tree_lookup(&tree, st->repo, tree_id);
    if (rc == 0)
        rc = git_signature_now(&sig, "corral", "snapshot@corral.invalid");
    if (rc == 0)
        rc = git_commit_create(out, st->repo, NULL, sig, sig, "UTF-8", message, tree, 0, NULL);
    if (rc == 0)
        rc = git_reference_create(NULL, st->repo, "refs/snap/latest", out, 1, NULL) < 0 ? -1 : 0;
    if (rc < 0)
        snprintf(err, errlen, "cannot record the snapshot of %s: %s", st->ws, snap_git_error());
    git_signature_free(sig);
    git_tree_free(tree);
    return rc;
}

/* The latest snapshot's tree and message, to tell whether anything changed. */
static bool same_as_latest(snap_store *st, const git_oid *tree, const char *message)
{
    git_oid id;
    git_commit *c = NULL;
    if (!st->latest[0] || git_oid_fromstr(&id, st->latest) < 0 || git_commit_lookup(&c, st->repo, &id) < 0)
        return false;
    bool same = git_oid_equal(git_commit_tree_id(c), tree) && strcmp(git_commit_message(c), message) == 0;
    git_commit_free(c);
    return same;
}

int snap_take(snap_store *st, bool force, bool allowed, snap_taken *out)
{
    memset(out, 0, sizeof *out);
    double t0 = now_sec();
    if (st->owns_reader && st->reader && snap_reader_failed(st->reader)) {
        /* A program's own reader (the server's queue replaces its own). */
        snap_reader_stop(st->reader);
        st->reader = NULL;
        st->owns_reader = false;
        if (snap_store_start_reader(st, out->error, sizeof out->error) < 0)
            return -1;
    }
    if (!st->reader) {
        snprintf(out->error, sizeof out->error, "snapshot of %s incomplete: no reader of the workspace is running",
                 st->ws);
        return -1;
    }
    atomic_store(&st->progress->done, 0);
    atomic_store(&st->progress->total, 0);
    atomic_store(&st->progress->phase, SNAP_SCANNING);
    talk k = {.st = st, .rd = st->reader, .fd = snap_reader_fd(st->reader), .err = out->error,
              .errlen = sizeof out->error};
    sw_begin(&k.out, 0);
    snap_meta meta;
    memset(&meta, 0, sizeof meta);
    int64_t walk_start = 0;
    bool first = !st->latest[0];
    k.meta = &meta;
    int rc = ask(&k, force || st->force_next, allowed, &meta, out, &walk_start);
    if (k.pack) {
        /* Stopped half way: none of its objects is named anywhere now. */
        snap_pack_abort(k.pack, NULL);
        k.pack = NULL;
    }
    later_free(&k);
    if (rc >= 0)
        st->force_next = false;
    sw_out_free(&k.out);
    if (rc == 1) {
        snprintf(out->commit, sizeof out->commit, "%s", st->latest);
        snprintf(out->tree, sizeof out->tree, "%s", st->latest_tree);
        out->reused = true;
        out->files = (long)git_index_entrycount(st->index);
        out->seconds = now_sec() - t0;
        atomic_store(&st->progress->phase, SNAP_IDLE);
        snap_meta_free(&meta);
        return 0;
    }
    git_oid tree, commit;
    char *message = NULL;
    /* A first snapshot, or one that stored many files, writes many trees
     * (one per directory): as a pack of their own, not as loose files. */
    int trees = -1;
    if (rc == 0 && (first || k.packed) && (long)git_index_entrycount(st->index) >= st->pack_min) {
        char why[600];
        trees = snap_treepack_write(st, &tree, why, sizeof why);
        if (trees == -2) {
            snprintf(out->error, sizeof out->error, "%s", why);
            rc = -1;
        } else if (trees < 0) {
            fprintf(stderr, "corral: %s\n", why);
        }
    }
    if (rc == 0 && trees < 0 && git_index_write_tree(&tree, st->index) < 0) {
        snprintf(out->error, sizeof out->error, "cannot write the snapshot tree of %s: %s", st->ws,
                 snap_git_error());
        rc = -1;
    }
    if (rc == 0) {
        git_oid_tostr(out->tree, sizeof out->tree, &tree);
        snprintf(st->latest_tree, sizeof st->latest_tree, "%s", out->tree);
        message = snap_meta_format(&meta);
        if (same_as_latest(st, &tree, message)) {
            snprintf(out->commit, sizeof out->commit, "%s", st->latest);
            out->reused = true;
        } else if ((rc = make_commit(st, &tree, message, &commit, out->error, sizeof out->error)) == 0) {
            git_oid_tostr(st->latest, sizeof st->latest, &commit);
            snprintf(out->commit, sizeof out->commit, "%s", st->latest);
        }
    }
    /* The index last: the objects it names are written by now.  Its time
     * is the walk's start: what changed later than a second before it is
     * read again next time (snap_worker.c). */
    if (rc == 0 && git_index_write(st->index) < 0) {
        snprintf(out->error, sizeof out->error, "cannot write the snapshot index of %s: %s", st->ws,
                 snap_git_error());
        rc = -1;
    }
    if (rc == 0 && walk_start > 0) {
        char *ipath = xasprintf("%s/snap.index", st->dir);
        struct timespec times[2] = {{.tv_nsec = UTIME_OMIT},
                                    {.tv_sec = walk_start / 1000000000, .tv_nsec = walk_start % 1000000000}};
        utimensat(AT_FDCWD, ipath, times, AT_SYMLINK_NOFOLLOW);
        free(ipath);
    }
    out->seeded = st->n_seeded > 0 && rc == 0;
    if (k.seed_bad)
        snap_seed_abandon(st);
    else if (rc == 0)
        snap_seed_done(st);
    if (rc < 0) {
        /* What is in memory may be half applied: read the last good index
         * back, so the next snapshot starts from what is on disk; the
         * reader's copy of it is then wrong too, so a new reader starts
         * from the index. */
        git_index_read(st->index, 1);
        git_error_clear();
        if (first && !st->latest[0])
            git_index_clear(st->index);
        if (!out->refused)
            snap_reader_fail(st->reader, out->error[0] ? out->error : "the snapshot failed");
    }
    free(message);
    snap_meta_free(&meta);
    out->files = (long)git_index_entrycount(st->index);
    out->stored = atomic_load(&st->progress->done);
    out->seconds = now_sec() - t0;
    atomic_store(&st->progress->phase, SNAP_IDLE);
    return rc;
}

int snap_read_meta(snap_store *st, const char *commit, git_oid *tree_id, snap_meta *meta, char *err, size_t errlen)
{
    git_oid id;
    git_commit *c = NULL;
    memset(meta, 0, sizeof *meta);
    if (git_oid_fromstr(&id, commit) < 0 || git_commit_lookup(&c, st->repo, &id) < 0) {
        snprintf(err, errlen, "snapshot %.12s of %s cannot be read: %s (was it removed by corral gc?)", commit,
                 st->ws, snap_git_error());
        git_commit_free(c);
        return -1;
    }
    if (tree_id)
        git_oid_cpy(tree_id, git_commit_tree_id(c));
    snap_meta_parse(git_commit_message(c), meta);
    git_commit_free(c);
    return 0;
}

int snap_read(snap_store *st, const char *commit, git_tree **tree, snap_meta *meta, char *err, size_t errlen)
{
    git_oid tree_id;
    *tree = NULL;
    if (snap_read_meta(st, commit, &tree_id, meta, err, errlen) < 0)
        return -1;
    if (git_tree_lookup(tree, st->repo, &tree_id) < 0) {
        snprintf(err, errlen, "snapshot %.12s of %s cannot be read: %s (was it removed by corral gc?)", commit,
                 st->ws, snap_git_error());
        snap_meta_free(meta);
        memset(meta, 0, sizeof *meta);
        return -1;
    }
    return 0;
}
