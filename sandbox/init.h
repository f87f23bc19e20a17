/*
 * init.h - the per-session init: the first process of every session.
 *
 * Confined sessions (__sandbox-init): pid 1 of the sandbox's namespaces.  It
 * reads the launch plan from fd 3, builds the mount view, gives up every
 * privilege, installs Landlock and the seccomp filter on itself, reports
 * ready on fd 4 (closing it; or writing why not), makes itself
 * non-dumpable, and starts the command.
 *
 * Unconfined sessions (__init, the "full" profile): a child subreaper in the
 * launcher's namespaces.
 *
 * Either way it starts the command in a new session with the terminal as its
 * controlling tty, reaps orphans, forwards SIGINT/SIGHUP/SIGQUIT/SIGUSR1/
 * SIGUSR2 to the command's process group, and when the command exits (or the
 * launcher asks with SIGTERM, or the launcher dies) kills every remaining
 * process of the tree and exits with the command's status: no process
 * outlives its session.
 *
 * Included by sandbox/ and src/cli/.
 */
#ifndef CORRAL_INIT_H
#define CORRAL_INIT_H

/* argv: "__init" [--tty] [--cwd DIR] -- CMD ARGS...  Returns only on a
 * usage error (the exit code to use). */
int init_main(int argc, char **argv);

/* argv: "__sandbox-init" [--tty] [--cgroup-pids]; fds 3 and 4 as above. */
int sandbox_init_main(int argc, char **argv);

#endif
