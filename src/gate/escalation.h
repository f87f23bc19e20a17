/*
 * escalation.h - requests from inside a session into the gate: corral
 * escalate (run a command outside the session's sandbox, or in a wider
 * one, with the requester's stdio) and the shell hooks' checks of typed
 * lines.  Their paths are resolved on the server (a request's cwd and
 * write roots come from code in the sandbox), the session keeps its
 * workspace and its own deny entries, and an approved escalation runs as
 * a child of the server that ends with its requester or its session.
 *
 * The session channel (sesschan.c) carries the messages; replies go to
 * the reply socket each request brings (wire format in sesschan.h).
 *
 * Server-internal.
 */
#ifndef CORRAL_ESCALATION_H
#define CORRAL_ESCALATION_H

#include "protocol/chanmsg.h"
#include "server/server_int.h"

/* A request from session s: its message, decoded (chanmsg.h; verb
 * escalate, check or mark), the requester's reply socket and (escalate)
 * its stdin, stdout, stderr (-1 when absent).  Takes the fds; m stays
 * the caller's. */
void escalation_request(server_t *srv, session_t *s, const chan_msg *m, int reply, int stdio[3]);
/* Requests of session id still open (waiting or running). */
size_t escalation_open_count(server_t *srv, int id);
/* Session id's tree is gone: its requests are withdrawn, what they
 * started ends. */
void escalation_session_ended(server_t *srv, int id);
/* A child was reaped that is not a session's init: an escalated
 * command's?  true when it was one. */
bool escalation_reaped(server_t *srv, pid_t pid, int status);
/* Shutting down: everything ends. */
void escalation_shutdown(server_t *srv);

#endif
