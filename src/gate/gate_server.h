/*
 * gate_server.h - the one gate inside the server: every request past a
 * sandbox (gate.h) goes through gate_submit, whatever its origin.  The
 * state machine says what happens; this drives it: the rules for the
 * request's workspace, the approval queue (approvals.h), the check that an
 * approved request can actually run before anyone is asked, "always"
 * rules saved, the session's wait extended while a human decides, and the
 * origin's port for the parts that differ (how it launches, how its
 * requester hears the outcome).
 *
 * Ports: gate_exec.c (exec requests from clients), escalation.c (corral
 * escalate and the shell hooks' checks, from inside sessions).
 *
 * Server-internal.
 *
 * Included by src/gate/ and src/cli/.
 */
#ifndef CORRAL_GATE_SERVER_H
#define CORRAL_GATE_SERVER_H

#include "gate/approvals.h"
#include "gate/gate.h"
#include "server/log.h"
#include "server/server.h"
#include "server/waiter.h"

typedef struct gate_ticket gate_ticket;

/* How a request ends without running (mapped by each port to its wire). */
typedef enum gate_settle {
    SETTLE_FORBIDDEN, /* the policy refused it, or it could not be asked */
    SETTLE_DENIED,    /* a human said no, or nobody answered in time */
    SETTLE_FAILED,    /* it was allowed but cannot run (bad path, plan, spawn) */
    SETTLE_NO_RETRY,  /* the retry was declined: the first run's reply stands */
} gate_settle;

typedef struct gate_port {
    /* It waits for a human now, as request approval (may be NULL). */
    void (*pending)(gate_ticket *t, int approval);
    /* Run it as l says.  0; or -1 with err (it then settles as FAILED).
     * The port owns the ticket from here and calls gate_done when it is
     * finished with it (at once, or when what it started ends). */
    int (*launch)(gate_ticket *t, const gate_launch *l, char *err, size_t errlen);
    /* Nothing runs: tell the requester message.  The gate then calls
     * gate_done. */
    void (*settle)(gate_ticket *t, gate_settle how, const char *message);
    /* Free the port's struct around t (the request is freed already). */
    void (*release)(gate_ticket *t);
} gate_port;

/* A request in the gate.  A port embeds it first in its own struct. */
struct gate_ticket {
    gate_request g;
    server_t *srv;
    const gate_port *port;
    approval_t *approval; /* while a human decides */
    link_t node;          /* in the gate's list of tickets */
    bool done;
};

/* Start t (g filled in by its port): judged, then refused, asked for, or
 * launched. */
void gate_submit(server_t *srv, gate_ticket *t, const gate_port *port);
/* The requester is gone: a pending question is withdrawn (clients close
 * their dialogs, and hear why: a sentence such as "the agent's call was
 * cancelled") and nothing runs.  t is freed unless its port launched
 * something it still owns. */
void gate_withdraw(gate_ticket *t, const char *why);
/* A launched exec finished with run: true when the gate took it over (the
 * one retry is asked, or runs from the cache); false, the caller replies
 * as usual and then calls gate_done. */
bool gate_finished(gate_ticket *t, const gate_run *run);
/* The port is finished with t: it leaves the gate and is freed. */
void gate_done(gate_ticket *t);

/* The approval_pending event for a requester: which request it waits
 * on and how to answer it. */
json_t *gate_pending_event(server_t *srv, int approval, const gate_request *g);

/* The rules for a request in workspace ws: the user's, plus ws's own when
 * the user trusts it; what changed on disk is reloaded first and attached
 * screens hear of rules that could not be loaded. */
const rules_t *gate_rules_for(server_t *srv, const char *ws);
/* The gate as a module: at start the policy's settings, rules, queue and
 * log; at shutdown every question withdrawn. */
extern const server_module gate_server_module;
/* Someone could answer a request now: a screen (a subscribed client) is
 * attached, or [approvals] timeout will answer it. */
bool gate_someone_can_answer(server_t *srv);
/* How many requests wait for a person's answer now. */
size_t gate_server_waiting(server_t *srv);

/* ---- gate_exec.c: exec requests (corral exec, an agent's exec_command) ---- */
typedef struct exec_params {
    uint32_t yield_ms;
    int64_t max_tokens;
    bool stream, raw;
} exec_params;
/* The protocol's exec: r is judged with its sandbox fields from the
 * request (sandbox_permissions, additional_permissions, justification,
 * prefix_rule), then run, asked for, or refused; the reply comes when it
 * has run (or was refused).  A closing connection's requests still in the
 * gate are withdrawn. */
extern const server_module gate_exec_module;

#endif
