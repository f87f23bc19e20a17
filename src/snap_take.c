/*
 * snap_take.c - see snap_take.h.
 */
#include "config.h"

#include "snap_take.h"

#include "snap_gitdir.h"
#include "snap_meta.h"
#include "snap_seed.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One delta of the index against the work tree, copied out of the diff. */
typedef struct change {
    git_delta_t status;
    char *path;
} change;

typedef struct take_ctx {
    snap_store *st;
    long base;      /* index entries when the scan started */
    long untracked; /* new files seen so far */
    bool first, allowed;
    bool too_many;
} take_ctx;

static int on_delta(const git_diff *diff, const git_diff_delta *d, const char *matched, void *payload)
{
    (void)diff;
    (void)matched;
    take_ctx *c = payload;
    atomic_fetch_add(&c->st->progress->total, 1);
    if (d->status == GIT_DELTA_UNTRACKED && ++c->untracked + c->base > c->st->conf.max_files && c->first &&
        !c->allowed) {
        c->too_many = true;
        return -1; /* stop the walk: it needs an opt-in */
    }
    return 0;
}

static bool builtin_dir_excluded(const char *name)
{
    static const char *const dirs[] = {"node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                                       ".pytest_cache", ".tox", ".cache", "target", ".next", ".nuxt",
                                       ".gradle", ".parcel-cache", ".terraform", ".direnv", NULL};
    for (const char *const *d = dirs; *d; d++)
        if (strcmp(name, *d) == 0)
            return true;
    return false;
}

/* Directories the dirty bit need not watch: excluded from snapshots. */
static bool skip_dir(const char *rel, void *user)
{
    snap_store *st = user;
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (builtin_dir_excluded(base))
        return true;
    char *dir = xasprintf("%s/", rel);
    int ignored = 0;
    if (git_ignore_path_is_ignored(&ignored, st->repo, dir) < 0)
        ignored = 0;
    free(dir);
    return ignored != 0;
}

static char *ws_path(snap_store *st, const char *rel)
{
    return *rel ? xasprintf("%s/%s", st->ws, rel) : xstrdup(st->ws);
}

/* The gitlink id of the nested repository at rel: its HEAD; one made up
 * from its config and hooks when it has none (unborn, or no repository at
 * all), so that what changes there still shows. */
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

static void add_gitlink(snap_store *st, snap_meta *meta, const char *rel)
{
    char *abs = ws_path(st, rel);
    snap_meta_repo *r = snap_meta_add_repo(meta, rel);
    snap_gitdir g;
    snap_gitdir_read(abs, &g);
    free(abs);
    if (r)
        r->git = g;
    git_index_entry e;
    memset(&e, 0, sizeof e);
    e.path = rel;
    e.mode = GIT_FILEMODE_COMMIT;
    gitlink_id(&g, &e.id);
    if (git_index_add(st->index, &e) < 0) {
        snap_meta_add_invalid(meta, rel);
        git_error_clear();
    }
}

