/*
 * server.h - the corral server: one libuv loop that owns every session, the
 * process store and the admin socket (docs/ARCHITECTURE.md).
 */
#ifndef CORRAL_SERVER_H
#define CORRAL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

/* Run the server in this process until SIGTERM/SIGINT or a shutdown
 * request.  ready_fd >= 0 receives "ok PID\n" once the socket listens, or
 * "error MESSAGE\n" if start-up fails; it is then closed.  Returns the exit
 * status. */
int server_run(int ready_fd);

/* Start a server in the background (a new session, stdio to the server log)
 * and wait until it listens.  Returns 0 when a server is ready (including
 * one that another process started at the same moment), or -1 with a
 * message in err. */
int server_spawn_daemon(char *err, size_t errlen, int *pid_out);

#endif
