/*
 * homelayer.c - the directories behind a sandbox's home layer (see
 * homelayer.h for the layout and the rules).
 *
 * Everything below a layer directory was written by a sandbox, so it is
 * treated as hostile: it is walked relative to directory descriptors,
 * never following a symlink, and removed with a bounded number of
 * descriptors however deep it nests.
 */
#include "config.h"

#include "homelayer.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

const char *const sb_layer_startup_files[] = {
    /* what shells run when they start */
    ".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_logout", ".bash_aliases", ".bashrc.d",
    ".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout", ".config/fish", ".inputrc", ".shrc", ".kshrc",
    ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
    /* git's own configuration: hooksPath, core.fsmonitor, aliases run code
     * in every repository, the ones a wider sandbox may write included */
    ".gitconfig", ".config/git", NULL,
};

/* How many directory passes a removal may make before it gives up (a tree
 * that keeps changing under it); about two per directory suffice. */
#define REMOVE_BUDGET (1L << 22)
/* How deep a removal remembers where it was in each directory (a long
 * per level); deeper levels are read again from their start. */
#define REMOVE_TRACKED (1L << 16)

static int open_dir_at(int dirfd, const char *name)
{
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* One pass over the directory fd from position *pos: remove what can go;
 * stop at a directory that is not empty, name it in child and leave *pos
 * just before it (to be read again, empty, on the way back up).  0, or -1. */
static int clear_pass(int fd, long *pos, char *child, size_t childlen)
{
    child[0] = '\0';
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -1;
    }
    if (pos && *pos)
        seekdir(d, *pos);
    int rc = 0;
    for (;;) {
        long here = telldir(d);
        struct dirent *e = readdir(d);
        if (!e)
            break;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                rc = -1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (unlinkat(fd, e->d_name, 0) < 0 && errno != ENOENT)
                rc = -1;
            continue;
        }
        if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0)
            continue;
        if (errno != ENOTEMPTY && errno != EEXIST) {
            rc = -1;
            continue;
        }
        /* Enter it, able to list and empty it (work/work is mode 000,
         * and a sandbox may leave any mode). */
        fchmodat(fd, e->d_name, 0700, 0);
        snprintf(child, childlen, "%s", e->d_name);
        if (pos)
            *pos = here;
        break;
    }
    closedir(d);
    return rc;
}

/* Remove dirfd/name and everything below it, without following symlinks,
 * with one directory descriptor at a time however deep the tree: descend
 * into each directory that is not empty, climb back through "..", until
 * nothing is left.  A pass that misses an entry (a position that moved) is
 * made good by the directory's removal failing and the directory being
 * read again.  Only for trees no process writes any more (a layer after
 * its sandbox).  0, or -1 with errno. */
static int remove_deep(int dirfd, const char *name)
{
    fchmodat(dirfd, name, 0700, 0);
    int fd = open_dir_at(dirfd, name);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    long depth = 0, tracked = 0, *pos = NULL;
    char child[NAME_MAX + 1];
    int rc = -1;
    errno = 0;
    for (long pass = 0; pass < REMOVE_BUDGET; pass++) {
        if (depth >= tracked && depth < REMOVE_TRACKED) {
            long grown = tracked ? tracked * 2 : 64;
            pos = sb_realloc(pos, (size_t)grown * sizeof *pos);
            memset(pos + tracked, 0, (size_t)(grown - tracked) * sizeof *pos);
            tracked = grown;
        }
        long *here = depth < tracked ? &pos[depth] : NULL;
        if (clear_pass(fd, here, child, sizeof child) < 0)
            break;
        if (child[0]) {
            int c = open_dir_at(fd, child);
            if (c < 0)
                break;
            close(fd);
            fd = c;
            depth++;
            if (depth < tracked)
                pos[depth] = 0;
            continue;
        }
        if (depth == 0) {
            if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
                rc = 0;
                break;
            }
            if (errno != ENOTEMPTY && errno != EEXIST)
                break;
            pos[0] = 0; /* something was missed: read it all again */
            continue;
        }
        /* Empty now: its parent's next pass reads it again and removes it. */
        int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (up < 0)
            break;
        close(fd);
        fd = up;
        depth--;
    }
    int e = rc == 0 ? 0 : errno ? errno : ELOOP;
    close(fd);
    free(pos);
    errno = e;
    return rc;
}