/* A regular file past the size cap: recorded by size and time only. */
static bool too_large(snap_store *st, snap_meta *meta, const char *rel)
{
    if (!st->conf.max_file_size)
        return false;
    char *abs = ws_path(st, rel);
    struct stat sb;
    bool large = lstat(abs, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > st->conf.max_file_size;
    free(abs);
    if (large)
        snap_meta_add_large(meta, rel, (uint64_t)sb.st_size,
                            (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec,
                            (sb.st_mode & 0111) ? 0100755 : 0100644);
    return large;
}

static void add_file(snap_store *st, snap_meta *meta, const char *rel)
{
    if (too_large(st, meta, rel)) {
        git_index_remove_bypath(st->index, rel);
        return;
    }
    if (git_index_add_bypath(st->index, rel) < 0) {
        /* A name git cannot store (or the file went away meanwhile). */
        char *abs = ws_path(st, rel);
        struct stat sb;
        if (lstat(abs, &sb) == 0)
            snap_meta_add_invalid(meta, rel);
        free(abs);
        git_error_clear();
        git_index_remove_bypath(st->index, rel);
    }
    atomic_fetch_add(&st->progress->done, 1);
}

static size_t top_len(const char *path)
{
    const char *slash = strchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

/* New files per top-level directory ("" for the top itself): a directory
 * past the cap keeps all its new files out of this snapshot. */
typedef struct top_count {
    char *dir;
    long n;
} top_count;

static long *count_for(top_count **v, size_t *n, const char *path)
{
    size_t len = top_len(path);
    for (size_t i = 0; i < *n; i++)
        if (strlen((*v)[i].dir) == len && strncmp((*v)[i].dir, path, len) == 0)
            return &(*v)[i].n;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n] = (top_count){xstrndup(path, len), 0};
    return &(*v)[(*n)++].n;
}

static bool is_dotgit_path(const char *p)
{
    size_t n = strlen(p);
    return strcmp(p, ".git/") == 0 || strcmp(p, ".git") == 0 || (n >= 6 && strcmp(p + n - 6, "/.git/") == 0);
}

static bool has_dotgit(snap_store *st, const char *dir_rel)
{
    char *p = xasprintf("%s/%s.git", st->ws, dir_rel); /* dir_rel ends in '/' */
    struct stat sb;
    bool yes = lstat(p, &sb) == 0;
    free(p);
    return yes;
}

static int scan(snap_store *st, take_ctx *ctx, change **out, size_t *n_out, char *err, size_t errlen)
{
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_INCLUDE_IGNORED |
              GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_INCLUDE_TYPECHANGE_TREES | GIT_DIFF_UPDATE_INDEX |
              GIT_DIFF_DISABLE_PATHSPEC_MATCH | GIT_DIFF_SKIP_BINARY_CHECK;
    /* Nested repositories are never opened by libgit2 (their config,
     * their status): their HEAD is read by snap_gitdir.c. */
    o.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
    o.notify_cb = on_delta;
    o.payload = ctx;
    git_diff *diff = NULL;
    if (git_diff_index_to_workdir(&diff, st->repo, st->index, &o) < 0) {
        if (ctx->too_many)
            snprintf(err, errlen, "%s has more than %d files after excludes: snapshots of it need an opt-in "
                     "([snapshots] allow = %s in the config) or more excludes", st->ws, st->conf.max_files, st->ws);
        else
            snprintf(err, errlen, "cannot compare %s with its latest snapshot: %s", st->ws, snap_git_error());
        return -1;
    }
    size_t n = git_diff_num_deltas(diff);
    change *v = xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        v[i].status = d->status;
        v[i].path = xstrdup(d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path);
    }
    git_diff_free(diff);
    *out = v;
    *n_out = n;
    return 0;
}

/* The gitlinks already in the index whose repository's HEAD moved (or
 * whose hooks or config changed), and the repository around the workspace. */
static void refresh_repos(snap_store *st, snap_meta *meta)
{
    size_t n = git_index_entrycount(st->index);
    char **links = NULL;
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        const git_index_entry *e = git_index_get_byindex(st->index, i);
        if (e && e->mode == GIT_FILEMODE_COMMIT && !snap_meta_find_repo(meta, e->path)) {
            links = xrealloc(links, (nl + 1) * sizeof *links);
            links[nl++] = xstrdup(e->path);
        }
    }
    for (size_t i = 0; i < nl; i++) {
        char *abs = ws_path(st, links[i]);
        struct stat sb;
        if (lstat(abs, &sb) == 0 && S_ISDIR(sb.st_mode))
            add_gitlink(st, meta, links[i]);
        else
            git_index_remove_bypath(st->index, links[i]);
        free(abs);
        free(links[i]);
    }
    free(links);
    snap_enclosing enc;
    if (snap_gitdir_enclosing(st->ws, &enc)) {
        snap_meta_repo *r = snap_meta_add_repo(meta, "");
        if (r)
            snap_gitdir_read(enc.top, &r->git);
    }
}

static int apply(snap_store *st, take_ctx *ctx, change *v, size_t n, snap_meta *meta)
{
    (void)ctx;
    top_count *tops = NULL;
    size_t ntops = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].status == GIT_DELTA_UNTRACKED && v[i].path[strlen(v[i].path) - 1] != '/')
            (*count_for(&tops, &ntops, v[i].path))++;
    for (size_t i = 0; i < ntops; i++)
        if (tops[i].n > st->conf.max_new_files)
            snap_meta_add_capped(meta, tops[i].dir, tops[i].n);
    atomic_store(&st->progress->total, (long)n);
    atomic_store(&st->progress->done, 0);
    atomic_store(&st->progress->phase, SNAP_STORING);
    for (size_t i = 0; i < n; i++) {
        const char *p = v[i].path;
        size_t len = strlen(p);
        switch (v[i].status) {
        case GIT_DELTA_DELETED:
            git_index_remove_bypath(st->index, p);
            break;
        case GIT_DELTA_IGNORED:
            if (is_dotgit_path(p))
                break;
            if (p[len - 1] == '/' && has_dotgit(st, p)) {
                /* Only a .git in it (and ignored files): still a repository
                 * someone made here. */
                char *rel = xstrndup(p, len - 1);
                add_gitlink(st, meta, rel);
                free(rel);
            } else {
                snap_meta_add_ignored(meta, p);
            }
            break;
        case GIT_DELTA_UNTRACKED:
            if (p[len - 1] == '/') {
                char *rel = xstrndup(p, len - 1);
                if (has_dotgit(st, p))
                    add_gitlink(st, meta, rel);
                else
                    snap_meta_add_invalid(meta, rel);
                free(rel);
                break;
            }
            if (*count_for(&tops, &ntops, p) > st->conf.max_new_files)
                break;
            add_file(st, meta, p);
            break;
        case GIT_DELTA_MODIFIED:
        case GIT_DELTA_TYPECHANGE: {
            const git_index_entry *e = git_index_get_bypath(st->index, p, 0);
            if (e && e->mode == GIT_FILEMODE_COMMIT)
                break; /* refresh_repos reads it */
            char *abs = ws_path(st, p);
            struct stat sb;
            bool dir = lstat(abs, &sb) == 0 && S_ISDIR(sb.st_mode);
            free(abs);
            git_index_remove_bypath(st->index, p);
            if (!dir)
                add_file(st, meta, p);
            break;
        }
        default:
            break;
        }
    }
    for (size_t i = 0; i < ntops; i++)
        free(tops[i].dir);
    free(tops);
    return 0;
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

