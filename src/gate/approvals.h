/*
 * approvals.h - the queue of requests waiting for a human, and its log
 * (docs/ARCHITECTURE.md, "The gate").  What a request is and what an answer does belong to
 * the gate (gate.h, gate_server.c); here a request is the JSON object
 * clients show, with an id.  Every attached client hears of each request
 * (the queue's broadcast hook), the first answer wins and the others are
 * told it is done.  Each request and each decision is appended to
 * approvals.jsonl (and, through the session_log hook, to the session's
 * events.jsonl) and synced before the decision takes effect.  A request
 * nobody answers within [approvals] timeout is denied (ANSWER_TIMEOUT).
 *
 * Included by src/gate/ and src/server/.
 */
#ifndef CORRAL_APPROVALS_H
#define CORRAL_APPROVALS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gate/answer.h"
#include "record/eventlog.h"
#include "base/list.h"

typedef struct approval approval_t;

/* Called once with the decision: a->... is still valid during the call.
 * waited: seconds the request spent in the queue. */
typedef void (*approval_fn)(approval_t *a, approval_answer answer, const char *note, double waited, void *user);
/* Asked before an answer is taken: -1 with err refuses it (the request
 * stays pending and the answering client gets err).  May be NULL. */
typedef int (*approval_accept_fn)(approval_t *a, approval_answer answer, char *err, size_t errlen, void *user);

typedef struct approval_hooks {
    /* An event for every subscribed client (stolen). */
    void (*broadcast)(void *user, json_t *event);
    /* A copy of a record for session's events.jsonl (stolen). */
    void (*session_log)(void *user, int session, const char *event, json_t *fields);
} approval_hooks;

typedef struct approval_queue {
    link_t pending; /* approval_t, oldest first */
    int next_id;
    uv_loop_t *loop;
    uint64_t timeout_ms; /* 0: none */
    eventlog_t *log;     /* approvals.jsonl, or NULL */
    const approval_hooks *hooks;
    void *user;
} approval_queue;

void approval_queue_init(approval_queue *q, uv_loop_t *loop, uint64_t timeout_ms, const approval_hooks *hooks,
                    void *user);
/* Log to path (approvals.jsonl): 0, or -1 with err (nothing is logged). */
int approval_queue_open_log(approval_queue *q, const char *path, char *err, size_t errlen);
/* Withdraw everything still pending and close the log. */
void approval_queue_shutdown(approval_queue *q);

/* Queue a request about session (0: none) that clients show as request
 * (stolen; the queue adds "id", "created", "age_seconds" and, with a
 * timeout, "expires_in_seconds").  fn is called exactly once. */
approval_t *approval_submit(approval_queue *q, int session, json_t *request, approval_fn fn,
                            approval_accept_fn accept, void *user);
int approval_id(const approval_t *a);
/* Answer pending request id; key is the keypress that chose it (logged),
 * by who answered.  0, or -1 with err (no such request, or refused). */
int approval_decide(approval_queue *q, int id, approval_answer answer, const char *note, const char *by,
                    const char *key, char *err, size_t errlen);
/* Nobody waits for a's answer any more: drop it, telling clients it is
 * done and why (the note of the "gone" answer, which screens show). */
void approval_withdraw(approval_queue *q, approval_t *a, const char *why);

/* Every pending request, oldest first, as clients show them. */
json_t *approvals_json(const approval_queue *q);
/* Some request about session id waits for an answer. */
bool approvals_pending_for_session(const approval_queue *q, int id);
/* The oldest request pending about session, as clients see it (a new
 * reference), or NULL. */
json_t *approvals_first_for_session(const approval_queue *q, int session);
/* How many requests wait for an answer. */
size_t approvals_waiting(const approval_queue *q);

#endif
