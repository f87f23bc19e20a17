/* dents.c - see dents.h. */
#include "config.h"

#include "dents.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DENTS_BUF (64 * 1024)
#define BUCKETS 4096
/* Names remembered in all; past it everything is forgotten (a workspace
 * that large is listed anew, as before). */
#define NAMES_MAX 250000

#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC 0xF2F52010
#endif

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* A remembered listing, packed: the names one after another, each ended
 * by its NUL, and their types (a few bytes a name, not an allocation). */
typedef struct listing {
    struct listing *next;
    dev_t dev;
    ino_t ino;
    struct timespec mtime, ctime;
    size_t n;
    unsigned char *types;
    char *names;
} listing;

static listing *buckets[BUCKETS];
static size_t names_kept;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t bucket_of(dev_t dev, ino_t ino)
{
    return (size_t)((((uint64_t)dev * 0x9E3779B97F4A7C15ull) ^ (uint64_t)ino) % BUCKETS);
}

static bool same_time(struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void unpack(sb_dents *dst, const listing *l)
{
    dst->n = l->n;
    dst->v = l->n ? sb_alloc(l->n * sizeof *dst->v) : NULL;
    const char *p = l->names;
    for (size_t i = 0; i < l->n; i++) {
        dst->v[i].name = sb_strdup(p);
        dst->v[i].type = l->types[i];
        p += strlen(p) + 1;
    }
}

static void pack(listing *l, const sb_dents *src)
{
    size_t bytes = 0;
    for (size_t i = 0; i < src->n; i++)
        bytes += strlen(src->v[i].name) + 1;
    l->n = src->n;
    l->types = sb_alloc(src->n ? src->n : 1);
    l->names = sb_alloc(bytes ? bytes : 1);
    char *p = l->names;
    for (size_t i = 0; i < src->n; i++) {
        size_t len = strlen(src->v[i].name) + 1;
        memcpy(p, src->v[i].name, len);
        p += len;
        l->types[i] = src->v[i].type;
    }
}

static void listing_free(listing *l)
{
    free(l->types);
    free(l->names);
    free(l);
}

void sb_dents_free(sb_dents *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i].name);
    free(d->v);
    d->v = NULL;
    d->n = 0;
}

static void forget_all(void)
{
    for (size_t b = 0; b < BUCKETS; b++) {
        while (buckets[b]) {
            listing *l = buckets[b];
            buckets[b] = l->next;
            listing_free(l);
        }
    }
    names_kept = 0;
}

/* File systems that keep a directory's times exactly and locally.  The
 * answer is remembered for block devices (a device's file system does not
 * change while it is mounted, and mounted again it is the same); anonymous
 * device numbers (tmpfs, FUSE, overlay...) are given out again to other
 * mounts, so those are asked every time. */
static bool times_are_exact(int fd, dev_t dev)
{
    static struct {
        dev_t dev;
        bool exact;
    } known[16];
    static size_t n_known;
    for (size_t i = 0; i < n_known; i++)
        if (known[i].dev == dev)
            return known[i].exact;
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return false;
    bool exact;
    switch ((unsigned long)sf.f_type) {
    case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
        exact = true;
        break;
    default:
        exact = false;
        break;
    }
    if (major(dev) != 0 && n_known < sizeof known / sizeof *known) {
        known[n_known].dev = dev;
        known[n_known].exact = exact;
        n_known++;
    }
    return exact;
}

static int list_now(int fd, sb_dents *out)
{
    char *buf = malloc(DENTS_BUF);
    if (!buf)
        return -1;
    size_t cap = 0;
    out->v = NULL;
    out->n = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, DENTS_BUF);
        if (got < 0) {
            int e = errno;
            free(buf);
            sb_dents_free(out);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        for (long off = 0; off < got;) {
            const struct linux_dirent64 *d = (const struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
                continue;
            if (out->n == cap) {
                cap = cap ? cap * 2 : 32;
                out->v = sb_realloc(out->v, cap * sizeof *out->v);
            }
            out->v[out->n].name = sb_strdup(d->d_name);
            out->v[out->n].type = d->d_type;
            out->n++;
        }
    }
    free(buf);
    return 0;
}

bool sb_dir_empty(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[1024] __attribute__((aligned(8)));
    bool empty = true;
    long got;
    while (empty && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; empty && off < got;) {
            const struct linux_dirent64 *d = (const struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            empty = strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0;
        }
    }
    close(fd);
    return empty;
}

