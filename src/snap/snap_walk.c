/*
 * snap_walk.c - see snap_walk.h.
 */
#include "config.h"

#include "snap/snap_walk.h"

#include "snap/snap_gitdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A .gitignore larger than this is not read (git has no limit; nothing
 * real comes close, and a hostile one stays cheap). */
#define GITIGNORE_MAX (1u << 20)
/* Deeper than this the walk records the directory as not captured. */
#define DEPTH_MAX 256
/* Tries to read a file that changes under the reader. */
#define READ_TRIES 3

bool snap_walk_denied(const char *rel, char *const *deny, size_t n_deny)
{
    for (size_t i = 0; i < n_deny; i++) {
        size_t n = strlen(deny[i]);
        if (strncmp(rel, deny[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
            return true;
    }
    return false;
}

/* ---- opening without following ------------------------------------------------ */

static int open_chain(int rootfd, const char *rel, int flags)
{
    int fd = dup(rootfd);
    if (fd < 0)
        return -1;
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        char comp[NAME_MAX + 1];
        if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            close(fd);
            errno = EINVAL;
            return -1;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        int next = slash ? openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                         : openat(fd, comp, flags | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        if (next < 0) {
            errno = e;
            return -1;
        }
        if (!slash)
            return next;
        fd = next;
        p = slash + 1;
    }
}

int snap_open_beneath(int rootfd, const char *rel, int flags)
{
#ifdef SYS_openat2
    static int no_openat2;
    if (!__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return (int)fd;
        __atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED); /* an older kernel: one component at a time */
    }
#endif
    return open_chain(rootfd, rel, flags);
}

/* ---- reading one entry --------------------------------------------------------- */

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT) &&
           a->st_size == b->st_size;
}

static bool same_times(const struct stat *a, const struct stat *b)
{
    return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

typedef enum { TRY_DONE, TRY_AGAIN } try_result;

static try_result read_link(int pfd, const char *leaf, const struct stat *l, buf_t *data, struct stat *st,
                            snap_read_result *res)
{
    char target[PATH_MAX + 1];
    ssize_t n = readlinkat(pfd, leaf, target, sizeof target);
    if (n < 0)
        return TRY_AGAIN;
    struct stat after;
    if (fstatat(pfd, leaf, &after, AT_SYMLINK_NOFOLLOW) < 0 || !same_file(l, &after) || !same_times(l, &after) ||
        (after.st_size > 0 && (ssize_t)after.st_size != n))
        return TRY_AGAIN;
    buf_append(data, target, (size_t)n);
    *st = after;
    *res = SNAP_READ_OK;
    return TRY_DONE;
}

static try_result read_regular(int pfd, const char *leaf, const struct stat *l, buf_t *data, struct stat *st,
                               snap_read_result *res, const char **why)
{
    int fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EACCES || errno == EPERM) {
            *why = "cannot be read (permission denied)";
            *res = SNAP_READ_INVALID;
            return TRY_DONE;
        }
        return TRY_AGAIN; /* gone, or swapped for a symlink or a FIFO's peer */
    }
    struct stat before;
    if (fstat(fd, &before) < 0 || !S_ISREG(before.st_mode) || !same_file(l, &before)) {
        close(fd);
        return TRY_AGAIN;
    }
    size_t want = (size_t)before.st_size;
    buf_reserve(data, want + 1);
    /* One byte more than the size, to see a file that grew. */
    while (data->len <= want) {
        ssize_t n = read(fd, data->data + data->len, want + 1 - data->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        data->len += (size_t)n;
    }
    struct stat after;
    bool ok = data->len == want && fstat(fd, &after) == 0 && same_file(&before, &after) && same_times(&before, &after);
    close(fd);
    if (!ok) {
        buf_reset(data);
        return TRY_AGAIN;
    }
    *st = after;
    *res = SNAP_READ_OK;
    return TRY_DONE;
}

snap_read_result snap_read_entry(int rootfd, const char *rel, size_t max, buf_t *data, struct stat *st,
                                 const char **why)
{
    buf_reset(data);
    *why = NULL;
    const char *slash = strrchr(rel, '/');
    const char *leaf = slash ? slash + 1 : rel;
    int pfd;
    if (slash) {
        char *dir = xstrndup(rel, (size_t)(slash - rel));
        pfd = snap_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY);
        free(dir);
    } else {
        pfd = dup(rootfd);
    }
    if (pfd < 0) {
        if (errno == EACCES) {
            *why = "its directory cannot be read";
            return SNAP_READ_INVALID;
        }
        /* Gone, or a directory on the way is a symlink now: either way
         * nothing is at this path in the tree any more. */
        return SNAP_READ_GONE;
    }
    snap_read_result res = SNAP_READ_INVALID;
    *why = "kept changing while it was read";
    for (int i = 0; i < READ_TRIES; i++) {
        struct stat l;
        if (fstatat(pfd, leaf, &l, AT_SYMLINK_NOFOLLOW) < 0) {
            res = errno == ENOENT || errno == ENOTDIR ? SNAP_READ_GONE : SNAP_READ_INVALID;
            if (res == SNAP_READ_INVALID)
                *why = "cannot be examined";
            break;
        }
        try_result t;
        if (S_ISLNK(l.st_mode)) {
            t = read_link(pfd, leaf, &l, data, st, &res);
        } else if (S_ISREG(l.st_mode)) {
            if (max && (uint64_t)l.st_size > max) {
                *st = l;
                res = SNAP_READ_LARGE;
                break;
            }
            t = read_regular(pfd, leaf, &l, data, st, &res, why);
        } else {
            *why = S_ISDIR(l.st_mode) ? "became a directory while it was read" : "not a regular file";
            res = S_ISDIR(l.st_mode) ? SNAP_READ_GONE : SNAP_READ_INVALID;
            break;
        }
        if (t == TRY_DONE)
            break;
        res = SNAP_READ_INVALID;
        *why = "kept changing while it was read";
    }
    close(pfd);
    if (res == SNAP_READ_OK)
        *why = NULL;
    return res;
}

