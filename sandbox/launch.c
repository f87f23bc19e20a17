/*
 * launch.c - starting a plan's process tree.
 *
 * The child of clone() runs only system calls before its exec (no malloc,
 * no stdio): the launcher may be the multi-threaded server, whose locks a
 * child of clone must not touch.  Everything it needs is prepared first.
 *
 * The child execs /proc/self/exe (corral itself, even if the file was
 * replaced since the server started) so that the init runs in a fresh
 * process image with an empty environment.  CORRAL_EXE names the binary
 * when /proc/self/exe is not corral (a server run under valgrind); it is the
 * caller's own environment, so it crosses no trust boundary.
 */
#include "config.h"

#include "launch.h"
#include "sbutil.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "mounts.h"
#include "privs.h"
#include "filter.h"

const char *sb_self_exe(void)
{
    const char *exe = getenv("CORRAL_EXE");
    return exe && exe[0] == '/' ? exe : "/proc/self/exe";
}

/* An integer sysctl, or -1 when it is not there. */
static int sysctl_int(const char *path)
{
    FILE *f = fopen(path, "re");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Whether this process runs in a chroot: the kernel refuses new user
 * namespaces there (EPERM) whatever the sysctls say.  Compared with pid 1's
 * root when we may look at it; otherwise from mountinfo, where a chroot into
 * a plain directory shows no mount of the namespace's root on "/". */
static bool in_chroot(void)
{
    struct stat self, init;
    if (stat("/", &self) == 0 && stat("/proc/1/root/", &init) == 0)
        return self.st_dev != init.st_dev || self.st_ino != init.st_ino;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return false;
    char line[4096], root[2048], point[2048];
    bool whole_root = false;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%*s %*s %*s %2047s %2047s", root, point) == 2 && strcmp(point, "/") == 0 &&
            strcmp(root, "/") == 0)
            whole_root = true;
    fclose(f);
    return !whole_root;
}

void sb_userns_hint(int e, char *buf, size_t len)
{
    if (e == EPERM && in_chroot())
        snprintf(buf, len, "corral runs in a chroot, and the kernel refuses user namespaces there; fix: run "
                           "corral outside the chroot, or in a container made with pivot_root (docker, podman, "
                           "systemd-nspawn)");
    else if (sysctl_int("/proc/sys/kernel/unprivileged_userns_clone") == 0)
        snprintf(buf, len, "user namespaces are disabled for unprivileged users "
                           "(kernel.unprivileged_userns_clone = 0); fix: sysctl -w "
                           "kernel.unprivileged_userns_clone=1");
    else if (sysctl_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
        snprintf(buf, len, "AppArmor forbids unprivileged user namespaces "
                           "(kernel.apparmor_restrict_unprivileged_userns = 1, as on Ubuntu 24.04); fix: "
                           "an AppArmor profile that allows userns for corral, or sysctl -w "
                           "kernel.apparmor_restrict_unprivileged_userns=0");
    else if (sysctl_int("/proc/sys/user/max_user_namespaces") == 0)
        snprintf(buf, len, "user namespaces are disabled (user.max_user_namespaces = 0); fix: sysctl -w "
                           "user.max_user_namespaces=15000");
    else if (e == ENOSPC || e == EUSERS)
        snprintf(buf, len, "the limit on user namespaces is reached (user.max_user_namespaces); fix: raise it "
                           "with sysctl -w user.max_user_namespaces=15000");
    else if (e == EINVAL)
        snprintf(buf, len, "this kernel lacks namespaces corral needs (user, mount, pid, ipc, uts, cgroup, "
                           "net): build it with CONFIG_USER_NS and CONFIG_*_NS");
    else
        snprintf(buf, len, "the kernel refused to create user namespaces (%s); check that unprivileged user "
                           "namespaces are allowed (corral doctor)", strerror(e));
}

/* ---- unconfined: the init alone --------------------------------------------- */

static int launch_unconfined(const sb_plan *plan, const sb_stdio *io, sb_child *child, char *err, size_t errlen)
{
    size_t argc = 0;
    while (plan->argv[argc])
        argc++;
    const char **args = sb_alloc((argc + 8) * sizeof *args);
    size_t n = 0;
    args[n++] = "corral-init";
    args[n++] = "__init";
    if (io->tty)
        args[n++] = "--tty";
    args[n++] = "--cwd";
    args[n++] = plan->cwd;
    args[n++] = "--";
    for (size_t i = 0; i < argc; i++)
        args[n++] = plan->argv[i];
    args[n] = NULL;
    /* posix_spawn (a vfork-style clone in glibc): the server's memory is
     * not copied, no handler of the server's runs in the child, every
     * signal is reset and unblocked, and only fds 0-2 survive. */
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&fa, io->in, 0);
    posix_spawn_file_actions_adddup2(&fa, io->out, 1);
    posix_spawn_file_actions_adddup2(&fa, io->err, 2);
    if (io->chan >= 0)
        posix_spawn_file_actions_adddup2(&fa, io->chan, SB_CHANNEL_FD);
    posix_spawn_file_actions_addclosefrom_np(&fa, io->chan >= 0 ? SB_CHANNEL_FD + 1 : 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    const char *exe = sb_self_exe();
    int rc = posix_spawn(&pid, exe, &fa, &attr, (char *const *)args, plan->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(args);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the session init (%s): %s", exe, strerror(rc));
        return -1;
    }
    child->pid = pid;
    return 0;
}

/* ---- confined: clone into namespaces ------------------------------------------ */

/* Everything the clone child needs, prepared before the clone. */
typedef struct child_args {
    const char *exe;
    char *const *argv;
    int sync_fd;  /* for the init: the launcher's go bytes, then the filter */
    int ready_fd; /* write: error text, or closed when the init is ready */
    int plan_fd;
    int in, out, err;
    int chan_fd; /* the session channel, or -1 */
    char uid_map[64], gid_map[64];
    bool inner_root; /* the init runs as uid 0 of its user namespace */
    uint64_t ignored; /* signals this process ignores (bit s-1 for s) */
} child_args;

/* The signals this process ignores, from the SigIgn line of
 * /proc/self/status: an exec keeps an ignored signal ignored (a caught one
 * goes back to its default by itself), so only these need resetting before
 * the init is exec'd; one read instead of a sigaction() per signal.  All
 * of them when the line cannot be read. */
static uint64_t ignored_signals(void)
{
    uint64_t mask = UINT64_MAX;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return mask;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "SigIgn:", 7) == 0) {
            char *end = NULL;
            unsigned long long v = strtoull(line + 7, &end, 16);
            if (end && end != line + 7)
                mask = v;
            break;
        }
    fclose(f);
    return mask;
}

