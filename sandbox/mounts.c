/*
 * mounts.c - carrying out a plan's mounts inside the new mount namespace,
 * run by the session's init while it still holds its capabilities there.
 *
 * Layout during setup: a tmpfs becomes the root (pivot_root), the host's
 * root is reachable at /oldroot, and the sandbox's view is built at
 * /newroot.  Every path is opened with openat2(RESOLVE_NO_SYMLINKS) and
 * mounted through /oldroot/proc/self/fd/N, so a symlink planted between
 * compiling the plan and mounting it fails the setup instead of redirecting
 * a mount.  At the end /newroot becomes the root and the rest is detached.
 */
#include "config.h"

#include "mounts.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

#define BASE "/tmp"
#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"
/* In the staging root: where a home layer kept in memory is made before
 * its overlay is mounted (then unmounted: the overlay keeps it). */
#define LAYERTMP "/layer"

static int fail(char *err, size_t errlen, const char *what, const char *path, int e)
{
    snprintf(err, errlen, "%s %s: %s", what, path, strerror(e));
    return -1;
}

static int sys_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
    struct open_how how = {.flags = (unsigned long long)flags, .resolve = resolve};
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static int sys_mount_setattr(int dirfd, const char *path, unsigned flags, struct mount_attr *attr)
{
    return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, sizeof *attr);
}

/* Open root-relative path (no leading '/') below dirfd without following
 * any symlink; O_PATH. */