/* How many levels remove_tree reads with a directory stream of its own
 * each (fast for wide trees); below that, remove_deep takes over. */
#define REMOVE_OPEN_LEVELS 32

/* Remove dirfd/name and everything below it, without following symlinks.
 * 0, or -1 with errno. */
static int remove_tree_levels(int dirfd, const char *name, int levels)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
        return 0;
    if (levels == 0)
        return remove_deep(dirfd, name);
    fchmodat(dirfd, name, 0700, 0);
    int fd = open_dir_at(dirfd, name);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    /* Read again only if an entry came back (the tree was still changing). */
    for (int round = 0; rc == 0 && round < 3; round++) {
        rewinddir(d);
        struct dirent *e;
        while (rc == 0 && (e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                rc = remove_tree_levels(fd, e->d_name, levels - 1);
        if (rc == 0 && (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT))
            break;
        if (rc == 0 && errno != ENOTEMPTY && errno != EEXIST)
            rc = -1;
        if (rc == 0 && round == 2) {
            errno = ENOTEMPTY;
            rc = -1;
        }
    }
    int e = errno;
    closedir(d);
    errno = e;
    return rc;
}

static int remove_tree(int dirfd, const char *name)
{
    return remove_tree_levels(dirfd, name, REMOVE_OPEN_LEVELS);
}

/* Remove rel (a path below the directory fd) from the tree; the way to it
 * is resolved beneath fd without symlinks. */
static void remove_below(int fd, const char *rel)
{
    char *parent = sb_strdup(rel);
    char *slash = strrchr(parent, '/');
    const char *base = slash ? slash + 1 : rel;
    if (slash)
        *slash = '\0';
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                      RESOLVE_NO_XDEV};
    int dir = slash ? (int)syscall(SYS_openat2, fd, parent, &how, sizeof how) : fd;
    if (dir >= 0) {
        remove_tree(dir, base);
        if (dir != fd)
            close(dir);
    }
    free(parent);
}

/* upper/ and work/ in the layer directory fd; upper/ takes the home's
 * mode: it is the root directory of the home in the sandbox.  (Its owner
 * stays the caller: the only user the sandbox maps.) */
static int prepare(int fd, const char *home, char *err, size_t errlen)
{
    if ((mkdirat(fd, "upper", 0700) < 0 && errno != EEXIST) || (mkdirat(fd, "work", 0700) < 0 && errno != EEXIST)) {
        snprintf(err, errlen, "cannot make the home layer's directories: %s", strerror(errno));
        return -1;
    }
    int upper = open_dir_at(fd, "upper");
    struct stat st;
    if (upper < 0 || stat(home, &st) < 0) {
        snprintf(err, errlen, "cannot prepare the home layer: %s", strerror(errno));
        if (upper >= 0)
            close(upper);
        return -1;
    }
    /* Best effort: a layer root with another mode still works. */
    int ignored = fchmod(upper, st.st_mode & 07777);
    (void)ignored;
    close(upper);
    return 0;
}

/* A name for the workspace's kept layer: the key, with anything but
 * letters, digits, '.', '_' and '-' replaced. */