/* Write a constant string to fd; for the child, before exec. */
static void child_say(int fd, const char *a, const char *b)
{
    ssize_t w = write(fd, a, strlen(a));
    if (b)
        w = write(fd, b, strlen(b));
    (void)w;
}

static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Move fds to their places (0-2 stdio, 3 plan, 4 status, 5 sync, and 6
 * the session channel when there is one) even if their numbers overlap
 * the targets; close everything else. */
static int place_fds(const child_args *a)
{
    int src[7] = {a->in, a->out, a->err, a->plan_fd, a->ready_fd, a->sync_fd, a->chan_fd};
    int n = a->chan_fd >= 0 ? 7 : 6;
    int high[7];
    for (int i = 0; i < n; i++)
        if ((high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
            return -1;
    for (int i = 0; i < n; i++)
        if (dup2(high[i], i) < 0)
            return -1;
    return (int)syscall(SYS_close_range, (unsigned)n, ~0u, 0u) == 0 ? 0 : -1;
}

static __attribute__((noreturn)) void child_main(const child_args *a)
{
    /* Die with the launcher until the init takes over.  The exec starts
     * at once: the launcher makes mount points and cgroups meanwhile, and
     * the init waits for its go before it mounts anything. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (write_proc("/proc/self/setgroups", "deny") < 0 || write_proc("/proc/self/uid_map", a->uid_map) < 0 ||
        write_proc("/proc/self/gid_map", a->gid_map) < 0) {
        child_say(a->ready_fd, "E cannot map the user and group ids into the user namespace: ", strerror(errno));
        child_say(a->ready_fd, "\n", NULL);
        _exit(126);
    }
    /* The init needs capabilities of the new namespace to build the view,
     * then drops them all.  As uid 0 in it, the exec gives it every one by
     * itself.  Any other uid keeps across the exec only ambient ones: those
     * the init uses are raised (mounts, pivot_root, the hostname and
     * namespaces; the loopback interface; dropping the bounding set and
     * locking the securebits; files and limits while it builds the view),
     * one call each, not every capability the kernel knows. */
    if (!a->inner_root) {
        static const int init_caps[] = {CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SETPCAP, CAP_SYS_CHROOT,
                                        CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_CHOWN,
                                        CAP_FSETID, CAP_MKNOD, CAP_SETUID, CAP_SETGID, CAP_KILL,
                                        CAP_SYS_RESOURCE};
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct data[2];
        if (syscall(SYS_capget, &hdr, data) == 0) {
            data[0].inheritable = data[0].permitted;
            data[1].inheritable = data[1].permitted;
            syscall(SYS_capset, &hdr, data);
        }
        for (size_t i = 0; i < sizeof init_caps / sizeof init_caps[0]; i++)
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, init_caps[i], 0, 0);
    }
    if (place_fds(a) < 0) {
        child_say(a->ready_fd, "E cannot prepare the init's file descriptors: ", strerror(errno));
        child_say(a->ready_fd, "\n", NULL);
        _exit(126);
    }
    /* The kernel's call, not sigaction(): glibc refuses its own reserved
     * signals (32 and 33), which a caller may ignore as well. */
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } dfl = {.handler = SIG_DFL};
    for (int s = 1; s <= 64; s++)
        if (a->ignored >> (s - 1) & 1)
            syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    static char *const empty_env[] = {NULL};
    execve(a->exe, a->argv, empty_env);
    child_say(4, "E cannot exec the sandbox init: ", strerror(errno));
    child_say(4, "\n", NULL);
    _exit(127);
}