int sb_dents_read(int fd, sb_dents *out)
{
    struct stat before;
    bool memo = fstat(fd, &before) == 0 && S_ISDIR(before.st_mode);
    if (memo) {
        pthread_mutex_lock(&lock);
        memo = times_are_exact(fd, before.st_dev);
        pthread_mutex_unlock(&lock);
    }
    size_t b = memo ? bucket_of(before.st_dev, before.st_ino) : 0;
    if (memo) {
        pthread_mutex_lock(&lock);
        for (listing *l = buckets[b]; l; l = l->next) {
            if (l->dev != before.st_dev || l->ino != before.st_ino)
                continue;
            bool fresh = same_time(l->mtime, before.st_mtim) && same_time(l->ctime, before.st_ctim);
            if (fresh)
                unpack(out, l);
            pthread_mutex_unlock(&lock);
            if (fresh)
                return 0;
            goto read; /* changed: listed anew, and the old listing replaced below */
        }
        pthread_mutex_unlock(&lock);
    }
read:
    if (list_now(fd, out) < 0)
        return -1;
    if (!memo)
        return 0;
    /* Kept only when the directory did not change while it was listed and
     * had settled before. */
    struct stat after;
    if (fstat(fd, &after) < 0 || !same_time(after.st_mtim, before.st_mtim) ||
        !same_time(after.st_ctim, before.st_ctim) || !sb_times_settled(&after))
        return 0;
    pthread_mutex_lock(&lock);
    listing **pp = &buckets[b];
    while (*pp && ((*pp)->dev != after.st_dev || (*pp)->ino != after.st_ino))
        pp = &(*pp)->next;
    if (*pp) {
        listing *old = *pp;
        *pp = old->next;
        names_kept -= old->n;
        listing_free(old);
    }
    if (names_kept + out->n > NAMES_MAX)
        forget_all();
    listing *l = sb_alloc(sizeof *l);
    l->dev = after.st_dev;
    l->ino = after.st_ino;
    l->mtime = after.st_mtim;
    l->ctime = after.st_ctim;
    pack(l, out);
    l->next = buckets[b];
    buckets[b] = l;
    names_kept += out->n;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* ---- what the searches use: filtered listings, watched in the server ---- */

/* Could a search act on this entry?  See dents.h. */
static bool searched(const sb_dent *d)
{
    if (d->type == DT_DIR || d->type == DT_LNK || d->type == DT_UNKNOWN || d->name[0] == '.')
        return true;
    return strcmp(d->name, "HEAD") == 0 || strcmp(d->name, "objects") == 0 || strcmp(d->name, "refs") == 0;
}

/* Types made known (fstatat where getdents did not say) and the entries no
 * search acts on dropped. */
static void settle(int fd, sb_dents *d)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->n; i++) {
        sb_dent e = d->v[i];
        if (e.type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(fd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                e.type = S_ISDIR(st.st_mode)   ? DT_DIR
                         : S_ISLNK(st.st_mode) ? DT_LNK
                         : S_ISREG(st.st_mode) ? DT_REG
                                               : DT_UNKNOWN;
        }
        if (searched(&e))
            d->v[kept++] = e;
        else
            free(e.name);
    }
    d->n = kept;
}

static int open_listable(const char *path)
{
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

/* A watched listing (packed as listing's). */
typedef struct watched {
    struct watched *next_path, *next_wd;
    char *path;
    int wd;
    dev_t dev;
    ino_t ino;
    size_t n;
    unsigned char *types;
    char *names;
} watched;

static struct {
    bool on;
    int fd; /* the inotify instance, or -1 */
    watched *by_path[BUCKETS], *by_wd[BUCKETS];
    size_t names, count;
} W = {.fd = -1};

#define WATCH_MASK                                                                                                     \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static size_t path_bucket(const char *path)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % BUCKETS);
}

static size_t wd_bucket(int wd)
{
    return (size_t)((unsigned)wd % BUCKETS);
}

static void watched_unlink(watched *w)
{
    watched **pp = &W.by_path[path_bucket(w->path)];
    while (*pp && *pp != w)
        pp = &(*pp)->next_path;
    if (*pp)
        *pp = w->next_path;
    pp = &W.by_wd[wd_bucket(w->wd)];
    while (*pp && *pp != w)
        pp = &(*pp)->next_wd;
    if (*pp)
        *pp = w->next_wd;
    W.names -= w->n;
    W.count--;
    free(w->path);
    free(w->types);
    free(w->names);
    free(w);
}

/* Forget the listing of prefix and of every path below it ("/" and
 * everything below: all). */
static void forget_under(const char *prefix)
{
    if (W.count == 0)
        return; /* nothing kept: no walk of the buckets for each event */
    size_t len = strlen(prefix);
    bool all = strcmp(prefix, "/") == 0;
    for (size_t b = 0; b < BUCKETS; b++) {
        watched *w = W.by_path[b];
        while (w) {
            watched *next = w->next_path;
            if (all || (strncmp(w->path, prefix, len) == 0 && (w->path[len] == '\0' || w->path[len] == '/')))
                watched_unlink(w);
            w = next;
        }
    }
}