/* ---- the walk ------------------------------------------------------------------ */

typedef struct walker {
    const snap_walk_opts *o;
    snap_walk_result *r;
    long seen;
    bool stop;
} walker;

static void add(walker *w, char *path, snap_walk_kind kind, const struct stat *st, const char *why)
{
    snap_walk_result *r = w->r;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 256;
        r->v = xrealloc(r->v, r->cap * sizeof *r->v);
    }
    snap_walk_entry *e = &r->v[r->n++];
    memset(e, 0, sizeof *e);
    e->path = path;
    e->kind = kind;
    if (st)
        e->st = *st;
    e->why = why;
    if (kind == SWK_FILE && ++r->files > w->o->max_files && w->o->max_files > 0) {
        r->too_many = true;
        w->stop = true;
    }
    if (++w->seen % 512 == 0 && w->o->progress)
        w->o->progress(w->seen, w->o->user);
}

static char *join(const char *rel, const char *name)
{
    return *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
}

static void load_gitignore(walker *w, int dfd, const char *rel)
{
    int fd = openat(dfd, ".gitignore", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t len;
    char *text = snap_read_fd(fd, GITIGNORE_MAX, &len);
    close(fd);
    if (text)
        snap_ignore_add(w->o->ignore, rel, text, len);
    free(text);
}

static bool has_dotgit(int dfd)
{
    struct stat st;
    return fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool tracked(walker *w, const char *path, bool dir)
{
    return w->o->tracked && w->o->tracked(path, dir, w->o->user);
}

/* Walk one directory.  in_ignored: the directory itself is excluded and
 * walked only for what is tracked in it; nothing else there is listed. */
static void walk_dir(walker *w, int dfd, const char *rel, int depth, bool in_ignored)
{
    size_t mark = snap_ignore_mark(w->o->ignore);
    if (!in_ignored)
        load_gitignore(w, dfd, rel);
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        snap_ignore_pop(w->o->ignore, mark);
        return;
    }
    /* A dup shares the file offset: the workspace's own descriptor has
     * been read to its end by the walk before. */
    rewinddir(d);
    struct dirent *e;
    while (!w->stop && (e = readdir(d))) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0)
            continue; /* a repository's own git directory is not content */
        char *child = join(rel, name);
        struct stat st;
        if (snap_walk_denied(child, w->o->deny, w->o->n_deny) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            free(child);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            bool ignored = in_ignored || snap_ignore_match(w->o->ignore, child, true);
            bool walk_tracked = ignored && tracked(w, child, true);
            /* What is opened is what is walked: should the name have been
             * swapped since the fstatat, the directory there now. */
            int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                if (ignored && !in_ignored)
                    add(w, xasprintf("%s/", child), SWK_IGNORED, NULL, NULL);
                else if (!ignored && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                    add(w, xstrdup(child), SWK_INVALID, NULL, "a directory that cannot be read");
                free(child);
                continue;
            }
            struct stat cs;
            if (fstat(cfd, &cs) < 0)
                cs = st;
            if (has_dotgit(cfd)) {
                /* A repository someone made here, ignored or not. */
                add(w, child, SWK_GITLINK, &cs, NULL);
                child = NULL;
            } else if (ignored && !walk_tracked) {
                if (!in_ignored)
                    add(w, xasprintf("%s/", child), SWK_IGNORED, NULL, NULL);
            } else if (depth >= DEPTH_MAX) {
                add(w, child, SWK_INVALID, NULL, "too deep");
                child = NULL;
            } else {
                walk_dir(w, cfd, child, depth + 1, ignored);
            }
            close(cfd);
        } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            bool ignored = in_ignored || snap_ignore_match(w->o->ignore, child, false);
            if (!ignored || tracked(w, child, false)) {
                add(w, child, SWK_FILE, &st, NULL);
                child = NULL;
            } else if (!in_ignored) {
                add(w, child, SWK_IGNORED, NULL, NULL);
                child = NULL;
            }
        }
        /* FIFOs, sockets and devices are no content: left out, never opened. */
        free(child);
    }
    closedir(d);
    snap_ignore_pop(w->o->ignore, mark);
}

int snap_walk(int rootfd, const snap_walk_opts *o, snap_walk_result *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(rootfd, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    walker w = {.o = o, .r = out};
    walk_dir(&w, rootfd, "", 0, false);
    return 0;
}

void snap_walk_result_free(snap_walk_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].path);
    free(r->v);
    memset(r, 0, sizeof *r);
}
