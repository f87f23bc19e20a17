/*
 * launch.c - fork and exec a session's init with the session's stdio.
 *
 * The child execs /proc/self/exe (corral itself, even if the file was
 * replaced since the server started) so that init runs in a fresh process
 * image: nothing of the server's threads, allocator state or event loop
 * survives into a session.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Close every fd from lowfd up, with close_range where the kernel has it. */
static void close_from(int lowfd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = lowfd; fd < max; fd++)
        close(fd);
}

/* In the child: make fds 0-2 the requested ones even if they overlap. */
static int setup_stdio(const launch_request *req)
{
    int src[3] = {req->stdin_fd, req->stdout_fd, req->stderr_fd};
    int high[3];
    for (int i = 0; i < 3; i++) {
        high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 10);
        if (high[i] < 0)
            return -1;
    }
    for (int i = 0; i < 3; i++)
        if (dup2(high[i], i) < 0)
            return -1;
    return 0;
}

pid_t launch_start(const launch_request *req, char *err, size_t errlen)
{
    if (strcmp(req->profile, "full") != 0) {
        snprintf(err, errlen, "sandbox profile '%s' is not available in this build (only 'full')", req->profile);
        return -1;
    }
    size_t argc = 0;
    while (req->argv[argc])
        argc++;
    char pidbuf[24];
    snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
    const char **args = calloc(argc + 10, sizeof *args);
    if (!args) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    args[n++] = "corral-init";
    args[n++] = "__init";
    args[n++] = "--server-pid";
    args[n++] = pidbuf;
    if (req->tty)
        args[n++] = "--tty";
    args[n++] = "--cwd";
    args[n++] = req->cwd;
    args[n++] = "--";
    for (size_t i = 0; i < argc; i++)
        args[n++] = req->argv[i];
    args[n] = NULL;

    /* Block every signal across fork: a handler of the caller's (libuv's,
     * which forwards signals to the event loop through a pipe) must never
     * run in the child, where it would report a signal to the parent's
     * loop.  The child resets every disposition before unblocking. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(err, errlen, "fork failed: %s", strerror(e));
        free(args);
        return -1;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls from here to exec. */
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP)
                signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (setup_stdio(req) < 0)
            _exit(126);
        close_from(3);
        setpgid(0, 0);
        execve("/proc/self/exe", (char *const *)args, req->envp);
        static const char msg[] = "corral: cannot start the session init (exec /proc/self/exe failed)\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(args);
    return pid;
}

int launch_kill_tree(pid_t init_pid)
{
    if (init_pid <= 0)
        return -EINVAL;
    return kill(init_pid, SIGTERM) == 0 ? 0 : -errno;
}
