/*
 * init.c - the per-session init (see init.h for what it promises).
 *
 * All signals init cares about are blocked and taken synchronously with
 * sigwaitinfo(), so there are no handlers and no races between a signal and
 * the reaping loop.  Inside a pid namespace the init is pid 1 and ends the
 * tree with kill(-1, SIGKILL); without one (the unconfined "full" profile)
 * it is a child subreaper and finds descendants by walking /proc, so an
 * orphaned grandchild, re-parented to it, is never missed.
 */
#include "config.h"

#include "init.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "landlock.h"
#include "launch.h"
#include "mounts.h"
#include "netns.h"
#include "plan.h"
#include "privs.h"
#include "rlimits.h"
#include "sbutil.h"
#include "filter.h"

extern char **environ;

/* The status pipe to the launcher (fd 4 of a confined init, else -1). */
static int status_fd = -1;

/* Signals forwarded to the command's process group. */
static const int forwarded[] = {SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static void say(int fd, const char *a, const char *b, const char *c)
{
    /* fd 2 is the session's terminal or pipe: the user sees this line. */
    const char *parts[] = {a, b, c, "\n"};
    for (int i = 0; i < 4; i++) {
        if (!parts[i])
            continue;
        ssize_t w = write(fd, parts[i], strlen(parts[i]));
        (void)w;
    }
}

/* SIGKILL every process below init (found through /proc). */
static void kill_descendants(void)
{
    pid_t self = getpid();
    size_t n = 0, cap = 256;
    pid_t *pids = malloc(cap * sizeof *pids), *ppids = malloc(cap * sizeof *ppids);
    bool *mine = NULL;
    DIR *d = opendir("/proc");
    if (!pids || !ppids || !d)
        goto out;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        pid_t pp = sb_parent_pid((pid_t)pid);
        if (pp < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            pid_t *np = realloc(pids, cap * sizeof *pids);
            if (!np)
                goto out;
            pids = np;
            pid_t *npp = realloc(ppids, cap * sizeof *ppids);
            if (!npp)
                goto out;
            ppids = npp;
        }
        pids[n] = (pid_t)pid;
        ppids[n] = pp;
        n++;
    }
    mine = calloc(n ? n : 1, sizeof *mine);
    if (!mine)
        goto out;
    /* Grow the set of descendants until it stops changing. */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            if (mine[i])
                continue;
            bool parent_mine = ppids[i] == self;
            for (size_t j = 0; j < n && !parent_mine; j++)
                parent_mine = mine[j] && pids[j] == ppids[i];
            if (parent_mine) {
                mine[i] = true;
                changed = true;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (mine[i])
            kill(pids[i], SIGKILL);
out:
    if (d)
        closedir(d);
    free(pids);
    free(ppids);
    free(mine);
}

/* Kill and reap everything below init; record the worker's status if it is
 * among the reaped. */
static void end_tree(pid_t worker, int *worker_status, bool *worker_done, bool pid1)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    for (;;) {
        int st;
        pid_t p;
        /* Reap first: with no children left there can be no descendants
         * (orphans are re-parented to us), and the kill is skipped. */
        while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
            if (p == worker && !*worker_done) {
                *worker_status = st;
                *worker_done = true;
            }
        }
        if (p < 0 && errno == ECHILD)
            return;
        if (pid1)
            kill(-1, SIGKILL); /* every other process of the namespace */
        else
            kill_descendants();
        while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
            if (p == worker && !*worker_done) {
                *worker_status = st;
                *worker_done = true;
            }
        }
        if (p < 0 && errno == ECHILD)
            return;
        /* Children remain (dying, or just re-parented): wait a moment. */
        struct timespec ts = {0, 10 * 1000 * 1000};
        sigtimedwait(&chld, NULL, &ts);
    }
}

/* Exit the way the worker did, so the launcher sees the same status (a
 * pid 1 cannot re-raise a signal on itself: it reports the status first). */