/* After seeding: every blob the index names must be in the store itself
 * (a file the user's repository kept loose is not in its packs). */
static void store_missing(snap_store *st, snap_meta *meta)
{
    git_odb *odb = NULL;
    if (git_repository_odb(&odb, st->repo) < 0)
        return;
    size_t n = git_index_entrycount(st->index);
    char **missing = NULL;
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        const git_index_entry *e = git_index_get_byindex(st->index, i);
        if (e && e->mode != GIT_FILEMODE_COMMIT && !git_odb_exists(odb, &e->id)) {
            missing = xrealloc(missing, (nm + 1) * sizeof *missing);
            missing[nm++] = xstrdup(e->path);
        }
    }
    git_odb_free(odb);
    for (size_t i = 0; i < nm; i++) {
        add_file(st, meta, missing[i]);
        free(missing[i]);
    }
    free(missing);
}

int snap_take(snap_store *st, bool force, bool allowed, snap_taken *out)
{
    memset(out, 0, sizeof *out);
    double t0 = now_sec();
    if (!force && st->latest[0] && !snap_watch_poll(&st->watch)) {
        snprintf(out->commit, sizeof out->commit, "%s", st->latest);
        snprintf(out->tree, sizeof out->tree, "%s", st->latest_tree);
        out->reused = true;
        out->files = (long)git_index_entrycount(st->index);
        return 0;
    }
    atomic_store(&st->progress->done, 0);
    atomic_store(&st->progress->total, 0);
    atomic_store(&st->progress->phase, SNAP_SCANNING);
    take_ctx ctx = {.st = st, .first = !st->latest[0], .allowed = allowed};
    if (ctx.first && git_index_entrycount(st->index) == 0)
        out->seeded = snap_seed(st) == 0;
    ctx.base = (long)git_index_entrycount(st->index);
    snap_watch_prepare(&st->watch, st->ws, skip_dir, st);
    change *v = NULL;
    size_t n = 0;
    int rc = scan(st, &ctx, &v, &n, out->error, sizeof out->error);
    out->refused = ctx.too_many;
    snap_meta meta;
    memset(&meta, 0, sizeof meta);
    if (rc == 0) {
        apply(st, &ctx, v, n, &meta);
        refresh_repos(st, &meta);
        if (out->seeded)
            store_missing(st, &meta);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
    git_oid tree, commit;
    char *message = NULL;
    if (rc == 0 && git_index_write_tree(&tree, st->index) < 0) {
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
    /* The index last: the objects it names are written by now. */
    if (rc == 0 && git_index_write(st->index) < 0) {
        snprintf(out->error, sizeof out->error, "cannot write the snapshot index of %s: %s", st->ws,
                 snap_git_error());
        rc = -1;
    }
    if (rc < 0) {
        /* What is in memory may be half applied: read the last good index
         * back, so the next snapshot starts from what is on disk. */
        git_index_read(st->index, 1);
        if (ctx.first && !st->latest[0])
            git_index_clear(st->index);
    }
    free(message);
    snap_meta_free(&meta);
    out->files = (long)git_index_entrycount(st->index);
    out->stored = atomic_load(&st->progress->done);
    out->seconds = now_sec() - t0;
    atomic_store(&st->progress->phase, SNAP_IDLE);
    if (rc < 0)
        st->watch.dirty = true;
    return rc;
}

int snap_read(snap_store *st, const char *commit, git_tree **tree, snap_meta *meta, char *err, size_t errlen)
{
    git_oid id;
    git_commit *c = NULL;
    *tree = NULL;
    memset(meta, 0, sizeof *meta);
    if (git_oid_fromstr(&id, commit) < 0 || git_commit_lookup(&c, st->repo, &id) < 0 ||
        git_commit_tree(tree, c) < 0) {
        snprintf(err, errlen, "snapshot %.12s of %s cannot be read: %s (was it removed by corral gc?)", commit,
                 st->ws, snap_git_error());
        git_commit_free(c);
        return -1;
    }
    snap_meta_parse(git_commit_message(c), meta);
    git_commit_free(c);
    return 0;
}
