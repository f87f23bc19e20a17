/*
 * placeholders.c - host-side placeholders, shared and counted (see
 * placeholders.h for what it promises).
 *
 * Registry layout, in <runtime>/placeholders (mode 0700; an exclusive
 * flock on the directory itself is held around every make, adopt and
 * remove, so at rest it is empty):
 *   DEV.INO.NAME         one per placeholder corral made: NAME inside the
 *                        directory with device DEV and inode INO (hex); it
 *                        holds "dev ino" of the placeholder made, and every
 *                        launcher using that placeholder holds a shared flock
 *                        on it.  Keyed by the parent's identity, not its path:
 *                        a renamed parent keeps its entry.
 *
 * The flocks are the reference count: the kernel drops them when a launcher
 * dies, so a crash leaves at worst an empty placeholder that the next
 * sandbox using it adopts and its last user removes.
 */
#include "config.h"

#include "placeholders.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct held {
    int parent_fd;  /* O_PATH, the directory the placeholder is in */
    int entry_fd;   /* the registry entry, flocked shared */
    char *name;     /* the placeholder's name in parent_fd */
    char *entry;    /* the entry's name in the registry */
    char *content;  /* NULL: a directory */
} held;

struct sb_placeholder_hold {
    int registry_fd;
    held *v;
    size_t n;
};

/* The caller's uid as the user namespace above sees it (/proc/self/uid_map):
 * corral run inside `unshare -r` (uid 0 there) is still the same user as
 * outside, and its placeholders are the same directories: it must find the
 * same registry, not the real root's.  Its uid itself where the map says
 * nothing more (the initial namespace maps every uid to itself). */
static unsigned registry_uid(void)
{
    unsigned uid = (unsigned)geteuid();
    FILE *f = fopen("/proc/self/uid_map", "re");
    if (!f)
        return uid;
    unsigned long inside, outside, count;
    unsigned found = uid;
    while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3) {
        if (uid >= inside && uid - inside < count) {
            found = (unsigned)(outside + (uid - inside));
            break;
        }
    }
    fclose(f);
    return found;
}

char *sb_placeholder_home(void)
{
    /* Not $XDG_RUNTIME_DIR: a desktop shell has it, an ssh session, cron or
     * a service may not, and two launchers of one user that keep their
     * entries apart do not see each other's holds (placeholders.h). */
    struct stat st;
    bool shm = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 01777) == 01777;
    char *dir = sb_printf("%s/corral-%u", shm ? "/dev/shm" : "/tmp", registry_uid());
    /* Made now, before any plan is compiled, so that the deny list always
     * finds it there to mask (a missing path is not masked, and a sandbox
     * given /dev/shm could make it first).  Its checks are open_private_dir's,
     * when a launcher opens it. */
    (void)mkdir(dir, 0700); /* a failure is the launch's to report, which needs it */
    return dir;
}

char *sb_placeholder_registry(const char *home)
{
    return sb_printf("%s/placeholders", home);
}

/* mkdir (if missing) and open a directory of ours, private: not a symlink,
 * owned by us, mode 0700.  The fd, or -1 with err. */
