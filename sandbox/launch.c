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
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

    /* posix_spawn (a vfork-style clone in glibc) rather than fork: the
     * server's memory is not copied, no handler of the server's runs in the
     * child, every signal is reset to its default and unblocked, and only
     * fds 0-2 survive into the init. */
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&fa, req->stdin_fd, 0);
    posix_spawn_file_actions_adddup2(&fa, req->stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, req->stderr_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    /* Its own process group: a Ctrl-C meant for a foreground server does
     * not reach the sessions. */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    /* CORRAL_EXE names corral's binary when /proc/self/exe is not it (a
     * server run under valgrind); it is the caller's own environment, so it
     * crosses no trust boundary. */
    const char *exe = getenv("CORRAL_EXE");
    if (!exe || exe[0] != '/')
        exe = "/proc/self/exe";
    int rc = posix_spawn(&pid, exe, &fa, &attr, (char *const *)args, req->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(args);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the session init (%s): %s", exe, strerror(rc));
        return -1;
    }
    return pid;
}

int launch_kill_tree(pid_t init_pid)
{
    if (init_pid <= 0)
        return -EINVAL;
    return kill(init_pid, SIGTERM) == 0 ? 0 : -errno;
}
