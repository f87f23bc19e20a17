/*
 * answer.h - the answers a human (or the clock) can give to a request that
 * waits for approval (docs/ARCHITECTURE.md, "The gate"), shared by the queue (approvals.h)
 * and the gate that acts on them (gate.h).
 *
 * Included only in src/gate/.
 */
#ifndef CORRAL_ANSWER_H
#define CORRAL_ANSWER_H

typedef enum approval_answer {
    ANSWER_ONCE,    /* y: this time */
    ANSWER_SESSION, /* a: this exact request, for the rest of the session */
    ANSWER_PERSIST, /* p: a prefix rule in default.rules */
    ANSWER_DENY,    /* d / e: deny (with a note for the agent) */
    ANSWER_STOP,    /* n / Esc: deny, and the agent is told to stop and wait */
    ANSWER_FORBID,  /* a network host's d: deny, and save a network_rule denying it */
    ANSWER_TIMEOUT, /* nobody answered in [approvals] timeout: deny */
    ANSWER_GONE,    /* the requester went away */
} approval_answer;

/* "once", "session", "persist", "deny", "stop", "forbid", "timeout", "gone". */
const char *approval_answer_name(approval_answer a);
/* Parse one of the first six (a human's): 0, or -1. */
int approval_answer_parse(const char *s, approval_answer *out);

#endif
