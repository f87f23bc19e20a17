/*
 * log.h - the server's log: its stderr, which a background server sends to
 * server.log in the state directory.
 *
 * Included by the server core and its modules: src/server/, src/gate/ and
 * src/snap/.
 */
#ifndef CORRAL_SERVER_LOG_H
#define CORRAL_SERVER_LOG_H

/* A line on the server's log: time, pid, the message. */
void server_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
