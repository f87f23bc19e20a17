/*
 * server.h - the corral server: one libuv loop that owns every session, the
 * process store and the admin socket (docs/ARCHITECTURE.md).
 *
 * Included by src/server/ and src/cli/.
 */
#ifndef CORRAL_SERVER_H
#define CORRAL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "server/module.h"

/* Run the server in this process until SIGTERM/SIGINT or a shutdown
 * request.  ready_fd >= 0 receives "ok PID\n" once the socket listens, or
 * "error MESSAGE\n" if start-up fails; it is then closed.  The server runs
 * modules (a table ended by NULL; their order is the order of their hooks,
 * module.h).  Returns the exit status. */
int server_run(int ready_fd, const server_module *const *modules);

#endif
