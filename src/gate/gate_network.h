/*
 * gate_network.h - network hosts into the gate (docs/network.md): the
 * server's proxy (proxy.h) asks here about every (host, protocol, port) a
 * sandboxed process connects to, and this is one more origin of the one
 * gate: the rules, the session's allow and deny sets, then the approval
 * queue, its dialog, cache and log.  Concurrent connections of one session
 * to the same (host, protocol, port) share one question and its answer.
 *
 * Server-internal.
 *
 * Included by src/gate/ and src/cli/.
 */
#ifndef CORRAL_GATE_NETWORK_H
#define CORRAL_GATE_NETWORK_H

#include "server/module.h"

/* As a module: at start the server's proxy (server_proxy) with the gate as
 * its decider and the sessions' event logs for its records, stopped at
 * shutdown; a session's listeners and connections close when it ends. */
extern const server_module gate_network_module;

#endif