static __attribute__((noreturn)) void exit_like(int status)
{
    if (status_fd >= 0) {
        char line[32];
        snprintf(line, sizeof line, "S %d\n", status);
        ssize_t w = write(status_fd, line, strlen(line));
        (void)w;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* The session channel the launcher passed (fd 3 of an unconfined init, 6
 * of a confined one), or -1: the command gets it as its fd 3, the init
 * itself lets go of it. */
static int chan_fd = -1;

/* Keep fd as the session channel when it is a socket. */
static void take_channel(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        chan_fd = fd;
    }
}

static __attribute__((noreturn)) void run_worker(char **argv, char **envp, const char *cwd, bool tty)
{
    if (chan_fd >= 0 && dup2(chan_fd, 3) < 0) { /* dup2 clears close-on-exec */
        say(2, "corral: cannot pass the session channel: ", strerror(errno), NULL);
        _exit(126);
    }
    if (chan_fd == 3)
        fcntl(3, F_SETFD, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (setsid() < 0) {
        say(2, "corral: setsid failed: ", strerror(errno), NULL);
        _exit(126);
    }
    if (tty && ioctl(0, TIOCSCTTY, 0) < 0) {
        say(2, "corral: cannot take the terminal: ", strerror(errno), NULL);
        _exit(126);
    }
    if (cwd && chdir(cwd) < 0) {
        say(2, "corral: cannot enter the directory ", cwd, ": cannot enter it");
        _exit(126);
    }
    if (envp)
        environ = envp; /* execvp searches this PATH */
    execvp(argv[0], argv);
    int e = errno;
    say(2, "corral: cannot run '", argv[0], e == ENOENT ? "': No such file or directory" : "': cannot execute");
    _exit(e == ENOENT ? 127 : 126);
}

/* Start the command and supervise it until its tree is gone.  Signals
 * were blocked by the caller. */
static __attribute__((noreturn)) void supervise(char **argv, char **envp, const char *cwd, bool tty, bool pid1,
                                                const sigset_t *set)
{
    /* vfork: the worker borrows init's memory until its exec, so no copy
     * of init's address space is made (and torn down again at the exec)
     * for every command.  run_worker only makes system calls, assigns
     * environ (init reads it no more) and never returns. */
    pid_t worker = vfork();
    if (worker < 0) {
        say(2, "corral: cannot start the command: ", strerror(errno), NULL);
        _exit(126);
    }
    if (worker == 0)
        run_worker(argv, envp, cwd, tty);
    if (chan_fd >= 0)
        close(chan_fd);

    /* Let go of the terminal: once the command's tree is gone the launcher
     * must see end-of-file even while init is still reaping. */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }

    int status = 0;
    bool done = false;
    for (;;) {
        siginfo_t info;
        int sig = sigwaitinfo(set, &info);
        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            int st;
            pid_t p;
            while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
                if (p == worker) {
                    status = st;
                    done = true;
                }
            }
            if (!done)
                continue;
            end_tree(worker, &status, &done, pid1);
            exit_like(status);
        }
        if (sig == SIGTERM) {
            end_tree(worker, &status, &done, pid1);
            if (!done)
                status = SIGKILL; /* W_EXITCODE(0, SIGKILL): killed */
            exit_like(status);
        }
        if (kill(-worker, sig) < 0)
            kill(worker, sig);
    }
}

static void block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGTERM);
    for (size_t k = 0; k < sizeof forwarded / sizeof forwarded[0]; k++)
        sigaddset(set, forwarded[k]);
    sigprocmask(SIG_BLOCK, set, NULL);
}

int init_main(int argc, char **argv)
{
    bool tty = false;
    const char *cwd = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--tty") == 0)
            tty = true;
        else if (strcmp(argv[i], "--cwd") == 0 && i + 1 < argc)
            cwd = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            break;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: corral __init [--tty] [--cwd DIR] -- CMD [ARG...]\n"
                        "(internal: the server starts every unconfined session through this)\n");
        return 2;
    }
    sigset_t set;
    block_signals(&set);
    /* If the launcher dies, end the session rather than leave it running
     * unsupervised. */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        return 1;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_DUMPABLE, 0);
    take_channel(3);
    supervise(argv + i, NULL, cwd, tty, false, &set);
}

/* Report a setup failure on the status pipe (the launcher shows it). */
static __attribute__((noreturn)) void setup_failed(const char *what)
{
    say(4, "E ", what, NULL);
    _exit(126);
}

static int start_from_base(void);

/* The launcher's next go byte on fd 5; 0 when it ended without one. */
static char go_byte(void)
{
    char go = 0;
    while (read(5, &go, 1) < 0 && errno == EINTR)
        ;
    return go;
}