static char *kept_name(const char *key)
{
    char *name = sb_printf("w-%s", key && key[0] ? key : "default");
    for (char *p = name + 2; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            *p = '_';
    return name;
}

/* Discarded layers whose launcher is gone (their lock is free), locked
 * now for removal: their names, and the descriptors that hold the locks. */
typedef struct stale {
    char **names;
    size_t n;
    int *fds;
} stale;

/* Under the lock on the layers directory pfd: find them. */
static void find_stale(int pfd, stale *out)
{
    memset(out, 0, sizeof *out);
    int dup_fd = dup(pfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "s-", 2) != 0)
            continue;
        int fd = open_dir_at(pfd, e->d_name);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            close(fd); /* in use */
            continue;
        }
        out->fds = sb_realloc(out->fds, (out->n + 1) * sizeof *out->fds);
        out->fds[out->n] = fd;
        sb_list_push(&out->names, &out->n, e->d_name);
    }
    closedir(d);
}

/* Remove them, holding their locks (no other launch touches them), but
 * not the layers directory's: launches go on meanwhile. */
static void remove_stale(int pfd, stale *st)
{
    for (size_t i = 0; i < st->n; i++) {
        remove_tree(pfd, st->names[i]);
        close(st->fds[i]);
    }
    sb_list_free(st->names, st->n);
    free(st->fds);
    memset(st, 0, sizeof *st);
}

/* Make (or take) the layer called name in pfd, locked; -1 with errno
 * EWOULDBLOCK when another sandbox holds it. */
static int take(int pfd, const char *name)
{
    if (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST)
        return -1;
    int fd = open_dir_at(pfd, name);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static char *discard_name(void)
{
    unsigned char r[8] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        memcpy(r, &ts.tv_nsec, sizeof ts.tv_nsec < sizeof r ? sizeof ts.tv_nsec : sizeof r);
    }
    return sb_printf("s-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0], r[1], r[2], r[3], r[4], r[5],
                     r[6], r[7]);
}

/* The layer of plan inside the locked layers directory pfd (canon: its
 * path); 0, or -1 with err. */
static int take_layer(int pfd, const char *canon, const sb_plan *plan, sb_layer_hold *out, char *err, size_t errlen)
{
    char *name = NULL;
    int fd = -1;
    if (plan->layer_mode == SB_HOME_KEEP) {
        name = kept_name(plan->layer_key);
        fd = take(pfd, name);
        if (fd < 0) {
            /* In use by another sandbox of the workspace (or unusable):
             * this one's writes are discarded instead. */
            free(name);
            name = NULL;
        }
    }
    bool discard = fd < 0;
    if (discard) {
        name = discard_name();
        fd = take(pfd, name);
        if (fd < 0) {
            snprintf(err, errlen, "cannot make a home layer in %s: %s", canon, strerror(errno));
            free(name);
            return -1;
        }
    }
    if (prepare(fd, plan->layer_home, err, errlen) < 0) {
        if (discard)
            remove_tree(pfd, name);
        close(fd);
        free(name);
        return -1;
    }
    if (!discard) {
        /* What a kept layer never carries to the next sandbox: the files
         * its shells and git run at start. */
        int upper = open_dir_at(fd, "upper");
        for (const char *const *f = sb_layer_startup_files; upper >= 0 && *f; f++)
            remove_below(upper, *f);
        if (upper >= 0)
            close(upper);
    }
    out->fd = fd;
    out->path = sb_printf("%s/%s", canon, name);
    out->discard = discard;
    free(name);
    return 0;
}

bool sb_layer_in_memory(void)
{
    static int known = -1; /* a server asks for every plan: the kernel stays */
    if (known < 0) {
        struct utsname u;
        unsigned major = 0, minor = 0;
        known = uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
                (major > 6 || (major == 6 && minor >= 6));
    }
    return known == 1;
}