static int open_nofollow(int dirfd, const char *path)
{
    while (*path == '/')
        path++;
    if (*path == '\0')
        return (int)syscall(SYS_openat2, dirfd, ".", &(struct open_how){.flags = O_PATH | O_CLOEXEC},
                            sizeof(struct open_how));
    return sys_openat2(dirfd, path, O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* "/oldroot/proc/self/fd/N": mount(2) through it reaches exactly the
 * opened object. */
static void fd_path(int fd, char *buf, size_t len)
{
    snprintf(buf, len, OLDROOT "/proc/self/fd/%d", fd);
}

/* A fresh handle on the view's root: one opened before a mount on it
 * would still see the directory underneath. */
static int open_newroot(void)
{
    return open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The handle every mount point of the view is found through, opened once:
 * path lookups through it cross the mounts made below it since, so only a
 * mount on the view's root itself makes it stale (view_root_moved).  The
 * init is single-threaded and closes it before the view becomes the
 * root (O_CLOEXEC in any case). */
static int view_fd = -1;

static int view_root(void)
{
    if (view_fd < 0)
        view_fd = open_newroot();
    return view_fd;
}

static void view_root_moved(void)
{
    if (view_fd >= 0)
        close(view_fd);
    view_fd = -1;
}

/* Make the mount point dst (absolute, in the view) below the directory
 * newroot stands for, creating missing directories on the way; never
 * through a symlink.  link: dst is a symlink that is to be bound onto
 * itself, so its last component may (must) be one. */
static int make_mountpoint_in(int newroot, const char *dst, bool dir, bool link, char *err, size_t errlen)
{
    char *copy = sb_strdup(dst);
    int rc = 0;
    for (char *s = copy + 1; rc == 0; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        *s = '\0';
        bool last = saved == '\0';
        const char *rel = copy + 1;
        struct stat st;
        if (*rel && fstatat(newroot, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                rc = fail(err, errlen, "cannot inspect mount point", dst, errno);
            else if (!last || dir)
                rc = mkdirat(newroot, rel, 0755) < 0 ? fail(err, errlen, "cannot create mount point", dst, errno) : 0;
            else {
                int fd = openat(newroot, rel, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
                rc = fd < 0 ? fail(err, errlen, "cannot create mount point", dst, errno) : close(fd);
            }
        } else if (*rel && S_ISLNK(st.st_mode) && !(link && last)) {
            rc = fail(err, errlen, "mount point crosses a symlink:", dst, ELOOP);
        } else if (link && last && !S_ISLNK(st.st_mode)) {
            rc = fail(err, errlen, "a pinned symlink is no longer one:", dst, EINVAL);
        }
        *s = saved;
        if (last)
            break;
    }
    free(copy);
    return rc;
}

/* The mount point dst in the view, made if missing (as make_mountpoint_in
 * says), opened O_PATH without following a symlink: the fd, or -1 with
 * err.  Most mount points exist already (the host's tree is bound at the
 * root): one lookup that refuses any symlink on the way answers for them,
 * without a look at each directory of the path. */
static int open_mountpoint(const char *dst, bool dir, bool link, char *err, size_t errlen)
{
    int root = view_root();
    if (root < 0)
        return fail(err, errlen, "cannot open", NEWROOT, errno);
    int fd = open_nofollow(root, dst);
    if (fd < 0 && errno == ENOENT) {
        if (make_mountpoint_in(root, dst, dir, link, err, errlen) < 0)
            return -1;
        fd = open_nofollow(root, dst);
    }
    if (fd < 0)
        return fail(err, errlen, errno == ELOOP ? "mount point crosses a symlink:" : "cannot open mount point", dst,
                    errno);
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = fail(err, errlen, "cannot inspect mount point", dst, errno);
    else if (S_ISLNK(st.st_mode) && !link)
        rc = fail(err, errlen, "mount point crosses a symlink:", dst, ELOOP);
    else if (link && !S_ISLNK(st.st_mode))
        rc = fail(err, errlen, "a pinned symlink is no longer one:", dst, EINVAL);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int make_mountpoint(const char *dst, bool dir, bool link, char *err, size_t errlen)
{
    int fd = open_mountpoint(dst, dir, link, err, errlen);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* Open dst below the view's root without following symlinks; O_PATH. */
static int open_dst(const char *dst)
{
    int root = view_root();
    return root < 0 ? -1 : open_nofollow(root, dst);
}

static int set_attr(const char *path, unsigned set, unsigned clr, bool recursive)
{
    struct mount_attr a = {.attr_set = set, .attr_clr = clr};
    return sys_mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a);
}

/* The same on a mount whose root is a symlink (not followed). */
static int set_attr_link(const char *path, unsigned set)
{
    struct mount_attr a = {.attr_set = set};
    return sys_mount_setattr(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &a);
}

static int bind_one(int oldroot, const sb_mount *m, char *err, size_t errlen)
{
    int src = open_nofollow(oldroot, m->src);
    if (src < 0)
        return fail(err, errlen, "cannot open", m->src, errno);
    struct stat st;
    if (fstat(src, &st) < 0) {
        close(src);
        return fail(err, errlen, "cannot stat", m->src, errno);
    }
    if (m->link != S_ISLNK(st.st_mode)) {
        close(src);
        return fail(err, errlen, m->link ? "a pinned symlink is no longer one:" : "cannot bind a symlink:", m->src,
                    m->link ? EINVAL : ELOOP);
    }
    int dst = open_mountpoint(m->dst, S_ISDIR(st.st_mode), m->link, err, errlen);
    if (dst < 0) {
        close(src);
        return -1;
    }
    char s[64], d[64];
    fd_path(src, s, sizeof s);
    fd_path(dst, d, sizeof d);
    int rc = 0;
    if (mount(s, d, NULL, MS_BIND | MS_REC, NULL) < 0)
        rc = fail(err, errlen, "cannot bind", m->src, errno);
    close(src);
    close(dst);
    if (rc < 0)
        return rc;
    if (strcmp(m->dst, "/") == 0)
        view_root_moved();
    char *target = sb_printf(NEWROOT "%s", strcmp(m->dst, "/") == 0 ? "" : m->dst);
    /* Read-only and nosuid/nodev down the whole subtree.  Clearing
     * read-only fails on a mount the host made read-only: it stays so. */
    unsigned set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->rdonly ? MOUNT_ATTR_RDONLY : 0);
    if (m->link) {
        if (set_attr_link(target, set | MOUNT_ATTR_RDONLY) < 0)
            rc = fail(err, errlen, "cannot make the pinned symlink read-only:", m->dst, errno);
        free(target);
        return rc;
    }
    if (set_attr(target, set, 0, true) < 0)
        rc = fail(err, errlen, "cannot restrict the mount", m->dst, errno);
    if (rc == 0 && !m->rdonly)
        set_attr(target, 0, MOUNT_ATTR_RDONLY, false);
    free(target);
    return rc;
}

static int tmpfs_at(const char *dst, uint64_t size, unsigned mode, unsigned long flags, char *err, size_t errlen)
{
    if (make_mountpoint(dst, true, false, err, errlen) < 0)
        return -1;
    char *target = sb_printf(NEWROOT "%s", strcmp(dst, "/") == 0 ? "" : dst);
    char opts[64];
    if (size)
        snprintf(opts, sizeof opts, "mode=%o,size=%llu", mode, (unsigned long long)size);
    else
        snprintf(opts, sizeof opts, "mode=%o", mode);
    int rc = 0;
    if (mount("tmpfs", target, "tmpfs", flags, opts) < 0)
        rc = fail(err, errlen, "cannot mount a tmpfs on", dst, errno);
    else if (strcmp(dst, "/") == 0)
        view_root_moved();
    free(target);
    return rc;
}

/* Device nodes a command may use, bound from the host's /dev. */
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};

static int setup_dev(int oldroot, const char *dst, uint64_t shm_size, char *err, size_t errlen)
{
    /* No MS_NODEV here: the bound host nodes must stay usable. */
    if (tmpfs_at(dst, 1 << 20, 0755, MS_NOSUID | MS_NOEXEC, err, errlen) < 0)
        return -1;
    /* The tmpfs is new and ours: its entries are made straight in it. */
    int dev = open_dst(dst);
    if (dev < 0)
        return fail(err, errlen, "cannot open", dst, errno);
    int rc = 0;
    for (const char *const *n = dev_nodes; *n && rc == 0; n++) {
        char *host = sb_printf("/dev/%s", *n);
        int src = open_nofollow(oldroot, host);
        if (src >= 0) {
            close(src);
            int fd = openat(dev, *n, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0)
                rc = fail(err, errlen, "cannot create mount point", host, errno);
            else {
                close(fd);
                char *s = sb_printf(OLDROOT "%s", host), *d = sb_printf(NEWROOT "%s/%s", dst, *n);
                if (mount(s, d, NULL, MS_BIND, NULL) < 0)
                    rc = fail(err, errlen, "cannot bind", host, errno);
                else
                    set_attr(d, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, false);
                free(s);
                free(d);
            }
        }
        free(host);
    }
    if (rc == 0 && (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 0755) < 0))
        rc = fail(err, errlen, "cannot create mount points in", dst, errno);
    close(dev);
    if (rc < 0)
        return -1;
    char *pts = sb_printf("%s/pts", dst), *shm = sb_printf("%s/shm", dst);
    char *target = sb_printf(NEWROOT "%s", pts);
    if (mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
        rc = fail(err, errlen, "cannot mount a new devpts on", pts, errno);
    free(target);
    if (rc == 0)
        rc = tmpfs_at(shm, shm_size, 01777, MS_NOSUID | MS_NODEV, err, errlen);
    free(pts);
    free(shm);
    if (rc < 0)
        return -1;
    static const char *const links[][2] = {{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"},
                                           {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
                                           {"stderr", "/proc/self/fd/2"}};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        char *l = sb_printf("%s%s/%s", NEWROOT, dst, links[i][0]);
        if (symlink(links[i][1], l) < 0 && errno != EEXIST)
            rc = fail(err, errlen, "cannot create", l, errno);
        free(l);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int mask_file(const char *dst, char *err, size_t errlen)
{
    int fd = open_dst(dst);
    if (fd < 0)
        return fail(err, errlen, "cannot open", dst, errno);
    char d[64];
    fd_path(fd, d, sizeof d);
    int rc = 0;
    /* An empty file only its owner could read, and only with permission
     * bits it does not have: reads fail, writes hit a read-only mount. */
    if (mount("/empty", d, NULL, MS_BIND, NULL) < 0)
        rc = fail(err, errlen, "cannot mask", dst, errno);
    close(fd);
    if (rc == 0) {
        char *target = sb_printf(NEWROOT "%s", dst);
        if (set_attr(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0,
                     false) < 0)
            rc = fail(err, errlen, "cannot make the mask read-only:", dst, errno);
        free(target);
    }
    return rc;
}

/* Hide the denied file rel (relative to the home) in the layer whose
 * root is the directory fd root: unlinking it through the overlay leaves a
 * whiteout in the layer and never touches the real file.  Every sandbox
 * starts without it, a kept layer's copy included (a file denied now may
 * have been written before).  The path is resolved beneath the overlay's
 * root without symlinks or crossing a mount, so nothing but the layer is
 * ever changed.  0 when it is hidden (or absent), -1 when it must be
 * masked instead. */
static int hide_file(int root, const char *rel)
{
    char *parent = sb_strdup(rel);
    char *slash = strrchr(parent, '/');
    const char *base = slash ? slash + 1 : rel;
    if (slash)
        *slash = '\0';
    int dir = sys_openat2(root, slash ? parent : ".", O_PATH | O_DIRECTORY | O_CLOEXEC,
                          RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
    int e = errno;
    if (dir < 0) {
        free(parent);
        return e == ENOENT ? 0 : -1;
    }
    /* base points into parent: freed only after the unlink (a nested
     * file's name read from freed memory unlinked nothing, and the mask
     * was skipped all the same). */
    int rc = unlinkat(dir, base, 0);
    e = errno;
    close(dir);
    free(parent);
    return rc == 0 || e == ENOENT ? 0 : -1;
}

/* Lock files the host's version managers hold in the real home while they
 * rebuild their shims (pyenv rehash, run by every login shell of a user
 * with pyenv).  Seen through the layer, the host's lock is one the
 * sandbox's own rehash, which writes the layer's copy of the shims, waits
 * for: up to a minute (pyenv's rehash timeout) with the command silent,
 * and for ever while a stale lock lies in the real home.  Hidden in the
 * layer, the host's own lock stays untouched. */
static const char *const host_locks[] = {".pyenv/shims/.pyenv-shim", ".rbenv/shims/.rbenv-shim",
                                         ".nodenv/shims/.nodenv-shim", ".goenv/shims/.goenv-shim", NULL};

static void hide_host_locks(int root)
{
    for (const char *const *l = host_locks; *l; l++)
        hide_file(root, *l);
}

/* A throw-away home layer in memory (plan->layer_in_memory): a tmpfs of
 * this sandbox's own at at (a directory nothing else uses), as big as
 * /tmp may grow, with upper/ (mode: the home's, as upper/ is the home's
 * root in the sandbox) and work/ in it.  Nothing of it is on the host: it
 * goes with the sandbox's last mount.  0; or -1 with nothing left mounted,
 * when the kernel's tmpfs takes no user extended attributes (overlayfs in
 * a user namespace keeps the marks of hidden files and opaque directories
 * in them; Linux 6.6 has them): the home then stays read-only, as for any
 * layer the kernel refuses (`corral doctor` names the fix). */
static int mount_memory_layer(const char *at, const sb_plan *plan, mode_t home_mode)
{
    char opts[64];
    if (plan->limits.tmp_size)
        snprintf(opts, sizeof opts, "mode=0700,size=%llu", (unsigned long long)plan->limits.tmp_size);
    else
        snprintf(opts, sizeof opts, "mode=0700");
    if (mount("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return -1;
    char *upper = sb_printf("%s/upper", at), *work = sb_printf("%s/work", at);
    bool ok = mkdir(upper, 0700) == 0 && mkdir(work, 0700) == 0 && chmod(upper, home_mode & 07777) == 0 &&
              setxattr(upper, "user.corral-layer", "1", 1, 0) == 0 && removexattr(upper, "user.corral-layer") == 0;
    free(upper);
    free(work);
    if (!ok)
        umount2(at, MNT_DETACH);
    return ok ? 0 : -1;
}

/* The home layer: an overlay at the home's place in the view, the real
 * home (through the old root) read-only below, the layer the launcher
 * made above (or one in memory, made here).  The kernel may refuse it (no
 * overlayfs in user namespaces before Linux 5.11, an upper filesystem it
 * cannot use): the home then stays as the view shows it, read-only, and
 * its denied files masked.  -1 only for what must stop the setup. */
static int overlay_home(int oldroot, sb_plan *plan, const sb_mount *m, char *err, size_t errlen)
{
    if (!(plan->layer_path || plan->layer_in_memory) || !plan->layer_home || strcmp(plan->layer_home, m->dst) != 0)
        return 0;
    if (make_mountpoint(m->dst, true, false, err, errlen) < 0)
        return -1;
    int lower = open_nofollow(oldroot, m->src), upper = -1, work = -1, dst = open_dst(m->dst);
    bool in_memory = false;
    if (plan->layer_in_memory) {
        struct stat st;
        in_memory = lower >= 0 && fstat(lower, &st) == 0 && (mkdir(LAYERTMP, 0700) == 0 || errno == EEXIST) &&
                    mount_memory_layer(LAYERTMP, plan, st.st_mode) == 0;
        if (in_memory) {
            upper = open(LAYERTMP "/upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            work = open(LAYERTMP "/work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
    } else {
        char *upper_path = sb_printf("%s/upper", plan->layer_path),
             *work_path = sb_printf("%s/work", plan->layer_path);
        upper = open_nofollow(oldroot, upper_path);
        work = open_nofollow(oldroot, work_path);
        free(upper_path);
        free(work_path);
    }
    if (lower >= 0 && upper >= 0 && work >= 0 && dst >= 0) {
        char l[64], u[64], w[64], d[64];
        fd_path(lower, l, sizeof l);
        fd_path(upper, u, sizeof u);
        fd_path(work, w, sizeof w);
        fd_path(dst, d, sizeof d);
        /* A discarded layer is volatile: the overlay never syncs its upper
         * filesystem, which it otherwise does when it is unmounted (a full
         * sync of the file system the layer is on, with a disk flush, at
         * the end of every sandbox); its writes go with it anyway.  A
         * kept layer must survive a crash, so it syncs.  Kernels before
         * 5.10 know no volatile: the layer is then mounted as before. */
        char *opts = sb_printf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", l, u, w);
        /* (A layer in memory has nothing to sync: volatile changes nothing.) */
        if (plan->layer_mode == SB_HOME_DISCARD && !in_memory) {
            char *fast = sb_printf("%s,volatile", opts);
            plan->layer_mounted = mount("overlay", d, "overlay", MS_NOSUID | MS_NODEV, fast) == 0;
            free(fast);
        }
        if (!plan->layer_mounted)
            plan->layer_mounted = mount("overlay", d, "overlay", MS_NOSUID | MS_NODEV, opts) == 0;
        free(opts);
    }
    int fds[] = {lower, upper, work, dst};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* The overlay holds the layer's tmpfs (a private copy of its mount):
     * the staging root's copy goes. */
    if (in_memory)
        umount2(LAYERTMP, MNT_DETACH);
    if (!plan->layer_mounted)
        return 0;
    /* Denied files in the home: hidden in the layer where they can be, so
     * that a tool may write its own (vim's viminfo, a shell's history). */
    int root = open_dst(m->dst);
    struct statfs sf;
    if (root < 0 || fstatfs(root, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC) {
        if (root >= 0)
            close(root);
        return 0;
    }
    size_t hl = strlen(m->dst);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        sb_mount *h = &plan->mounts[i];
        if (h->kind == SB_M_MASK_FILE && h->hide_in_layer && strncmp(h->dst, m->dst, hl) == 0 && h->dst[hl] == '/')
            h->skip = hide_file(root, h->dst + hl + 1) == 0;
    }
    hide_host_locks(root);
    close(root);
    return 0;
}

/* The kernel knobs under /proc are read-only: a root caller is uid 0 in the
 * sandbox, and uid 0 without capabilities may still write some of them. */
static int protect_proc(const char *proc, char *err, size_t errlen)
{
    static const char *const knobs[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", NULL};
    for (const char *const *k = knobs; *k; k++) {
        char *p = sb_printf("%s/%s", proc, *k);
        struct stat st;
        int rc = 0;
        if (lstat(p, &st) == 0) {
            if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0 ||
                set_attr(p, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0, true) < 0)
                rc = fail(err, errlen, "cannot make read-only:", p, errno);
        }
        free(p);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A base's door to the home layers (mounts.h): the layers directory bound
 * where each command's init finds its layer and then unmounts it.  For
 * layers kept in memory only the empty directory: each command's init
 * mounts its own layer's tmpfs there. */
static int open_layer_door(int oldroot, const sb_plan *plan, char *err, size_t errlen)
{
    if (make_mountpoint(SB_LAYER_DOOR, true, false, err, errlen) < 0)
        return -1;
    if (plan->layer_in_memory)
        return 0;
    int src = open_nofollow(oldroot, plan->layer_dir), dst = open_dst(SB_LAYER_DOOR);
    int rc = 0;
    if (src < 0 || dst < 0)
        rc = fail(err, errlen, "cannot open", src < 0 ? plan->layer_dir : SB_LAYER_DOOR, errno);
    else {
        char sp[64], dp[64];
        fd_path(src, sp, sizeof sp);
        fd_path(dst, dp, sizeof dp);
        if (mount(sp, dp, NULL, MS_BIND, NULL) < 0)
            rc = fail(err, errlen, "cannot bind", plan->layer_dir, errno);
    }
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
    return rc;
}

int sb_mounts_apply(sb_plan *plan, bool base, char *err, size_t errlen)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return fail(err, errlen, "cannot make mounts private:", "/", errno);
    /* The staging root: a tmpfs on /tmp, pivoted to, with the host's root
     * moved to /oldroot. */
    if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
        return fail(err, errlen, "cannot mount the staging tmpfs on", BASE, errno);
    if (chdir(BASE) < 0 || mkdir(BASE NEWROOT, 0755) < 0 || mkdir(BASE OLDROOT, 0755) < 0)
        return fail(err, errlen, "cannot prepare", BASE, errno);
    int fd = open(BASE "/empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fail(err, errlen, "cannot prepare", BASE "/empty", errno);
    close(fd);
    if (syscall(SYS_pivot_root, BASE, BASE OLDROOT) < 0)
        return fail(err, errlen, "cannot pivot_root to", BASE, errno);
    if (chdir("/") < 0)
        return fail(err, errlen, "cannot enter", "/", errno);
    int oldroot = open(OLDROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (oldroot < 0)
        return fail(err, errlen, "cannot open", OLDROOT, errno);

    int rc = 0;
    for (size_t i = 0; i < plan->n_mounts && rc == 0; i++) {
        const sb_mount *m = &plan->mounts[i];
        switch (m->kind) {
        case SB_M_BIND:
            rc = bind_one(oldroot, m, err, errlen);
            break;
        case SB_M_TMPFS:
            rc = tmpfs_at(m->dst, m->size, m->mode, MS_NOSUID | MS_NODEV, err, errlen);
            break;
        case SB_M_DEV:
            rc = setup_dev(oldroot, m->dst, m->size, err, errlen);
            break;
        case SB_M_PROC:
            rc = make_mountpoint(m->dst, true, false, err, errlen);
            /* A base's holder has no pid namespace of its own: each
             * command mounts the proc of its own (sb_mounts_renew). */
            if (rc == 0 && !base) {
                char *target = sb_printf(NEWROOT "%s", m->dst);
                if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                    rc = fail(err, errlen, "cannot mount a fresh proc on", m->dst, errno);
                else
                    rc = protect_proc(target, err, errlen);
                free(target);
            }
            break;
        case SB_M_MASK_FILE:
            rc = m->skip ? 0 : mask_file(m->dst, err, errlen);
            break;
        case SB_M_OVERLAY: /* a base's view has none: each command mounts its own */
            rc = base ? 0 : overlay_home(oldroot, plan, m, err, errlen);
            break;
        }
    }
    if (rc == 0 && base && plan->layer_home && plan->layer_dir)
        rc = open_layer_door(oldroot, plan, err, errlen);
    /* Read-only tmpfs mounts (masks, an empty root) are sealed last, once
     * deeper mounts have made their mount points in them. */
    for (size_t i = 0; i < plan->n_mounts && rc == 0; i++) {
        const sb_mount *m = &plan->mounts[i];
        if (m->kind == SB_M_TMPFS && m->rdonly) {
            char *target = sb_printf(NEWROOT "%s", strcmp(m->dst, "/") == 0 ? "" : m->dst);
            if (set_attr(target, MOUNT_ATTR_RDONLY, 0, false) < 0)
                rc = fail(err, errlen, "cannot make read-only:", m->dst, errno);
            free(target);
        }
    }
    close(oldroot);
    view_root_moved();
    if (rc < 0)
        return rc;
    /* Make the view the root.  pivot_root(".", ".") stacks the old root on
     * top of the new one; detaching it leaves only the view, with no
     * writable directory needed inside it. */
    if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
        return fail(err, errlen, "cannot pivot_root into", "the sandbox view", errno);
    if (umount2(".", MNT_DETACH) < 0)
        return fail(err, errlen, "cannot detach", "the host's root", errno);
    if (chdir("/") < 0)
        return fail(err, errlen, "cannot enter", "/", errno);
    if (chdir(plan->cwd) < 0)
        return fail(err, errlen, "the working directory is not visible in the sandbox:", plan->cwd, errno);
    return 0;
}

/* ---- a command's own mounts in a copy of a pre-built view ----
 *
 * A pre-built sandbox (launch.h, sb_base) is a mount namespace whose view
 * is already made; a command started from it runs in a copy of that
 * namespace, and there gets fresh instances of everything a command may
 * write or see of others that is not the workspace's: a new tmpfs on each
 * writable tmpfs of the plan (/tmp), a new devpts and /dev/shm, a new proc
 * for its own pid namespace.  The home layer and the workspace are the
 * pre-built view's, shared (docs/sandbox.md, "Pre-built sandboxes"). */

static bool path_below(const char *path, const char *dir)
{
    if (strcmp(dir, "/") == 0)
        return strcmp(path, "/") != 0;
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static int sys_open_tree(int dirfd, const char *path, unsigned flags)
{
    return (int)syscall(SYS_open_tree, dirfd, path, flags);
}

static int sys_move_mount(int from_dirfd, const char *from, int to_dirfd, const char *to, unsigned flags)
{
    return (int)syscall(SYS_move_mount, from_dirfd, from, to_dirfd, to, flags);
}

/* The plan's mounts made after mounts[at] below its place, outermost only
 * (a recursive clone of one carries those below it), or -1 when one is a
 * pinned symlink (its mount point cannot be made in a fresh tmpfs). */
static ssize_t carried_mounts(const sb_plan *plan, size_t at, size_t *out)
{
    size_t n = 0;
    for (size_t j = at + 1; j < plan->n_mounts; j++) {
        const sb_mount *m = &plan->mounts[j];
        if (m->skip || !path_below(m->dst, plan->mounts[at].dst))
            continue;
        bool inner = false;
        for (size_t k = 0; k < n && !inner; k++)
            inner = strcmp(plan->mounts[out[k]].dst, m->dst) == 0 || path_below(m->dst, plan->mounts[out[k]].dst);
        if (inner)
            continue;
        if (m->link)
            return -1;
        out[n++] = j;
    }
    return (ssize_t)n;
}

bool sb_mounts_renewable(const sb_plan *plan)
{
    size_t *idx = sb_alloc((plan->n_mounts + 1) * sizeof *idx);
    bool ok = true;
    for (size_t i = 0; i < plan->n_mounts && ok; i++)
        if ((plan->mounts[i].kind == SB_M_TMPFS && !plan->mounts[i].rdonly) || plan->mounts[i].kind == SB_M_OVERLAY)
            ok = carried_mounts(plan, i, idx) >= 0;
    free(idx);
    return ok;
}

/* The view's mounts below mounts[at], cloned (recursively, with their
 * flags) before a new mount there hides them, to be moved back onto it. */
typedef struct carried {
    size_t *idx; /* into plan->mounts */
    int *fds;
    bool *dirs;
    size_t n;
} carried;

static int carry_take(const sb_plan *plan, size_t at, carried *c, char *err, size_t errlen)
{
    c->idx = sb_alloc((plan->n_mounts + 1) * sizeof *c->idx);
    c->fds = sb_alloc((plan->n_mounts + 1) * sizeof *c->fds);
    c->dirs = sb_alloc((plan->n_mounts + 1) * sizeof *c->dirs);
    c->n = 0;
    ssize_t n = carried_mounts(plan, at, c->idx);
    if (n < 0)
        return fail(err, errlen, "cannot renew a pinned symlink below", plan->mounts[at].dst, EINVAL);
    for (; c->n < (size_t)n; c->n++) {
        const char *dst = plan->mounts[c->idx[c->n]].dst;
        int fd = sys_open_tree(AT_FDCWD, dst, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
                                                   AT_SYMLINK_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return fail(err, errlen, "cannot carry over the mount", dst, e);
        }
        c->fds[c->n] = fd;
        c->dirs[c->n] = S_ISDIR(st.st_mode);
    }
    return 0;
}

/* Move the clones back onto the new mount (skip[i]: not this one), and
 * free c; with rc < 0 only free it. */
static int carry_back(const sb_plan *plan, carried *c, const bool *skip, int rc, char *err, size_t errlen)
{
    int root = rc == 0 ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rc == 0 && root < 0)
        rc = fail(err, errlen, "cannot open", "/", errno);
    for (size_t i = 0; i < c->n; i++) {
        const char *dst = plan->mounts[c->idx[i]].dst;
        if (rc == 0 && !(skip && skip[i])) {
            if (make_mountpoint_in(root, dst, c->dirs[i], false, err, errlen) < 0)
                rc = -1;
            else if (sys_move_mount(c->fds[i], "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                rc = fail(err, errlen, "cannot carry over the mount", dst, errno);
        }
        close(c->fds[i]);
    }
    if (root >= 0)
        close(root);
    free(c->idx);
    free(c->fds);
    free(c->dirs);
    return rc;
}

/* A new tmpfs on the writable tmpfs mounts[at], the view's mounts below it
 * carried over. */
static int renew_tmpfs(const sb_plan *plan, size_t at, char *err, size_t errlen)
{
    const sb_mount *t = &plan->mounts[at];
    carried c;
    int rc = carry_take(plan, at, &c, err, errlen);
    if (rc == 0) {
        char opts[64];
        if (t->size)
            snprintf(opts, sizeof opts, "mode=%o,size=%llu", t->mode, (unsigned long long)t->size);
        else
            snprintf(opts, sizeof opts, "mode=%o", t->mode);
        if (mount("tmpfs", t->dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
            rc = fail(err, errlen, "cannot mount a tmpfs on", t->dst, errno);
    }
    return carry_back(plan, &c, NULL, rc, err, errlen);
}

/* The command's own home layer on the view's home (mounts[at], the
 * overlay's place): the home as the view shows it below (an overlay shows
 * only the home's own filesystem: the real home), the layer directory the
 * launcher made for the command above, reached through the base's door
 * (its name is the last part of plan->layer_path), the view's mounts below
 * the home carried over, except the masks of denied files the layer hides
 * instead (as overlay_home does, so a tool may write its own).  The kernel
 * may refuse the overlay: the view's home then stays, read-only. */
static int renew_home(sb_plan *plan, size_t at, char *err, size_t errlen)
{
    const sb_mount *m = &plan->mounts[at];
    /* A layer in memory is made at the door (an empty directory then),
     * one on disk is found through it by name. */
    const char *name = plan->layer_path ? strrchr(plan->layer_path, '/') : NULL;
    if (!plan->layer_in_memory &&
        (!name || name[1] == '\0' || strcmp(name + 1, "..") == 0 || strcmp(name + 1, ".") == 0))
        return fail(err, errlen, "not a home layer's directory:", plan->layer_path, EINVAL);
    carried c;
    int rc = carry_take(plan, at, &c, err, errlen);
    if (rc < 0)
        return carry_back(plan, &c, NULL, rc, err, errlen);
    struct stat st;
    bool in_memory = plan->layer_in_memory && stat(m->dst, &st) == 0 &&
                     mount_memory_layer(SB_LAYER_DOOR, plan, st.st_mode) == 0;
    if (plan->layer_in_memory && !in_memory) { /* the home stays the view's, read-only */
        for (size_t i = 0; i < c.n; i++)
            close(c.fds[i]);
        c.n = 0;
        return carry_back(plan, &c, NULL, 0, err, errlen);
    }
    const char *sub = in_memory ? "" : name;
    char *opts = sb_printf("lowerdir=%s,upperdir=%s%s/upper,workdir=%s%s/work,userxattr", m->dst, SB_LAYER_DOOR, sub,
                           SB_LAYER_DOOR, sub);
    if (plan->layer_mode == SB_HOME_DISCARD && !in_memory) { /* volatile: as overlay_home says */
        char *fast = sb_printf("%s,volatile", opts);
        plan->layer_mounted = mount("overlay", m->dst, "overlay", MS_NOSUID | MS_NODEV, fast) == 0;
        free(fast);
    }
    if (!plan->layer_mounted)
        plan->layer_mounted = mount("overlay", m->dst, "overlay", MS_NOSUID | MS_NODEV, opts) == 0;
    free(opts);
    if (!plan->layer_mounted) { /* nothing was mounted over the view's home */
        for (size_t i = 0; i < c.n; i++)
            close(c.fds[i]);
        c.n = 0;
        return carry_back(plan, &c, NULL, 0, err, errlen);
    }
    bool *skip = sb_alloc((c.n + 1) * sizeof *skip);
    int root = open(m->dst, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    size_t hl = strlen(m->dst);
    for (size_t i = 0; i < c.n && root >= 0; i++) {
        const sb_mount *h = &plan->mounts[c.idx[i]];
        if (h->kind == SB_M_MASK_FILE && h->hide_in_layer)
            skip[i] = hide_file(root, h->dst + hl + 1) == 0;
    }
    if (root >= 0) {
        hide_host_locks(root);
        close(root);
    }
    rc = carry_back(plan, &c, skip, 0, err, errlen);
    free(skip);
    return rc;
}

/* A /dev of the command's own (a new tmpfs, with the view's device nodes
 * carried over, a new devpts and /dev/shm, the same links): nothing one
 * command leaves in /dev reaches another. */
static int renew_dev(const sb_mount *m, char *err, size_t errlen)
{
    size_t n = sizeof dev_nodes / sizeof dev_nodes[0] - 1;
    int fds[sizeof dev_nodes / sizeof dev_nodes[0]];
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char *node = sb_printf("%s/%s", m->dst, dev_nodes[i]);
        fds[i] = sys_open_tree(AT_FDCWD, node, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
        if (fds[i] < 0 && errno != ENOENT) /* a node the host lacks is not in the view either */
            rc = fail(err, errlen, "cannot carry over", node, errno);
        free(node);
    }
    if (rc == 0 && mount("tmpfs", m->dst, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1048576") < 0)
        rc = fail(err, errlen, "cannot mount a tmpfs on", m->dst, errno);
    for (size_t i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        char *node = sb_printf("%s/%s", m->dst, dev_nodes[i]);
        int f = rc == 0 ? open(node, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
        if (rc == 0 && (f < 0 || sys_move_mount(fds[i], "", AT_FDCWD, node, MOVE_MOUNT_F_EMPTY_PATH) < 0))
            rc = fail(err, errlen, "cannot carry over", node, errno);
        if (f >= 0)
            close(f);
        close(fds[i]);
        free(node);
    }
    char *pts = sb_printf("%s/pts", m->dst), *shm = sb_printf("%s/shm", m->dst);
    char opts[64];
    snprintf(opts, sizeof opts, "mode=1777,size=%llu", (unsigned long long)m->size);
    if (rc == 0 && (mkdir(pts, 0755) < 0 || mkdir(shm, 0755) < 0))
        rc = fail(err, errlen, "cannot create", pts, errno);
    if (rc == 0 && mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
        rc = fail(err, errlen, "cannot mount a new devpts on", pts, errno);
    if (rc == 0 && mount("tmpfs", shm, "tmpfs", MS_NOSUID | MS_NODEV, m->size ? opts : "mode=1777") < 0)
        rc = fail(err, errlen, "cannot mount a tmpfs on", shm, errno);
    free(pts);
    free(shm);
    static const char *const links[][2] = {{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"},
                                           {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
                                           {"stderr", "/proc/self/fd/2"}};
    for (size_t i = 0; rc == 0 && i < sizeof links / sizeof links[0]; i++) {
        char *l = sb_printf("%s/%s", m->dst, links[i][0]);
        if (symlink(links[i][1], l) < 0)
            rc = fail(err, errlen, "cannot create", l, errno);
        free(l);
    }
    return rc;
}

int sb_mounts_renew(sb_plan *plan, char *err, size_t errlen)
{
    int rc = 0;
    /* The home layer first, through the door, which then closes: nothing
     * of the command runs before. */
    for (size_t i = 0; i < plan->n_mounts && rc == 0 && (plan->layer_path || plan->layer_in_memory); i++) {
        const sb_mount *m = &plan->mounts[i];
        if (m->kind == SB_M_OVERLAY && plan->layer_home && strcmp(plan->layer_home, m->dst) == 0)
            rc = renew_home(plan, i, err, errlen);
    }
    /* (A door for layers in memory has nothing mounted on it when the
     * kernel refused the layer: then there is nothing to close.) */
    if (rc == 0 && plan->layer_home && plan->layer_dir && umount2(SB_LAYER_DOOR, MNT_DETACH) < 0 &&
        !(plan->layer_in_memory && errno == EINVAL))
        rc = fail(err, errlen, "cannot close the pre-built sandbox's door to the home layers,", SB_LAYER_DOOR,
                  errno);
    for (size_t i = 0; i < plan->n_mounts && rc == 0; i++) {
        const sb_mount *m = &plan->mounts[i];
        if (m->kind == SB_M_TMPFS && !m->rdonly)
            rc = renew_tmpfs(plan, i, err, errlen);
        else if (m->kind == SB_M_DEV)
            rc = renew_dev(m, err, errlen);
        else if (m->kind == SB_M_PROC) {
            if (mount("proc", m->dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                rc = fail(err, errlen, "cannot mount a fresh proc on", m->dst, errno);
            else
                rc = protect_proc(m->dst, err, errlen);
        }
    }
    if (rc == 0 && chdir(plan->cwd) < 0)
        rc = fail(err, errlen, "the working directory is not visible in the sandbox:", plan->cwd, errno);
    return rc;
}