/* Parse complete lines of the status pipe. */
static bool parse_status(sb_child *c)
{
    bool news = false;
    char *nl;
    while ((nl = memchr(c->status_buf, '\n', c->status_len)) != NULL) {
        *nl = '\0';
        const char *line = c->status_buf;
        if (line[0] == 'R') {
            c->ready = true;
            news = true;
        } else if (line[0] == 'E' && line[1] == ' ' && !c->error) {
            c->error = sb_strdup(line + 2);
            news = true;
        } else if (line[0] == 'S' && line[1] == ' ') {
            c->worker_status = atoi(line + 2);
            c->have_status = true;
            news = true;
        }
        size_t used = (size_t)(nl - c->status_buf) + 1;
        memmove(c->status_buf, nl + 1, c->status_len - used);
        c->status_len -= used;
    }
    if (c->status_len == sizeof c->status_buf) /* an overlong line: drop it */
        c->status_len = 0;
    return news;
}

bool sb_child_feed(sb_child *c)
{
    bool news = false;
    while (c->status_fd >= 0 && !c->status_eof) {
        ssize_t n = read(c->status_fd, c->status_buf + c->status_len, sizeof c->status_buf - c->status_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                c->status_eof = true;
            break;
        }
        c->status_len += (size_t)n;
        news |= parse_status(c);
    }
    return news;
}

int sb_child_status(sb_child *c, int init_status)
{
    sb_child_feed(c);
    return c->have_status ? c->worker_status : init_status;
}

/* Block until the init says ready, or fails. */
static int wait_ready(sb_child *c, char *err, size_t errlen)
{
    int fl = fcntl(c->status_fd, F_GETFL);
    fcntl(c->status_fd, F_SETFL, fl & ~O_NONBLOCK);
    while (!c->ready && !c->error && !c->status_eof) {
        ssize_t n = read(c->status_fd, c->status_buf + c->status_len, sizeof c->status_buf - c->status_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            c->status_eof = true;
            break;
        }
        c->status_len += (size_t)n;
        parse_status(c);
    }
    fcntl(c->status_fd, F_SETFL, fl | O_NONBLOCK);
    if (c->ready)
        return 0;
    snprintf(err, errlen, "sandbox setup failed: %s", c->error ? c->error : "the init ended before it was ready");
    int st;
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
        ;
    return -1;
}

/* Start the plan's init in new namespaces.  base: as the holder of a
 * pre-built view (sb_base_build), which only builds it. */