int sb_layer_acquire(const sb_plan *plan, sb_layer_hold *out, char *err, size_t errlen)
{
    out->fd = -1;
    out->path = NULL;
    out->discard = false;
    if (!plan->layer_home || !plan->layer_dir || plan->layer_in_memory)
        return 0;
    /* A release may remove the layers directory while this waits for its
     * lock: then start again. */
    for (int attempt = 0; attempt < 8; attempt++) {
        if (mkdir(plan->layer_dir, 0700) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot make %s for home layers: %s", plan->layer_dir, strerror(errno));
            return -1;
        }
        int pfd = open(plan->layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0) {
            snprintf(err, errlen, "cannot open %s: %s", plan->layer_dir, strerror(errno));
            return -1;
        }
        struct stat st;
        if (flock(pfd, LOCK_EX) < 0 || fstat(pfd, &st) < 0) {
            snprintf(err, errlen, "cannot lock %s: %s", plan->layer_dir, strerror(errno));
            close(pfd);
            return -1;
        }
        if (st.st_nlink == 0) {
            close(pfd);
            continue;
        }
        stale old;
        find_stale(pfd, &old);
        char canon[PATH_MAX];
        int rc = -1;
        if (!realpath(plan->layer_dir, canon))
            snprintf(err, errlen, "cannot resolve %s: %s", plan->layer_dir, strerror(errno));
        else
            rc = take_layer(pfd, canon, plan, out, err, errlen);
        flock(pfd, LOCK_UN);
        remove_stale(pfd, &old);
        close(pfd);
        return rc;
    }
    snprintf(err, errlen, "cannot hold %s: it keeps being removed", plan->layer_dir);
    return -1;
}

bool sb_layer_made_ahead(const sb_plan *plan)
{
    return plan->layer_home && plan->layer_dir && plan->layer_mode == SB_HOME_DISCARD && !plan->layer_in_memory;
}

void sb_layer_release(sb_layer_hold *hold)
{
    if (hold->fd < 0) {
        free(hold->path);
        hold->path = NULL;
        return;
    }
    if (hold->discard && hold->path) {
        char *parent = sb_strdup(hold->path);
        char *slash = strrchr(parent, '/');
        *slash = '\0';
        int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* The layer's own lock keeps other launches off it: the removal,
         * which may take a while, holds no lock they wait for.  The layers
         * directory goes with the last layer, under its lock. */
        if (pfd >= 0) {
            remove_tree(pfd, slash + 1);
            if (flock(pfd, LOCK_EX) == 0)
                rmdir(parent);
            close(pfd);
        }
        free(parent);
    }
    close(hold->fd);
    hold->fd = -1;
    free(hold->path);
    hold->path = NULL;
}

/* ---- probing ------------------------------------------------------------ */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Run probe(arg) in a child of its own user and mount namespaces (the
 * caller's uid and gid mapped, mounts private), as the init builds a view:
 * overlayfs takes layers only from the namespace it is mounted in.  The
 * child's exit status (probe's return: 0, or an errno), -1 with errno when
 * no such child could be made.  Only the calling thread of a command-line
 * tool probes (doctor, --print-plan): the child may use the C library. */