/* Everything forgotten, and the watches with it (a new instance). */
static void forget_everything(void)
{
    forget_under("/");
    if (W.fd >= 0)
        close(W.fd);
    W.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

/* Read the pending events and forget what they touch.  Returns whether
 * one of them concerned the watch wd (-1: none asked about). */
static bool drain(int wd)
{
    bool hit = false;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (W.fd >= 0) {
        ssize_t got = read(W.fd, buf, sizeof buf);
        if (got <= 0)
            break;
        for (ssize_t off = 0; off < got;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
            off += (ssize_t)(sizeof *ev + ev->len);
            if (ev->mask & IN_Q_OVERFLOW) {
                forget_everything();
                return true;
            }
            hit |= ev->wd == wd;
            bool self = (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) || ev->len == 0;
            /* Every path listed through this watch (a directory may have
             * been reached by two paths, bind mounts say). */
            for (;;) {
                watched *w = W.by_wd[wd_bucket(ev->wd)];
                while (w && w->wd != ev->wd)
                    w = w->next_wd;
                if (!w)
                    break;
                if (self) {
                    char *path = sb_strdup(w->path);
                    forget_under(path);
                    free(path);
                } else {
                    /* The entry named may be a tree moved, made or
                     * removed: what was listed below it goes; the
                     * directory's other subtrees have watches of their
                     * own. */
                    char *below = sb_printf("%s%s%s", w->path, strcmp(w->path, "/") == 0 ? "" : "/", ev->name);
                    forget_under(below);
                    free(below);
                    watched_unlink(w);
                }
            }
        }
    }
    return hit;
}

static watched *find_watched(const char *path)
{
    for (watched *w = W.by_path[path_bucket(path)]; w; w = w->next_path)
        if (strcmp(w->path, path) == 0)
            return w;
    return NULL;
}

static void unpack_watched(sb_dents *dst, const watched *w)
{
    listing l = {.n = w->n, .types = w->types, .names = w->names};
    unpack(dst, &l);
}

static void keep_watched(const char *path, int wd, const struct stat *st, const sb_dents *d)
{
    watched *old = find_watched(path);
    if (old)
        watched_unlink(old);
    if (W.names + d->n > NAMES_MAX)
        forget_everything();
    watched *w = sb_alloc(sizeof *w);
    memset(w, 0, sizeof *w);
    w->path = sb_strdup(path);
    w->wd = wd;
    w->dev = st->st_dev;
    w->ino = st->st_ino;
    listing l;
    pack(&l, d);
    w->n = l.n;
    w->types = l.types;
    w->names = l.names;
    w->next_path = W.by_path[path_bucket(path)];
    W.by_path[path_bucket(path)] = w;
    w->next_wd = W.by_wd[wd_bucket(wd)];
    W.by_wd[wd_bucket(wd)] = w;
    W.names += d->n;
    W.count++;
}

void sb_dents_watch(void)
{
    pthread_mutex_lock(&lock);
    if (!W.on) {
        W.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        W.on = W.fd >= 0;
    }
    pthread_mutex_unlock(&lock);
}

/* Listed now, and kept when the directory can be watched and did not
 * change while it was read.  Called with the lock held. */
static int list_and_watch(const char *path, int fd, sb_dents *out)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -1;
    int wd = -1;
    if (W.fd >= 0 && S_ISDIR(st.st_mode) && times_are_exact(fd, st.st_dev)) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        /* Through the descriptor: the watch is on the directory opened,
         * whatever its path names by now. */
        wd = inotify_add_watch(W.fd, self, WATCH_MASK);
    }
    if (list_now(fd, out) < 0)
        return -1;
    settle(fd, out);
    if (wd >= 0 && !drain(wd))
        keep_watched(path, wd, &st, out);
    return 0;
}

int sb_dents_at(const char *path, bool root, sb_dents *out)
{
    out->v = NULL;
    out->n = 0;
    pthread_mutex_lock(&lock);
    bool on = W.on;
    pthread_mutex_unlock(&lock);
    if (!on) {
        int fd = open_listable(path);
        if (fd < 0)
            return -1;
        int rc = sb_dents_read(fd, out);
        if (rc == 0)
            settle(fd, out);
        int e = errno;
        close(fd);
        errno = e;
        return rc;
    }
    pthread_mutex_lock(&lock);
    int fd = -1;
    if (root)
        drain(-1);
    watched *w = find_watched(path);
    if (w && root) {
        struct stat st;
        fd = open_listable(path);
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != w->dev || st.st_ino != w->ino) {
            forget_under(path);
            w = NULL;
        }
    }
    if (w) {
        unpack_watched(out, w);
        pthread_mutex_unlock(&lock);
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (fd < 0)
        fd = open_listable(path);
    int rc = fd < 0 ? -1 : list_and_watch(path, fd, out);
    int e = errno;
    pthread_mutex_unlock(&lock);
    if (fd >= 0)
        close(fd);
    errno = e;
    return rc;
}
