/*
 * init.h - the per-session init: the first process of every session.
 *
 * It becomes a child subreaper (so every orphan of the session is re-parented
 * to it, never lost to the system's init), starts the command in a new
 * session with the PTY as its controlling terminal, reaps orphans, forwards
 * SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to the command's process group, and
 * when the command exits (or the server asks with SIGTERM, or the server
 * dies) kills every remaining descendant and exits with the command's status:
 * no process outlives its session.
 */
#ifndef CORRAL_INIT_H
#define CORRAL_INIT_H

/* argv: "__init" [--tty] [--cwd DIR] -- CMD ARGS...  Returns only on a usage
 * error (the exit code to use). */
int init_main(int argc, char **argv);

#endif