static int launch_confined(const sb_plan *plan, const sb_stdio *io, bool wait, bool base, sb_child *child,
                           char *err, size_t errlen)
{
    /* The home layer's directory, for the init in the plan it reads.  None
     * can be made: the home stays read-only, as the plan says it may. */
    char layer_err[512];
    if (base || sb_layer_acquire(plan, &child->layer, layer_err, sizeof layer_err) < 0)
        child->layer.fd = -1; /* a base's view has none: each command mounts its own */
    sb_plan for_init = *plan; /* shallow: only layer_path differs */
    for_init.layer_path = child->layer.path;
    size_t len;
    char *text = sb_plan_serialize(&for_init, &len);
    int plan_fd = memfd_create("corral-plan", MFD_CLOEXEC);
    if (!text || plan_fd < 0 || write(plan_fd, text, len) != (ssize_t)len || lseek(plan_fd, 0, SEEK_SET) < 0) {
        snprintf(err, errlen, "cannot pass the launch plan to the sandbox: %s", strerror(errno));
        free(text);
        if (plan_fd >= 0)
            close(plan_fd);
        sb_layer_release(&child->layer);
        return -1;
    }
    free(text);
    int sync[2], ready[2];
    if (pipe2(sync, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        close(plan_fd);
        sb_layer_release(&child->layer);
        return -1;
    }
    if (pipe2(ready, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        close(sync[0]);
        close(sync[1]);
        close(plan_fd);
        sb_layer_release(&child->layer);
        return -1;
    }
    static char *const argv_plain[] = {"corral-init", "__sandbox-init", NULL};
    static char *const argv_tty[] = {"corral-init", "__sandbox-init", "--tty", NULL};
    child_args a = {.exe = sb_self_exe(), .sync_fd = sync[0], .ready_fd = ready[1], .plan_fd = plan_fd,
                    .in = io->in, .out = io->out, .err = io->err, .chan_fd = io->chan,
                    .inner_root = plan->uid == 0, .ignored = ignored_signals()};
    snprintf(a.uid_map, sizeof a.uid_map, "%u %u 1\n", (unsigned)plan->uid, (unsigned)getuid());
    snprintf(a.gid_map, sizeof a.gid_map, "%u %u 1\n", (unsigned)plan->gid, (unsigned)getgid());
    static char *const argv_base[] = {"corral-init", "__sandbox-init", "--base", NULL};
    a.argv = base ? argv_base : io->tty ? argv_tty : argv_plain;

    /* A clone with fork semantics: the child gets a copy of this memory and
     * runs child_main, which only makes system calls before its exec. */
    /* The cgroup namespace comes later, from the init, once the launcher
     * has moved it into its own cgroup: that cgroup is then its root. */
    unsigned long flags = (unsigned long)(plan->ns_flags & ~CLONE_NEWCGROUP) | SIGCHLD;
    pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
    if (pid == 0)
        child_main(&a);
    int clone_errno = errno;
    close(sync[0]);
    close(ready[1]);
    close(plan_fd);
    if (pid < 0) {
        close(sync[1]);
        close(ready[0]);
        sb_layer_release(&child->layer);
        char hint[512];
        sb_userns_hint(clone_errno, hint, sizeof hint);
        snprintf(err, errlen, "cannot create the sandbox: %s", hint);
        return -1;
    }
    child->pid = pid;
    child->status_fd = ready[0];
    /* While the init execs: the host-side mount points, then 'P' (build
     * the view) or 'X' (give up); the cgroup while it builds the view,
     * then 'G' when the cgroup took pids.max (else the init sets
     * RLIMIT_NPROC) or 'g'; then the filter. */
    size_t n_ph = plan->n_placeholders + plan->n_shared_placeholders;
    sb_placeholder *ph = sb_alloc((n_ph + 1) * sizeof *ph);
    if (plan->n_placeholders)
        memcpy(ph, plan->placeholders, plan->n_placeholders * sizeof *ph);
    if (plan->n_shared_placeholders)
        memcpy(ph + plan->n_placeholders, plan->shared_placeholders, plan->n_shared_placeholders * sizeof *ph);
    int ph_rc = n_ph ? sb_placeholders_acquire(plan->placeholder_registry, ph, n_ph, &child->placeholders, err,
                                               errlen)
                     : 0;
    free(ph); /* a shallow copy: the strings stay the plan's */
    sb_sigpipe_guard guard;
    sb_sigpipe_hold(&guard);
    if (ph_rc < 0) {
        sb_write_all(sync[1], "X", 1);
        close(sync[1]);
        sb_sigpipe_release(&guard);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        sb_child_release(child);
        return -1;
    }
    sb_write_all(sync[1], "P", 1);
    sb_cgroup_create(pid, &plan->limits, &child->cgroup);
    sb_write_all(sync[1], child->cgroup.pids_applied ? "G" : "g", 1);
    /* The filter, compiled here while the init builds its view (this
     * process has nothing else to do meanwhile). */
    sb_seccomp_send(sync[1], plan->net);
    close(sync[1]); /* a server launches many */
    sb_sigpipe_release(&guard);
    if (wait && wait_ready(child, err, errlen) < 0) {
        sb_child_release(child);
        return -1;
    }
    return 0;
}

int sb_launch(const sb_plan *plan, const sb_stdio *io, bool wait, sb_child *child, char *err, size_t errlen)
{
    memset(child, 0, sizeof *child);
    child->pid = -1;
    child->status_fd = -1;
    child->layer.fd = -1;
    if (plan->unconfined) {
        child->ready = true;
        return launch_unconfined(plan, io, child, err, errlen);
    }
    return launch_confined(plan, io, wait, false, child, err, errlen);
}

bool sb_child_release_at_status(sb_child *child)
{
    if (child->status_fd < 0)
        return false;
    /* The pipe stays non-blocking: a read that waited for more after the
     * status would wait for the init's exit, the very teardown this saves. */
    while (!child->have_status && !child->status_eof) {
        struct pollfd p = {.fd = child->status_fd, .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            break;
        sb_child_feed(child);
    }
    if (!child->have_status)
        return false;
    sb_placeholders_release(child->placeholders);
    child->placeholders = NULL;
    sb_layer_release(&child->layer);
    return true;
}

void sb_child_release(sb_child *child)
{
    sb_cgroup_remove(&child->cgroup);
    sb_placeholders_release(child->placeholders);
    child->placeholders = NULL;
    sb_layer_release(&child->layer);
    if (child->status_fd >= 0)
        close(child->status_fd);
    child->status_fd = -1;
    free(child->error);
    child->error = NULL;
}

void sb_print_enforcement(const sb_plan *plan, FILE *f)
{
    if (plan->unconfined) {
        fprintf(f, "landlock:   none\nseccomp:    none\nlimits:     none (the full profile is not a sandbox)\n");
        return;
    }
    char buf[1024];
    if (plan->layer_home) {
        char why[512];
        if (sb_layer_probe(plan, why, sizeof why))
            fprintf(f, "home:       %s: writable, into a layer over the real home (read-only below); the layer is %s\n",
                    plan->layer_home,
                    plan->layer_mode == SB_HOME_KEEP
                        ? "kept for this workspace ([sandbox] home-layer = keep), less the shells' startup files "
                          "and git's config"
                    : plan->layer_in_memory
                        ? "in memory, a tmpfs of the sandbox's own, gone when the sandbox ends ([sandbox] "
                          "home-layer = discard, home-layer-in = memory)"
                        : "removed when the sandbox ends ([sandbox] home-layer = discard)");
        else
            fprintf(f, "home:       %s: read-only: %s\n", plan->layer_home, why);
        if (!plan->layer_in_memory)
            fprintf(f, "            layers live in %s (corral's state: no sandbox sees it)\n", plan->layer_dir);
    } else {
        fprintf(f, "home:       %s\n", plan->layer_why_not ? plan->layer_why_not : "no home layer");
    }
    sb_landlock_describe(plan, buf, sizeof buf);
    fprintf(f, "landlock:   %s\n", buf);
    sb_seccomp_describe(plan->net, buf, sizeof buf);
    fprintf(f, "seccomp:    %s\n", buf);
    const sb_limits *l = &plan->limits;
    char fsize[32], tmp[32], mem[32];
    sb_format_size(l->fsize, fsize, sizeof fsize);
    sb_format_size(l->tmp_size, tmp, sizeof tmp);
    fprintf(f, "limits:     RLIMIT_CORE %llu, RLIMIT_NOFILE %llu, RLIMIT_FSIZE %s, /tmp tmpfs %s\n",
            (unsigned long long)l->core, (unsigned long long)l->nofile, fsize, tmp);
    sb_cgroup cg;
    char where[512];
    sb_cgroup_probe(l, &cg, where, sizeof where);
    if (cg.pids_applied)
        fprintf(f, "            pids.max %llu: applies (%s)\n", (unsigned long long)l->pids_max, where);
    else if (sb_nproc_applies())
        fprintf(f, "            pids.max %llu: cannot be applied: %s; RLIMIT_NPROC %llu (per user namespace) "
                   "instead\n",
                (unsigned long long)l->pids_max, cg.why_not, (unsigned long long)l->nproc);
    else
        fprintf(f, "            pids.max %llu: cannot be applied: %s; NO process limit (RLIMIT_NPROC does not "
                   "bind root)\n",
                (unsigned long long)l->pids_max, cg.why_not);
    if (l->memory_max) {
        sb_format_size(l->memory_max, mem, sizeof mem);
        fprintf(f, "            memory.max %s: %s\n", mem,
                cg.memory_applied ? "applies" : "cannot be applied: no writable memory cgroup");
    } else {
        fprintf(f, "            memory.max: not set ([sandbox] memory-max in the config)\n");
    }
}

int launch_kill_tree(pid_t init_pid)
{
    if (init_pid <= 0)
        return -EINVAL;
    return kill(init_pid, SIGTERM) == 0 ? 0 : -errno;
}

/* ---- pre-built sandboxes ------------------------------------------------------- */

char *sb_base_key(const sb_plan *plan, size_t *len)
{
    static char *const none[] = {NULL};
    sb_plan k = *plan; /* shallow: only what differs between commands goes */
    k.argv = (char **)none;
    k.envp = (char **)none;
    k.cwd = plan->workspace;
    k.layer_path = NULL;
    /* Why a path is mounted is for people: a placeholder one command made
     * is the same mount for the next, which finds it made ("protected
     * (empty; created for the mount)", then "protected: ..."). */
    sb_mount *mounts = sb_alloc((plan->n_mounts + 1) * sizeof *mounts);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        mounts[i] = plan->mounts[i];
        mounts[i].why = NULL;
    }
    k.mounts = mounts;
    size_t plen;
    char *text = sb_plan_serialize(&k, &plen);
    free(mounts);
    if (!text)
        return NULL;
    /* And what each mount is made from and over, as the host has them now:
     * a view binds a file or directory, not a path.  A file replaced on the
     * host (an editor's rename over ~/.gitconfig, a tool's over a denied
     * ~/.netrc, a workspace removed and made again) leaves the view with
     * the old one, or its mount detached and the new one unmasked: that
     * view is not this plan's any more. */
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) {
        free(text);
        return NULL;
    }
    fwrite(text, 1, plen, f);
    free(text);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const sb_mount *m = &plan->mounts[i];
        struct stat a, b;
        bool sa = m->src && lstat(m->src, &a) == 0, sb;
        if (m->src && m->dst && strcmp(m->src, m->dst) == 0) {
            sb = sa; /* most binds show a path where it is: one look */
            b = a;
        } else {
            sb = m->dst && lstat(m->dst, &b) == 0;
        }
        fprintf(f, "I\t%llu:%llu\t%llu:%llu\n", sa ? (unsigned long long)a.st_dev : 0ull,
                sa ? (unsigned long long)a.st_ino : 0ull, sb ? (unsigned long long)b.st_dev : 0ull,
                sb ? (unsigned long long)b.st_ino : 0ull);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = size;
    return buf;
}

/* A request to a base's holder: the command's namespaces and whether it
 * has a terminal, with its fds (SCM_RIGHTS): plan, stdin, stdout, stderr,
 * status pipe, go pipe and, when it has one, its session channel.  The
 * reply: the pid of the command's init, or -errno. */
typedef struct base_request {
    int32_t ns_flags;
    uint8_t tty;
} base_request;

#define BASE_FDS_MAX 7
#define BASE_NS_ALLOWED (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)

int sb_base_build(const sb_plan *plan, sb_base *base, char *err, size_t errlen)
{
    memset(base, 0, sizeof *base);
    base->sock = -1;
    base->holder.pid = -1;
    base->holder.status_fd = -1;
    base->holder.layer.fd = -1;
    base->anchor.fd = -1;
    if (plan->unconfined) {
        snprintf(err, errlen, "a pre-built sandbox needs a confined plan, not profile %s", plan->profile);
        return -1;
    }
    if (!sb_mounts_renewable(plan)) {
        snprintf(err, errlen, "this plan cannot be pre-built: a pinned symlink lies below a writable tmpfs");
        return -1;
    }
    /* A layer of the base's own, never mounted, keeps the layers
     * directory, bound as the view's door, from going with the last
     * command's layer (homelayer.h). */
    char layer_err[512];
    sb_plan anchor_plan = *plan; /* shallow: a throw-away layer, never a workspace's kept one */
    anchor_plan.layer_mode = SB_HOME_DISCARD;
    if (plan->layer_home && sb_layer_acquire(&anchor_plan, &base->anchor, layer_err, sizeof layer_err) < 0) {
        snprintf(err, errlen, "no pre-built sandbox without a home layer: %s", layer_err);
        return -1;
    }
    int null = open("/dev/null", O_RDWR | O_CLOEXEC), sv[2] = {-1, -1};
    if (null < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot prepare a pre-built sandbox: %s", strerror(errno));
        if (null >= 0)
            close(null);
        sb_layer_release(&base->anchor);
        return -1;
    }
    /* The holder lives in the user and mount namespaces only: it forks
     * each command's init with CLONE_PARENT (not allowed to a pid
     * namespace's init), into the command's own namespaces. */
    sb_plan p = *plan;
    p.ns_flags = CLONE_NEWUSER | CLONE_NEWNS;
    sb_stdio io = {.in = null, .out = null, .err = null, .chan = sv[1]};
    int rc = launch_confined(&p, &io, true, true, &base->holder, err, errlen);
    close(null);
    close(sv[1]);
    if (rc < 0) {
        close(sv[0]);
        sb_layer_release(&base->anchor);
        return -1;
    }
    base->sock = sv[0];
    /* A holder that does not answer (stopped from outside) must not hold
     * the launcher: its command then gets a sandbox made from nothing. */
    struct timeval tv = {.tv_sec = 5};
    setsockopt(base->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(base->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    base->key = sb_base_key(plan, &base->key_len);
    return 0;
}

void sb_base_release(sb_base *base)
{
    /* The holder would end when its socket closes; one stopped from
     * outside would not, and nothing waits for it. */
    if (base->sock >= 0)
        close(base->sock);
    base->sock = -1;
    if (base->holder.pid > 0) {
        kill(base->holder.pid, SIGKILL);
        int st;
        while (waitpid(base->holder.pid, &st, 0) < 0 && errno == EINTR)
            ;
        base->holder.pid = -1;
    }
    sb_child_release(&base->holder);
    sb_layer_release(&base->anchor);
    free(base->key);
    base->key = NULL;
}

int sb_launch_from_base(sb_base *base, const sb_plan *plan, sb_layer_hold *layer, const sb_stdio *io, bool wait,
                        sb_child *child, char *err, size_t errlen)
{
    memset(child, 0, sizeof *child);
    child->pid = -1;
    child->status_fd = -1;
    child->layer.fd = -1;
    /* The command's own home layer, which its init mounts over the view's
     * home through the base's door (mounts.h, SB_LAYER_DOOR). */
    char layer_err[512];
    if (layer && layer->fd >= 0) {
        child->layer = *layer;
        layer->fd = -1;
        layer->path = NULL;
    } else if (sb_layer_acquire(plan, &child->layer, layer_err, sizeof layer_err) < 0) {
        child->layer.fd = -1;
    }
    sb_plan for_init = *plan; /* shallow: only layer_path differs */
    for_init.layer_path = child->layer.path;
    size_t len;
    char *text = sb_plan_serialize(&for_init, &len);
    int plan_fd = memfd_create("corral-plan", MFD_CLOEXEC);
    int sync[2] = {-1, -1}, ready[2] = {-1, -1};
    int rc = -1;
    if (!text || plan_fd < 0 || write(plan_fd, text, len) != (ssize_t)len || lseek(plan_fd, 0, SEEK_SET) < 0 ||
        pipe2(sync, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "cannot prepare the command's sandbox: %s", strerror(errno));
        goto out;
    }
    base_request req = {.ns_flags = plan->ns_flags & BASE_NS_ALLOWED, .tty = io->tty};
    int fds[BASE_FDS_MAX] = {plan_fd, io->in, io->out, io->err, ready[1], sync[0], io->chan};
    size_t nfds = io->chan >= 0 ? 7 : 6;
    char cbuf[CMSG_SPACE(sizeof fds)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &req, .iov_len = sizeof req};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = CMSG_SPACE(nfds * sizeof(int))};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    ssize_t sent = -1;
    while (base->sock >= 0 && (sent = sendmsg(base->sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    int v = 0;
    ssize_t got = -1;
    if (sent == (ssize_t)sizeof req)
        while ((got = recv(base->sock, &v, sizeof v, 0)) < 0 && errno == EINTR)
            ;
    if (got != (ssize_t)sizeof v || v <= 0) {
        snprintf(err, errlen, "cannot start the command in the pre-built sandbox: %s",
                 got == (ssize_t)sizeof v ? strerror(-v) : "its holder is gone or does not answer");
        /* A holder that did not answer may answer late: no later request
         * may take that answer for its own.  The base is done. */
        if (got != (ssize_t)sizeof v && base->sock >= 0) {
            close(base->sock);
            base->sock = -1;
        }
        goto out;
    }
    close(ready[1]);
    ready[1] = -1;
    child->pid = v;
    child->status_fd = ready[0];
    ready[0] = -1;
    /* Its mounts are the base's: it renews its own while the cgroup is
     * made.  No filter follows: the holder compiled it for all its
     * commands. */
    sb_sigpipe_guard guard;
    sb_sigpipe_hold(&guard);
    sb_write_all(sync[1], "P", 1);
    sb_cgroup_create(child->pid, &plan->limits, &child->cgroup);
    sb_write_all(sync[1], child->cgroup.pids_applied ? "G" : "g", 1);
    close(sync[1]); /* all it reads: an init waiting for more sees the end */
    sync[1] = -1;
    sb_sigpipe_release(&guard);
    rc = 0;
    if (wait && wait_ready(child, err, errlen) < 0) {
        sb_child_release(child);
        rc = -1;
    }
out:
    if (rc < 0 && child->pid < 0)
        sb_layer_release(&child->layer);
    free(text);
    int mine[] = {plan_fd, sync[0], sync[1], ready[0], ready[1]};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (mine[i] >= 0)
            close(mine[i]);
    return rc;
}

/* ---- the holder's side ----------------------------------------------------- */

static bool forked_tty;

bool sb_base_forked_tty(void)
{
    return forked_tty;
}

/* In the command's init just forked: its fds to 0-6 as an exec'd init
 * finds them (place_fds), everything else (the holder's socket, other
 * requests' fds) closed. */
static int place_request_fds(const int *fds, size_t n)
{
    static const int slot[BASE_FDS_MAX] = {3, 0, 1, 2, 4, 5, 6}; /* plan, in, out, err, status, go, chan */
    int high[BASE_FDS_MAX];
    for (size_t i = 0; i < n; i++)
        if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 16)) < 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        if (dup2(high[i], slot[i]) < 0)
            return -1;
    return (int)syscall(SYS_close_range, (unsigned)n, ~0u, 0u) == 0 ? 0 : -1;
}

void sb_base_serve(int sock)
{
    /* Building the view left the heap with many small free chunks: each
     * forked init would merge them again at its first large allocation,
     * touching (and copying) those pages in every command.  Merged once
     * here, every init inherits a tidy heap. */
    malloc_trim(0);
    for (;;) {
        base_request req;
        char cbuf[CMSG_SPACE(BASE_FDS_MAX * sizeof(int))];
        struct iovec iov = {.iov_base = &req, .iov_len = sizeof req};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0); /* the launcher closed the base */
        int fds[BASE_FDS_MAX];
        size_t nfds = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            int *in = (int *)CMSG_DATA(cm);
            for (size_t i = 0; i < k; i++) {
                if (nfds < BASE_FDS_MAX)
                    fds[nfds++] = in[i];
                else
                    close(in[i]);
            }
        }
        int v;
        if (n != (ssize_t)sizeof req || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds < 6 ||
            (req.ns_flags & ~BASE_NS_ALLOWED) || !(req.ns_flags & CLONE_NEWPID) || !(req.ns_flags & CLONE_NEWNS)) {
            v = -EINVAL;
        } else {
            pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)req.ns_flags | CLONE_PARENT | SIGCHLD, NULL, NULL,
                                       NULL, NULL);
            if (pid == 0) {
                if (place_request_fds(fds, nfds) < 0)
                    _exit(126);
                forked_tty = req.tty != 0;
                return;
            }
            v = pid < 0 ? -errno : (int)pid;
        }
        for (size_t i = 0; i < nfds; i++)
            close(fds[i]);
        ssize_t w = send(sock, &v, sizeof v, MSG_NOSIGNAL);
        (void)w;
    }
}
