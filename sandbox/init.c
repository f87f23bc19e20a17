/*
 * init.c - the per-session init (see init.h for what it promises).
 *
 * All signals init cares about are blocked and taken synchronously with
 * sigwaitinfo(), so there are no handlers and no races between a signal and
 * the reaping loop.  Descendants are found by walking /proc for processes
 * whose parent chain leads back to init; because init is a child subreaper,
 * an orphaned grandchild is re-parented to init and stays findable, so the
 * kill loop ends only when init has no children left at all.
 */
#include "config.h"

#include "init.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Signals forwarded to the command's process group. */
static const int forwarded[] = {SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static void init_error(const char *fmt, const char *a, const char *b)
{
    /* fd 2 is the session's terminal or pipe: the user sees this line. */
    char line[1024];
    int n = snprintf(line, sizeof line, fmt, a, b);
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
}

/* Parent pid of pid from /proc/PID/stat, or -1. */
static pid_t read_ppid(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* The command name may contain ')' and spaces: parse after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    char state;
    int ppid;
    if (sscanf(p + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return ppid;
}

/* SIGKILL every process below init; returns how many were signalled. */
static int kill_descendants(void)
{
    pid_t self = getpid();
    size_t n = 0, cap = 256;
    pid_t *pids = malloc(cap * sizeof *pids), *ppids = malloc(cap * sizeof *ppids);
    bool *mine = NULL;
    int killed = 0;
    DIR *d = opendir("/proc");
    if (!pids || !ppids || !d)
        goto out;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        pid_t pp = read_ppid((pid_t)pid);
        if (pp < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            pid_t *np = realloc(pids, cap * sizeof *pids), *npp = np ? realloc(ppids, cap * sizeof *ppids) : NULL;
            if (!np || !npp) {
                if (np)
                    pids = np;
                goto out;
            }
            pids = np;
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
        if (mine[i] && kill(pids[i], SIGKILL) == 0)
            killed++;
out:
    if (d)
        closedir(d);
    free(pids);
    free(ppids);
    free(mine);
    return killed;
}

/* Kill and reap everything below init; record the worker's status if it is
 * among the reaped. */
static void end_tree(pid_t worker, int *worker_status, bool *worker_done)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    for (;;) {
        int st;
        pid_t p;
        /* Reap first: with no children left there can be no descendants
         * (orphans are re-parented to us), and the /proc walk is skipped. */
        while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
            if (p == worker && !*worker_done) {
                *worker_status = st;
                *worker_done = true;
            }
        }
        if (p < 0 && errno == ECHILD)
            return;
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

/* Exit the way the worker did, so the server sees the same status. */
static void exit_like(int status)
{
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

static void run_worker(char **argv, const char *cwd, bool tty)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (setsid() < 0) {
        init_error("corral: setsid failed: %s%s\n", strerror(errno), "");
        _exit(126);
    }
    if (tty && ioctl(0, TIOCSCTTY, 0) < 0) {
        init_error("corral: cannot take the terminal: %s%s\n", strerror(errno), "");
        _exit(126);
    }
    if (cwd && chdir(cwd) < 0) {
        init_error("corral: cannot enter the directory %s: %s\n", cwd, strerror(errno));
        _exit(126);
    }
    execvp(argv[0], argv);
    int e = errno;
    init_error("corral: cannot run '%s': %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

int init_main(int argc, char **argv)
{
    bool tty = false;
    const char *cwd = NULL;
    pid_t server = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--tty") == 0)
            tty = true;
        else if (strcmp(argv[i], "--cwd") == 0 && i + 1 < argc)
            cwd = argv[++i];
        else if (strcmp(argv[i], "--server-pid") == 0 && i + 1 < argc)
            server = (pid_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            break;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: corral __init [--tty] [--cwd DIR] [--server-pid PID] -- CMD [ARG...]\n"
                        "(internal: the server starts every session through this)\n");
        return 2;
    }
    char **cmd = argv + i;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    for (size_t k = 0; k < sizeof forwarded / sizeof forwarded[0]; k++)
        sigaddset(&set, forwarded[k]);
    sigprocmask(SIG_BLOCK, &set, NULL);

    /* If the server dies, end the session rather than leave it running
     * unsupervised.  The check after prctl closes the race with a server
     * that died before it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (server > 0 && getppid() != server)
        return 1;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_DUMPABLE, 0);

    pid_t worker = fork();
    if (worker < 0) {
        init_error("corral: cannot start the command: %s%s\n", strerror(errno), "");
        return 126;
    }
    if (worker == 0)
        run_worker(cmd, cwd, tty);

    /* Let go of the terminal: once the command's tree is gone the server
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
        int sig = sigwaitinfo(&set, &info);
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
            end_tree(worker, &status, &done);
            exit_like(status);
        }
        if (sig == SIGTERM) {
            end_tree(worker, &status, &done);
            if (!done)
                status = SIGKILL; /* W_EXITCODE(0, SIGKILL): killed */
            exit_like(status);
        }
        if (kill(-worker, sig) < 0)
            kill(worker, sig);
    }
}
