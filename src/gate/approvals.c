/*
 * approvals.c - see approvals.h.
 */
#include "config.h"

#include "gate/approvals.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct approval {
    link_t node; /* in q->pending while pending */
    approval_queue *q;
    int id;
    int session;
    json_t *request; /* as clients show it, without the queue's fields */
    double created;  /* wall clock */
    uv_timer_t timer;
    approval_fn fn;
    approval_accept_fn accept;
    void *user;
};

static const char *const answer_names[] = {"once", "session", "persist", "deny", "stop", "forbid", "timeout", "gone"};

const char *approval_answer_name(approval_answer a)
{
    return (unsigned)a < sizeof answer_names / sizeof answer_names[0] ? answer_names[a] : "?";
}

int approval_answer_parse(const char *s, approval_answer *out)
{
    for (int i = ANSWER_ONCE; i <= ANSWER_FORBID; i++) {
        if (strcmp(s, answer_names[i]) == 0) {
            *out = (approval_answer)i;
            return 0;
        }
    }
    return -1;
}

void approval_queue_init(approval_queue *q, uv_loop_t *loop, uint64_t timeout_ms, const approval_hooks *hooks,
                    void *user)
{
    memset(q, 0, sizeof *q);
    link_init(&q->pending);
    q->loop = loop;
    q->timeout_ms = timeout_ms;
    q->hooks = hooks;
    q->user = user;
}

int approval_queue_open_log(approval_queue *q, const char *path, char *err, size_t errlen)
{
    q->log = eventlog_open(path, err, errlen);
    return q->log ? 0 : -1;
}

int approval_id(const approval_t *a)
{
    return a->id;
}

static json_t *approval_json(const approval_t *a)
{
    json_t *o = json_deep_copy(a->request);
    double now = wall_sec();
    json_object_set_new(o, "id", json_integer(a->id));
    json_object_set_new(o, "created", json_real(a->created));
    json_object_set_new(o, "age_seconds", json_real(now - a->created));
    /* With a timeout, when nobody's answer will deny it: clients show the
     * countdown. */
    if (a->q->timeout_ms)
        json_object_set_new(o, "expires_in_seconds",
                            json_real(a->created + (double)a->q->timeout_ms / 1000.0 - now));
    return o;
}

json_t *approvals_json(const approval_queue *q)
{
    json_t *list = json_array();
    for (link_t *l = q->pending.next; l != &q->pending; l = l->next)
        json_array_append_new(list, approval_json(link_entry(l, approval_t, node)));
    return list;
}

json_t *approvals_first_for_session(const approval_queue *q, int session)
{
    for (link_t *l = q->pending.next; l != &q->pending; l = l->next)
        if (link_entry(l, approval_t, node)->session == session)
            return approval_json(link_entry(l, approval_t, node));
    return NULL;
}

size_t approvals_waiting(const approval_queue *q)
{
    size_t n = 0;
    for (link_t *l = q->pending.next; l != &q->pending; l = l->next)
        n++;
    return n;
}

bool approvals_pending_for_session(const approval_queue *q, int id)
{
    for (link_t *l = q->pending.next; l != &q->pending; l = l->next)
        if (link_entry(l, approval_t, node)->session == id)
            return true;
    return false;
}

/* Durable record of a request or decision: approvals.jsonl, and the
 * session's own log. */
static void record(approval_t *a, const char *event, json_t *fields)
{
    approval_queue *q = a->q;
    json_object_set_new(fields, "approval", json_integer(a->id));
    if (a->session && q->hooks && q->hooks->session_log)
        q->hooks->session_log(q->user, a->session, event, json_deep_copy(fields));
    if (q->log)
        eventlog_write(q->log, event, fields, true);
    else
        json_decref(fields);
}

static void broadcast(approval_queue *q, json_t *ev)
{
    if (q->hooks && q->hooks->broadcast)
        q->hooks->broadcast(q->user, ev);
    else
        json_decref(ev);
}

static void on_timeout(uv_timer_t *t)
{
    approval_t *a = t->data;
    char err[128];
    approval_decide(a->q, a->id, ANSWER_TIMEOUT, "nobody answered in time", "timeout", NULL, err, sizeof err);
}

approval_t *approval_submit(approval_queue *q, int session, json_t *request, approval_fn fn,
                            approval_accept_fn accept, void *user)
{
    approval_t *a = xcalloc(1, sizeof *a);
    a->q = q;
    a->id = ++q->next_id;
    a->session = session;
    a->request = request;
    a->created = wall_sec();
    a->fn = fn;
    a->accept = accept;
    a->user = user;
    link_add(&q->pending, &a->node);
    uv_timer_init(q->loop, &a->timer);
    a->timer.data = a;
    if (q->timeout_ms)
        uv_timer_start(&a->timer, on_timeout, q->timeout_ms, 0);
    record(a, "approval_requested", approval_json(a));
    broadcast(q, json_pack("{s:s, s:o}", "event", "approval", "approval", approval_json(a)));
    return a;
}

static void on_timer_closed(uv_handle_t *h)
{
    approval_t *a = h->data;
    json_decref(a->request);
    free(a);
}

int approval_decide(approval_queue *q, int id, approval_answer answer, const char *note, const char *by,
                    const char *key, char *err, size_t errlen)
{
    approval_t *a = NULL;
    for (link_t *l = q->pending.next; l != &q->pending && !a; l = l->next)
        if (link_entry(l, approval_t, node)->id == id)
            a = link_entry(l, approval_t, node);
    if (!a) {
        snprintf(err, errlen, "no pending request %d (answered already, or withdrawn)", id);
        return -1;
    }
    if (a->accept && a->accept(a, answer, err, errlen, a->user) < 0)
        return -1;
    json_t *fields = json_pack("{s:s, s:s}", "answer", approval_answer_name(answer), "by", by ? by : "?");
    if (note && *note)
        json_object_set_new(fields, "note", json_string(note));
    if (key && *key)
        json_object_set_new(fields, "key", json_string(key));
    /* Logged (and synced) before the decision takes effect. */
    record(a, "approval_decided", json_deep_copy(fields));
    json_object_set_new(fields, "event", json_string("approval_done"));
    json_object_set_new(fields, "approval", json_integer(a->id));
    broadcast(q, fields);
    link_del(&a->node);
    uv_timer_stop(&a->timer);
    double waited = wall_sec() - a->created;
    a->fn(a, answer, note, waited > 0 ? waited : 0, a->user);
    uv_close((uv_handle_t *)&a->timer, on_timer_closed);
    return 0;
}

void approval_withdraw(approval_queue *q, approval_t *a, const char *why)
{
    char err[128];
    approval_decide(q, a->id, ANSWER_GONE, why, "requester", NULL, err, sizeof err);
}

void approval_queue_shutdown(approval_queue *q)
{
    while (!link_empty(&q->pending))
        approval_withdraw(q, link_entry(q->pending.next, approval_t, node), "the corral server is stopping");
    if (q->log)
        eventlog_close(q->log);
    q->log = NULL;
}
