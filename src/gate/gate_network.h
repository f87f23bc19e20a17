/*
 * gate_network.h - network hosts into the gate (docs/network.md): the
 * server's proxy (proxy.h) asks here about every (host, protocol, port) a
 * sandboxed process connects to, and this is one more origin of the one
 * gate: the rules, the session's allow and deny sets, then the approval
 * queue, its dialog, cache and log.  Concurrent connections of one session
 * to the same (host, protocol, port) share one question and its answer.
 *
 * Server-internal.
 */
#ifndef CORRAL_GATE_NETWORK_H
#define CORRAL_GATE_NETWORK_H

#include "net/proxy.h"
#include "server/server_int.h"

/* Start the server's proxy (srv->proxy) with the gate as its decider, the
 * sessions' event logs for its records; and stop it. */
void gate_network_start(server_t *srv);
void gate_network_shutdown(server_t *srv);
/* Session s ended: its listeners and connections close. */
void gate_network_session_ended(server_t *srv, session_t *s);

#endif
