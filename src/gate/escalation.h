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
 *
 * Included by src/gate/ and src/cli/.
 */
#ifndef CORRAL_ESCALATION_H
#define CORRAL_ESCALATION_H

#include "server/module.h"

/* Escalations as a module: the session channel's requests come here;
 * a session's requests are withdrawn and what they started ends when its
 * tree is gone; escalated commands are reaped; at shutdown everything
 * ends. */
extern const server_module escalation_module;

#endif