int sandbox_init_main(int argc, char **argv)
{
    /* --base: build the view and hold it (launch.h, sb_base); --from-base:
     * a command started in a copy of a held view, which renews only its
     * own mounts. */
    bool tty = false, base = false, from_base = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tty") == 0)
            tty = true;
        else if (strcmp(argv[i], "--base") == 0)
            base = true;
        else if (strcmp(argv[i], "--from-base") == 0)
            from_base = true;
    }
    if (fcntl(3, F_GETFD) < 0 || fcntl(4, F_GETFD) < 0 || fcntl(5, F_GETFD) < 0) {
        fprintf(stderr, "corral __sandbox-init: internal: the launcher starts it with the plan on fd 3, its "
                        "status pipe on fd 4 and its go on fd 5\n");
        return 2;
    }
    /* Blocking writes: the few status lines always fit in the pipe. */
    fcntl(4, F_SETFL, fcntl(4, F_GETFL) & ~O_NONBLOCK);
    fcntl(4, F_SETFD, FD_CLOEXEC);
    sigset_t set;
    block_signals(&set);
    prctl(PR_SET_PDEATHSIG, SIGTERM);

    size_t len;
    char *text = sb_read_fd(3, &len);
    close(3);
    take_channel(6);
    if (!text)
        setup_failed("cannot read the launch plan");
    static sb_plan plan;
    char err[1024];
    if (sb_plan_parse(text, len, &plan, err, sizeof err) < 0)
        setup_failed(err);
    free(text);
    /* The launcher's go, in steps on one pipe (launch.c): 'P' once the
     * mount points are made (the view may be built); 'G' or 'g' once this
     * process is in its cgroup (it may fork); then the filter it compiled
     * meanwhile (sb_seccomp_send), read when it is needed (a command from
     * a pre-built sandbox has its holder's). */
    if (go_byte() != 'P')
        _exit(126);
    if (base) {
        /* Only the view: the commands started from it make the rest. */
        if (sb_mounts_apply(&plan, true, err, sizeof err) < 0)
            setup_failed(err);
        char cgroup_go = go_byte();
        if (cgroup_go != 'G' && cgroup_go != 'g')
            _exit(126);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* its SIGTERM is blocked */
        prctl(PR_SET_DUMPABLE, 0);
        sb_seccomp_receive(5, plan.net);
        close(5);
        if (!sb_seccomp_have_precompiled(plan.net) && sb_seccomp_precompile(plan.net, err, sizeof err) < 0)
            setup_failed(err);
        say(4, "R", NULL, NULL);
        close(4);
        sb_plan_free(&plan);
        memset(&plan, 0, sizeof plan);
        int sock = chan_fd;
        chan_fd = -1;
        sb_base_serve(sock); /* a command's child comes back here */
        return start_from_base();
    }
    if (from_base) {
        if (sb_mounts_renew(&plan, err, sizeof err) < 0)
            setup_failed(err);
    } else if (sb_mounts_apply(&plan, false, err, sizeof err) < 0)
        setup_failed(err);
    /* In its cgroup before anything forks, and the cgroup namespace rooted
     * there. */
    char cgroup_go = go_byte();
    if (cgroup_go != 'G' && cgroup_go != 'g')
        _exit(126);
    bool cgroup_pids = cgroup_go == 'G';
    if ((plan.ns_flags & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
        setup_failed("cannot create the cgroup namespace");
    /* Without its layer the home stays read-only: Landlock too. */
    for (size_t i = 0; plan.layer_home && !plan.layer_mounted && i < plan.n_write_roots; i++) {
        if (strcmp(plan.write_roots[i], plan.layer_home) == 0) {
            free(plan.write_roots[i]);
            plan.write_roots[i] = plan.write_roots[--plan.n_write_roots];
            plan.write_roots[plan.n_write_roots] = NULL;
            break;
        }
    }
    if (sethostname("corral", 6) < 0)
        setup_failed("cannot set the host name");
    if ((plan.ns_flags & CLONE_NEWNET) && sb_netns_loopback_up(err, sizeof err) < 0)
        setup_failed(err);
    if (plan.net == SB_NET_PROXY && sb_netns_proxy_listeners(chan_fd, err, sizeof err) < 0)
        setup_failed(err);
    /* A second lock on nested user namespaces beside the filter (best
     * effort: the filter alone already refuses them). */
    int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t w = write(fd, "0", 1);
        (void)w;
        close(fd);
    }
    if (sb_rlimits_apply(&plan.limits, cgroup_pids, err, sizeof err) < 0)
        setup_failed(err);
    if (sb_drop_privileges(err, sizeof err) < 0)
        setup_failed(err);
    if (sb_landlock_apply(&plan, err, sizeof err) < 0)
        setup_failed(err);
    if (!sb_seccomp_have_precompiled(plan.net))
        sb_seccomp_receive(5, plan.net);
    close(5);
    if (sb_seccomp_install(plan.net, err, sizeof err) < 0)
        setup_failed(err);
    prctl(PR_SET_DUMPABLE, 0);
    status_fd = 4;
    say(4, "R", NULL, NULL);
    supervise(plan.argv, plan.envp, NULL, tty, getpid() == 1, &set);
}

/* A command's init forked by a base's holder (launch.h, sb_base_serve):
 * its fds are in place; the rest is the exec'd init's from-base path. */
static int start_from_base(void)
{
    bool tty = sb_base_forked_tty();
    char *args[] = {"corral-init", "__sandbox-init", "--from-base", tty ? "--tty" : NULL, NULL};
    return sandbox_init_main(tty ? 4 : 3, args);
}
