/*
 * snap_revert.c - see snap_revert.h.
 */
#include "config.h"

#include "snap/snap_revert.h"

#include "snap/snap_meta.h"
#include "snap/snap_take.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void note(snap_revert_note **v, size_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(snap_revert_note **v, size_t *n, const char *path, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (snap_revert_note){xstrdup(path), xstrdup(text)};
}

static snap_revert_item *add_item(snap_revert_plan *p)
{
    p->items = xrealloc(p->items, (p->n_items + 1) * sizeof *p->items);
    snap_revert_item *it = &p->items[p->n_items++];
    memset(it, 0, sizeof *it);
    return it;
}

/* The entry at path in tree: mode 0 when there is none. */
static void entry_at(git_tree *tree, const char *path, unsigned *mode, git_oid *id)
{
    git_tree_entry *e = NULL;
    *mode = 0;
    memset(id, 0, sizeof *id);
    if (git_tree_entry_bypath(&e, tree, path) == 0) {
        *mode = git_tree_entry_filemode(e);
        git_oid_cpy(id, git_tree_entry_id(e));
        git_tree_entry_free(e);
    }
    git_error_clear();
}

static const char *kind(unsigned mode)
{
    switch (mode) {
    case 0: return "absent";
    case 040000: return "a directory";
    case 0120000: return "a symlink";
    case 0160000: return "a nested repository";
    default: return "a file";
    }
}

int snap_revert_plan_make(snap_store *st, const char *before, const char *after, const char *now,
                          snap_revert_plan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    git_tree *tb = NULL, *ta = NULL, *tn = NULL;
    snap_meta mb, ma, mn;
    memset(&mb, 0, sizeof mb);
    memset(&ma, 0, sizeof ma);
    memset(&mn, 0, sizeof mn);
    git_diff *diff = NULL;
    int rc = -1;
    if (snap_read(st, before, &tb, &mb, err, errlen) < 0 || snap_read(st, after, &ta, &ma, err, errlen) < 0 ||
        snap_read(st, now, &tn, &mn, err, errlen) < 0)
        goto out;
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
    snprintf(out->before, sizeof out->before, "%s", before);
    if (git_diff_tree_to_tree(&diff, st->repo, tb, ta, &o) < 0) {
        snprintf(err, errlen, "cannot compare snapshots of %s: %s", st->ws, snap_git_error());
        goto out;
    }
    size_t n = git_diff_num_deltas(diff);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        const char *path = d->new_file.path;
        unsigned bmode, amode, nmode;
        git_oid bid, aid, nid;
        entry_at(tb, path, &bmode, &bid);
        entry_at(ta, path, &amode, &aid);
        entry_at(tn, path, &nmode, &nid);
        if (bmode == 0160000 || amode == 0160000) {
            note(&out->skipped, &out->n_skipped, path, "a nested repository: reset or remove it yourself");
            continue;
        }
        if (nmode != amode || (amode && !git_oid_equal(&nid, &aid))) {
            note(&out->conflicts, &out->n_conflicts, path, "changed again after the command (now %s%s)",
                 kind(nmode), nmode == amode ? " with other content" : "");
            continue;
        }
        snap_revert_item *it = add_item(out);
        it->path = xstrdup(path);
        it->now_mode = amode;
        git_oid_cpy(&it->now_id, &aid);
        if (bmode) {
            it->action = REVERT_RESTORE;
            it->mode = bmode;
            git_oid_cpy(&it->id, &bid);
        } else {
            it->action = REVERT_REMOVE;
        }
    }
    /* Files over the size cap: their content was never kept. */
    for (size_t i = 0; i < ma.n_large; i++) {
        const snap_meta_large *a = &ma.large[i], *b = snap_meta_find_large(&mb, a->path);
        if (b && b->size == a->size && b->mtime_ns == a->mtime_ns && b->mode == a->mode)
            continue;
        unsigned bmode;
        git_oid bid;
        entry_at(tb, a->path, &bmode, &bid);
        const snap_meta_large *nl = snap_meta_find_large(&mn, a->path);
        if (!nl || nl->size != a->size || nl->mtime_ns != a->mtime_ns) {
            note(&out->conflicts, &out->n_conflicts, a->path, "changed again after the command");
        } else if (b || bmode) {
            note(&out->skipped, &out->n_skipped, a->path,
                 "too large to have been captured: its earlier content cannot be restored");
        } else {
            snap_revert_item *it = add_item(out);
            it->action = REVERT_REMOVE;
            it->path = xstrdup(a->path);
            it->large = true;
            it->size = a->size;
            it->mtime_ns = a->mtime_ns;
        }
    }
    for (size_t i = 0; i < mb.n_large; i++)
        if (!snap_meta_find_large(&ma, mb.large[i].path))
            note(&out->skipped, &out->n_skipped, mb.large[i].path,
                 "too large to have been captured: its earlier content cannot be restored");
    rc = 0;
