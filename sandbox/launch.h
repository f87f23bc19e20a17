/*
 * launch.h - the one way corral starts a session's process tree.
 *
 * The caller (the server) prepares the session's stdio (a PTY slave, or pipes)
 * and asks for a launch; this module forks and execs corral's own binary as
 * the session's init (init.h), which starts the command.  The sandbox work
 * (profile -> launch plan -> namespaces, mounts, seccomp, ...) plugs in here;
 * until it lands every launch runs with profile "full", i.e. unconfined, but
 * still under an init that keeps the whole tree together.
 */
#ifndef CORRAL_LAUNCH_H
#define CORRAL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct launch_request {
    char *const *argv;    /* the command; argv[0] is looked up in PATH */
    const char *cwd;      /* absolute directory to start in */
    char *const *envp;    /* the command's whole environment */
    const char *profile;  /* sandbox profile name; only "full" so far */
    int stdin_fd;         /* become the command's fds 0, 1 and 2 */
    int stdout_fd;
    int stderr_fd;
    bool tty;             /* stdin_fd is a PTY slave: make it the ctty */
} launch_request;

/* The init's pid, or -1 with a message in err.  Only this module forks. */
pid_t launch_start(const launch_request *req, char *err, size_t errlen);

/* Ask a session's init to end its whole process tree (it SIGKILLs every
 * descendant, reaps them and exits).  0 or -errno. */
int launch_kill_tree(pid_t init_pid);

#endif
