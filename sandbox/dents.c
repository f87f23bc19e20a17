/* dents.c - see dents.h. */
#include "config.h"

#include "dents.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
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