static int in_own_namespaces(int (*probe)(const void *arg), const void *arg)
{
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
    snprintf(gid_map, sizeof gid_map, "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid == 0) {
        if (write_file("/proc/self/setgroups", "deny") < 0 || write_file("/proc/self/uid_map", uid_map) < 0 ||
            write_file("/proc/self/gid_map", gid_map) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            _exit(errno ? errno : 1);
        _exit(probe(arg));
    }
    if (pid < 0)
        return -1;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What a probe's status says, for why. */
static const char *probe_said(int status)
{
    return status > 0 && status < 128 ? strerror(status) : "the probe crashed";
}

/* A layer in memory, as the init makes it: a tmpfs (here over the home
 * itself, in the probe's own mount namespace) that takes user extended
 * attributes, upper/ and work/ in it, an overlay with the home (opened
 * before) below, written once. */
static int probe_memory_layer(const void *arg)
{
    const char *home = arg;
    int l = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (l < 0 || mount("tmpfs", home, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m") < 0)
        return errno ? errno : 1;
    char *upper = sb_printf("%s/upper", home), *work = sb_printf("%s/work", home),
         *merged = sb_printf("%s/merged", home);
    if (mkdir(upper, 0700) < 0 || mkdir(work, 0700) < 0 || mkdir(merged, 0700) < 0)
        return errno ? errno : 1;
    if (setxattr(upper, "user.corral-probe", "1", 1, 0) < 0)
        return errno ? errno : 1;
    char opts[256];
    snprintf(opts, sizeof opts, "lowerdir=/proc/self/fd/%d,upperdir=%s,workdir=%s,userxattr", l, upper, work);
    if (strlen(opts) + 1 >= sizeof opts || mount("overlay", merged, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
        return errno ? errno : 1;
    int fd = open(merged, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int f = fd < 0 ? -1 : openat(fd, ".corral-layer-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    return f < 0 ? (errno ? errno : 1) : 0;
}

/* A layer on disk: the directories a launcher made (upper, work, and a
 * place to mount it) under the home, written once. */
typedef struct disk_probe {
    const char *home, *upper, *work, *merged;
} disk_probe;

static int probe_disk_layer(const void *arg)
{
    const disk_probe *p = arg;
    int l = open(p->home, O_PATH | O_DIRECTORY | O_CLOEXEC), u = open(p->upper, O_PATH | O_CLOEXEC),
        w = open(p->work, O_PATH | O_CLOEXEC);
    if (l < 0 || u < 0 || w < 0)
        return errno ? errno : 1;
    char opts[256];
    snprintf(opts, sizeof opts, "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d,"
             "userxattr", l, u, w);
    if (mount("overlay", p->merged, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
        return errno ? errno : 1;
    int fd = open(p->merged, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int f = fd < 0 ? -1 : openat(fd, ".corral-layer-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    return f < 0 ? (errno ? errno : 1) : 0;
}

bool sb_layer_probe(const sb_plan *plan, char *why, size_t len)
{
    if (!plan->layer_home) {
        snprintf(why, len, "no home layer in this plan");
        return false;
    }
    if (plan->layer_in_memory) {
        int st = in_own_namespaces(probe_memory_layer, plan->layer_home);
        if (st < 0)
            snprintf(why, len, "cannot try it: new namespaces refused (%s)", strerror(errno));
        else if (st > 0)
            snprintf(why, len, "the kernel refuses a home layer in memory (%s; it needs a tmpfs with user extended "
                     "attributes, Linux 6.6 or newer built with CONFIG_TMPFS_XATTR): set [sandbox] home-layer-in = "
                     "disk to keep the layer on disk", probe_said(st));
        return st == 0;
    }
    sb_plan scratch = *plan; /* a throw-away layer, whatever the plan keeps */
    scratch.layer_mode = SB_HOME_DISCARD;
    sb_layer_hold hold;
    char err[512] = "";
    if (sb_layer_acquire(&scratch, &hold, err, sizeof err) < 0 || hold.fd < 0) {
        snprintf(why, len, "%s", hold.fd < 0 && !err[0] ? "no layer could be made" : err);
        sb_layer_release(&hold);
        return false;
    }
    mkdirat(hold.fd, "probe", 0700);
    char *upper = sb_printf("%s/upper", hold.path), *work = sb_printf("%s/work", hold.path),
         *merged = sb_printf("%s/probe", hold.path);
    disk_probe p = {.home = plan->layer_home, .upper = upper, .work = work, .merged = merged};
    int st = in_own_namespaces(probe_disk_layer, &p);
    if (st < 0)
        snprintf(why, len, "cannot try it: new namespaces refused (%s)", strerror(errno));
    else if (st > 0)
        snprintf(why, len, "the kernel refuses an overlay of the home in a user namespace (%s; it needs Linux "
                 "5.11 or newer, and a filesystem under %s that overlayfs can write to)", probe_said(st),
                 plan->layer_dir);
    free(upper);
    free(work);
    free(merged);
    sb_layer_release(&hold);
    return st == 0;
}