out:
    git_diff_free(diff);
    git_tree_free(tb);
    git_tree_free(ta);
    git_tree_free(tn);
    snap_meta_free(&mb);
    snap_meta_free(&ma);
    snap_meta_free(&mn);
    if (rc < 0)
        snap_revert_plan_free(out);
    return rc;
}

/* ---- carrying it out ---------------------------------------------------------- */

/* The directory that holds rel, as a descriptor, every component opened
 * without following a symlink (and made when create says so); *leaf points
 * into rel.  -1 with errno. */
static int open_parent(int wsfd, const char *rel, bool create, const char **leaf)
{
    int fd = dup(wsfd);
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (!slash) {
            *leaf = p;
            if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
                close(fd);
                errno = EINVAL;
                return -1;
            }
            return fd;
        }
        char comp[NAME_MAX + 1];
        size_t n = (size_t)(slash - p);
        if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            close(fd);
            errno = EINVAL;
            return -1;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, comp, 0777) < 0 && errno != EEXIST) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
            }
            next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int e = errno;
        close(fd);
        if (next < 0) {
            errno = e;
            return -1;
        }
        fd = next;
        p = slash + 1;
    }
}

/* Is the live entry (dirfd, leaf) what the plan expects (mode and id)? */
static bool live_matches(int dirfd, const char *leaf, unsigned mode, const git_oid *id)
{
    struct stat sb;
    if (fstatat(dirfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        return mode == 0;
    if (S_ISLNK(sb.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, leaf, target, sizeof target);
        git_oid got;
        return mode == 0120000 && n >= 0 && git_odb_hash(&got, target, (size_t)n, GIT_OBJECT_BLOB) == 0 &&
               git_oid_equal(&got, id);
    }
    if (!S_ISREG(sb.st_mode) || (mode != 0100644 && mode != 0100755) || ((sb.st_mode & 0100) != 0) != (mode == 0100755))
        return false;
    int fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    /* Captured files are at most the size cap: read whole, hashed as git
     * hashes a blob. */
    buf_t data;
    buf_init(&data);
    int r = read_all(fd, SIZE_MAX, &data);
    close(fd);
    git_oid got;
    bool same = r == 0 && git_odb_hash(&got, data.data ? data.data : "", data.len, GIT_OBJECT_BLOB) == 0 &&
                git_oid_equal(&got, id);
    buf_free(&data);
    return same;
}

static bool large_matches(int dirfd, const char *leaf, const snap_revert_item *it)
{
    struct stat sb;
    return fstatat(dirfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
           (uint64_t)sb.st_size == it->size &&
           (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec == it->mtime_ns;
}

static int write_blob(snap_store *st, int dirfd, const char *leaf, const snap_revert_item *it)
{
    git_blob *blob = NULL;
    if (it->mode != 0100644 && it->mode != 0100755 && it->mode != 0120000) {
        errno = EINVAL;
        return -1;
    }
    if (git_blob_lookup(&blob, st->repo, &it->id) < 0) {
        git_error_clear();
        errno = ENOENT;
        return -1;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".corral-revert-%08x", random_range(0, UINT32_MAX));
    int rc;
    if (it->mode == 0120000) {
        char *target = xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
        rc = symlinkat(target, dirfd, tmp);
        free(target);
    } else {
        int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        it->mode == 0100755 ? 0777 : 0666);
        rc = fd < 0 ? -1 : 0;
        /* A snapshot keeps only the executable bit: a file that is there
         * keeps its other permissions (0640 stays 0640). */
        struct stat live;
        if (fd >= 0 && fstatat(dirfd, leaf, &live, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(live.st_mode)) {
            mode_t perms = live.st_mode & 0777;
            perms = it->mode == 0100755 ? perms | ((perms & 0444) >> 2) : perms & ~0111u;
            if (fchmod(fd, perms) < 0)
                rc = -1;
        }
        if (fd >= 0) {
            int w = write_all(fd, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
            if (w < 0) {
                errno = -w;
                rc = -1;
            }
            if (close(fd) < 0)
                rc = -1;
        }
    }
    git_blob_free(blob);
    if (rc == 0) {
        /* A directory in the way (the command made one where a file was)
         * goes first if it is empty by now. */
        struct stat sb;
        if (fstatat(dirfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
            unlinkat(dirfd, leaf, AT_REMOVEDIR);
        rc = renameat(dirfd, tmp, dirfd, leaf);
    }
    if (rc < 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        errno = e;
    }
    return rc;
}

/* Directories the removals emptied that the snapshot before did not
 * have: rmdir, deepest first, never anything not empty. */
static void prune_dirs(int wsfd, const char *rel)
{
    char *copy = xstrdup(rel);
    for (char *slash = strrchr(copy, '/'); slash; slash = strrchr(copy, '/')) {
        *slash = '\0';
        const char *leaf;
        int dirfd = open_parent(wsfd, copy, false, &leaf);
        if (dirfd < 0)
            break;
        int r = unlinkat(dirfd, leaf, AT_REMOVEDIR);
        close(dirfd);
        if (r < 0)
            break;
    }
    free(copy);
}

static int depth(const char *p)
{
    int d = 0;
    for (; *p; p++)
        d += *p == '/';
    return d;
}

static int by_depth_desc(const void *a, const void *b)
{
    return depth(((const snap_revert_item *)b)->path) - depth(((const snap_revert_item *)a)->path);
}

int snap_revert_apply(snap_store *st, snap_revert_plan *plan, char *err, size_t errlen)
{
    if (plan->n_conflicts) {
        snprintf(err, errlen, "%zu file%s changed again after the command: nothing was reverted",
                 plan->n_conflicts, plan->n_conflicts == 1 ? "" : "s");
        return -1;
    }
    int wsfd = open(st->ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wsfd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", st->ws, strerror(errno));
        return -1;
    }
    /* Removals first, deepest first (a directory made by the command
     * empties before a file where it was comes back), then restores,
     * shallowest first. */
    if (plan->n_items) /* (qsort may not be given NULL) */
        qsort(plan->items, plan->n_items, sizeof *plan->items, by_depth_desc);
    for (size_t i = 0; i < plan->n_items; i++) {
        snap_revert_item *it = &plan->items[i];
        if (it->action != REVERT_REMOVE)
            continue;
        const char *leaf;
        int dirfd = open_parent(wsfd, it->path, false, &leaf);
        if (dirfd < 0) {
            note(&plan->failed, &plan->n_failed, it->path, "cannot reach it: %s", strerror(errno));
            continue;
        }
        bool ok = it->large ? large_matches(dirfd, leaf, it) : live_matches(dirfd, leaf, it->now_mode, &it->now_id);
        if (!ok)
            note(&plan->failed, &plan->n_failed, it->path, "changed while reverting: left as it is");
        else if (unlinkat(dirfd, leaf, 0) < 0 && errno != ENOENT)
            note(&plan->failed, &plan->n_failed, it->path, "cannot remove it: %s", strerror(errno));
        close(dirfd);
        if (ok)
            prune_dirs(wsfd, it->path);
    }
    /* Only what the snapshot before held at that very path is written: the
     * store holds more (packs copied from the workspace's repository). */
    git_tree *before = NULL;
    git_commit *bc = NULL;
    git_oid bid;
    if (git_oid_fromstr(&bid, plan->before) < 0 || git_commit_lookup(&bc, st->repo, &bid) < 0 ||
        git_commit_tree(&before, bc) < 0)
        before = NULL;
    git_commit_free(bc);
    git_error_clear();
    for (size_t i = plan->n_items; i-- > 0;) {
        snap_revert_item *it = &plan->items[i];
        if (it->action != REVERT_RESTORE)
            continue;
        unsigned mode;
        git_oid id;
        if (!before) {
            note(&plan->failed, &plan->n_failed, it->path, "the snapshot before the command cannot be read: not restored");
            continue;
        }
        entry_at(before, it->path, &mode, &id);
        if (mode != it->mode || !git_oid_equal(&id, &it->id)) {
            note(&plan->failed, &plan->n_failed, it->path,
                 "not in the workspace's snapshot before the command as planned: not restored");
            continue;
        }
        const char *leaf;
        int dirfd = open_parent(wsfd, it->path, true, &leaf);
        if (dirfd < 0) {
            note(&plan->failed, &plan->n_failed, it->path, "cannot reach its directory: %s", strerror(errno));
            continue;
        }
        if (!live_matches(dirfd, leaf, it->now_mode, &it->now_id)) {
            struct stat sb;
            bool empty_dir = it->now_mode == 0 && fstatat(dirfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                             S_ISDIR(sb.st_mode);
            if (!empty_dir) {
                note(&plan->failed, &plan->n_failed, it->path, "changed while reverting: left as it is");
                close(dirfd);
                continue;
            }
        }
        if (write_blob(st, dirfd, leaf, it) < 0)
            note(&plan->failed, &plan->n_failed, it->path, "cannot restore it: %s", strerror(errno));
        close(dirfd);
    }
    git_tree_free(before);
    close(wsfd);
    return 0;
}

void snap_revert_plan_free(snap_revert_plan *p)
{
    for (size_t i = 0; i < p->n_items; i++)
        free(p->items[i].path);
    free(p->items);
    snap_revert_note *lists[3] = {p->conflicts, p->skipped, p->failed};
    size_t counts[3] = {p->n_conflicts, p->n_skipped, p->n_failed};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < counts[k]; i++) {
            free(lists[k][i].path);
            free(lists[k][i].reason);
        }
        free(lists[k]);
    }
    memset(p, 0, sizeof *p);
}

static json_t *notes_json(const snap_revert_note *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        char *p = sanitize_text(v[i].path, strlen(v[i].path), 4096);
        json_array_append_new(a, json_pack("{s:s, s:s}", "path", p, "reason", v[i].reason));
        free(p);
    }
    return a;
}

json_t *snap_revert_plan_json(const snap_revert_plan *p)
{
    json_t *actions = json_array();
    for (size_t i = 0; i < p->n_items; i++) {
        const snap_revert_item *it = &p->items[i];
        const char *what = it->action == REVERT_REMOVE ? "remove" : it->now_mode ? "restore" : "recreate";
        char *path = sanitize_text(it->path, strlen(it->path), 4096);
        json_array_append_new(actions, json_pack("{s:s, s:s}", "action", what, "path", path));
        free(path);
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "actions", actions, "conflicts", notes_json(p->conflicts, p->n_conflicts),
                     "skipped", notes_json(p->skipped, p->n_skipped), "failed", notes_json(p->failed, p->n_failed));
}