static int open_private_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot open %s: %s (it must be a directory of yours, not a symlink)", path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s is owned by uid %u, not by you (uid %u): corral keeps the registry of its "
                 "placeholders there; remove it (another user may have made it)", path, (unsigned)st.st_uid,
                 (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if ((st.st_mode & 077) != 0 && fchmod(fd, 0700) < 0) {
        snprintf(err, errlen, "cannot make %s private (chmod 0700): %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The registry, its parent (sb_placeholder_home) made first. */
static int open_registry(const char *registry, char *err, size_t errlen)
{
    char *parent = sb_strdup(registry);
    char *slash = strrchr(parent, '/');
    int fd = -1;
    if (slash && slash != parent) {
        *slash = '\0';
        int pfd = open_private_dir(parent, err, errlen);
        if (pfd >= 0) {
            close(pfd);
            fd = open_private_dir(registry, err, errlen);
        }
    } else {
        snprintf(err, errlen, "placeholder registry '%s' is not an absolute path", registry);
    }
    free(parent);
    return fd;
}

/* Take the registry's lock: an exclusive flock on the registry directory
 * itself (through this open file description), so that the directory holds
 * nothing but the entries in use.  0, or -1 with err. */
static int lock_registry(int registry_fd, char *err, size_t errlen)
{
    while (flock(registry_fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "cannot lock the placeholder registry: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void unlock_registry(int registry_fd)
{
    flock(registry_fd, LOCK_UN);
}

static int open_parent_nofollow(const char *dir)
{
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
}

/* The "dev ino" an entry records; false if it records nothing readable. */
static bool entry_read(int fd, dev_t *dev, ino_t *ino)
{
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    uintmax_t d, i;
    if (sscanf(buf, "%jx %jx", &d, &i) != 2)
        return false;
    *dev = (dev_t)d;
    *ino = (ino_t)i;
    return true;
}

static int entry_write(int fd, const struct stat *st)
{
    char buf[64];
    int len = snprintf(buf, sizeof buf, "%jx %jx\n", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
    if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) != len)
        return -1;
    return 0;
}

/* Make the placeholder name in parent_fd; its stat in st.  0 or -1. */
static int make_one(int parent_fd, const char *name, const char *content, struct stat *st)
{
    if (!content) {
        if (mkdirat(parent_fd, name, 0555) < 0)
            return -1;
        return fstatat(parent_fd, name, st, AT_SYMLINK_NOFOLLOW);
    }
    int fd = openat(parent_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd < 0)
        return -1;
    size_t len = strlen(content);
    if (write(fd, content, len) != (ssize_t)len || fstat(fd, st) < 0) {
        int e = errno ? errno : EIO;
        close(fd);
        unlinkat(parent_fd, name, 0);
        errno = e;
        return -1;
    }
    close(fd);
    return 0;
}

/* Does the file name in parent_fd still hold exactly content? */
static bool same_content(int parent_fd, const char *name, const char *content)
{
    int fd = openat(parent_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t len = strlen(content);
    char *buf = sb_alloc(len + 2);
    ssize_t n = read(fd, buf, len + 1);
    close(fd);
    bool same = n == (ssize_t)len && memcmp(buf, content, len) == 0;
    free(buf);
    return same;
}

static void held_free(held *h)
{
    if (h->entry_fd >= 0)
        close(h->entry_fd);
    if (h->parent_fd >= 0)
        close(h->parent_fd);
    free(h->name);
    free(h->entry);
    free(h->content);
}

/* Remove h's placeholder if no other launcher holds it (the registry is
 * locked), then let go of it. */
static void release_one(int registry_fd, held *h)
{
    if (h->entry_fd >= 0 && flock(h->entry_fd, LOCK_EX | LOCK_NB) == 0) {
        dev_t dev;
        ino_t ino;
        struct stat st;
        if (entry_read(h->entry_fd, &dev, &ino) && fstatat(h->parent_fd, h->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_dev == dev && st.st_ino == ino) {
            if (!h->content && S_ISDIR(st.st_mode))
                unlinkat(h->parent_fd, h->name, AT_REMOVEDIR); /* fails harmlessly if no longer empty */
            else if (h->content && S_ISREG(st.st_mode) && same_content(h->parent_fd, h->name, h->content))
                unlinkat(h->parent_fd, h->name, 0);
        }
        unlinkat(registry_fd, h->entry, 0);
    }
    held_free(h);
}

/* Make or adopt one placeholder (the registry is locked).  0 with h filled
 * (h->entry_fd -1 when the path is not corral's and nothing is held), or -1
 * with err. */
static int acquire_one(int registry_fd, const sb_placeholder *ph, held *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->parent_fd = h->entry_fd = -1;
    const char *slash = strrchr(ph->path, '/');
    const char *name = slash ? slash + 1 : "";
    if (ph->path[0] != '/' || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        snprintf(err, errlen, "internal: placeholder path '%s' is not an absolute path to a name", ph->path);
        return -1;
    }
    char *dir = slash == ph->path ? sb_strdup("/") : sb_printf("%.*s", (int)(slash - ph->path), ph->path);
    h->parent_fd = open_parent_nofollow(dir);
    if (h->parent_fd < 0) {
        int e = errno;
        if (e == ELOOP)
            snprintf(err, errlen, "cannot make the read-only mount point %s: a directory on the way to it is now "
                     "a symlink (corral does not follow it); remove the symlink and retry", ph->path);
        else
            snprintf(err, errlen, "cannot make the read-only mount point %s: cannot open %s: %s", ph->path, dir,
                     strerror(e));
        free(dir);
        return -1;
    }
    free(dir);
    struct stat pst, st;
    if (fstat(h->parent_fd, &pst) < 0) {
        snprintf(err, errlen, "cannot stat the directory of %s: %s", ph->path, strerror(errno));
        return -1;
    }
    h->name = sb_strdup(name);
    h->content = ph->content ? sb_strdup(ph->content) : NULL;
    h->entry = sb_printf("%jx.%jx.%s", (uintmax_t)pst.st_dev, (uintmax_t)pst.st_ino, name);

    if (fstatat(h->parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) {
            snprintf(err, errlen, "cannot protect %s: it is a symlink now (the sandbox could re-point it); remove "
                     "it and retry", ph->path);
            return -1;
        }
        /* There already: another sandbox's placeholder (held too, so that
         * its end does not remove it under this one), or the user's own
         * (held by nobody, never removed). */
        int fd = openat(registry_fd, h->entry, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT) {
            snprintf(err, errlen, "cannot read the placeholder registry entry %s: %s", h->entry, strerror(errno));
            return -1;
        }
        dev_t dev;
        ino_t ino;
        if (fd >= 0 && entry_read(fd, &dev, &ino) && dev == st.st_dev && ino == st.st_ino) {
            if (flock(fd, LOCK_SH) < 0) {
                snprintf(err, errlen, "cannot hold the placeholder %s: %s", ph->path, strerror(errno));
                close(fd);
                return -1;
            }
            h->entry_fd = fd;
        } else if (fd >= 0) {
            /* An entry for an inode that is gone: drop it unless someone
             * still holds it (they will, when they end). */
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                unlinkat(registry_fd, h->entry, 0);
            close(fd);
        }
        return 0;
    }
    if (errno != ENOENT) {
        snprintf(err, errlen, "cannot inspect %s: %s", ph->path, strerror(errno));
        return -1;
    }
    if (make_one(h->parent_fd, name, ph->content, &st) < 0) {
        snprintf(err, errlen, "cannot create the read-only mount point %s: %s", ph->path, strerror(errno));
        return -1;
    }
    int fd = openat(registry_fd, h->entry, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_SH) < 0 || entry_write(fd, &st) < 0) {
        snprintf(err, errlen, "cannot record the placeholder %s in %s: %s", ph->path, h->entry, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlinkat(h->parent_fd, name, ph->content ? 0 : AT_REMOVEDIR);
        return -1;
    }
    h->entry_fd = fd;
    return 0;
}

int sb_placeholders_acquire(const char *registry, const sb_placeholder *ph, size_t n, sb_placeholder_hold **out,
                            char *err, size_t errlen)
{
    *out = NULL;
    if (n == 0)
        return 0;
    if (!registry) {
        snprintf(err, errlen, "internal: the plan names no placeholder registry");
        return -1;
    }
    int rfd = open_registry(registry, err, errlen);
    if (rfd < 0)
        return -1;
    if (lock_registry(rfd, err, errlen) < 0) {
        close(rfd);
        return -1;
    }
    sb_placeholder_hold *hold = sb_alloc(sizeof *hold);
    hold->registry_fd = rfd;
    hold->v = sb_alloc(n * sizeof *hold->v);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = acquire_one(rfd, &ph[i], &hold->v[hold->n], err, errlen);
        if (rc < 0)
            held_free(&hold->v[hold->n]);
        else if (hold->v[hold->n].entry_fd < 0)
            held_free(&hold->v[hold->n]); /* the user's own: nothing to hold */
        else
            hold->n++;
    }
    if (rc < 0) {
        for (size_t i = 0; i < hold->n; i++)
            release_one(rfd, &hold->v[i]);
        free(hold->v);
        free(hold);
        unlock_registry(rfd);
        close(rfd);
        return -1;
    }
    unlock_registry(rfd);
    *out = hold;
    return 0;
}

void sb_placeholders_release(sb_placeholder_hold *hold)
{
    if (!hold)
        return;
    char err[256];
    /* Without the lock (it cannot be taken: the registry's directory is
     * gone, say) the flocks are still dropped below; the placeholders then
     * stay, empty, for the next sandbox to adopt. */
    bool locked = lock_registry(hold->registry_fd, err, sizeof err) == 0;
    for (size_t i = 0; i < hold->n; i++) {
        if (locked)
            release_one(hold->registry_fd, &hold->v[i]);
        else
            held_free(&hold->v[i]);
    }
    close(hold->registry_fd); /* and with it the lock */
    free(hold->v);
    free(hold);
}
