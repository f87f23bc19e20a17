/*
 * gate_server.c - see gate_server.h.
 */
#include "config.h"

#include "gate/gate_server.h"
#include "gate/notify.h"
#include "protocol/approval_text.h"
#include "base/paths.h"
#include "protocol/proto.h"
#include "sandbox/plan.h"
#include "base/quote.h"
#include "policy/rules_ws.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the gate keeps on the server (server_attach). */
typedef struct gate_server_state {
    struct rules_ws *rules_ws; /* built-in, user and trusted-workspace rules, reloaded on change */
    char *rules_error;         /* rule files that could not be loaded, or NULL */
    approval_queue approvals;
    link_t tickets;            /* gate_ticket.node: requests in the gate */
} gate_server_state;

static const int gate_state_key;

static gate_server_state *G(server_t *srv)
{
    return server_attached(srv, &gate_state_key);
}

/* ---- rules --------------------------------------------------------------------- */

static void log_rules_text(const char *what, const char *text)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    server_log("%s%.*s", what, (int)n, text);
}

/* The rules' error follows what rules_ws could not load; attached screens
 * learn of a change now, not at their next start. */
static void refresh_rules_error(server_t *srv)
{
    char *now = rules_ws_errors(G(srv)->rules_ws);
    bool same = (!now && !G(srv)->rules_error) || (now && G(srv)->rules_error && strcmp(now, G(srv)->rules_error) == 0);
    free(G(srv)->rules_error);
    G(srv)->rules_error = now;
    if (!same) {
        conn_broadcast(json_pack("{s:s, s:s?}", "event", "rules", "rules_error", now));
        if (now)
            log_rules_text("rules not loaded: ", now);
    }
}

const rules_t *gate_rules_for(server_t *srv, const char *ws)
{
    char *note = NULL;
    bool changed = false;
    const rules_t *r = rules_ws_for(G(srv)->rules_ws, ws, &note, &changed);
    if (note)
        log_rules_text("", note);
    free(note);
    if (changed)
        refresh_rules_error(srv);
    return r;
}

/* "p": the gate's derived rule, appended to the user's default.rules. */
static int save_rule(server_t *srv, char **tokens, char *err, size_t errlen)
{
    size_t n = 0;
    while (tokens[n])
        n++;
    char *dir = paths_config_dir();
    char *path = xasprintf("%s/rules/default.rules", dir);
    free(dir);
    char perr[512];
    int rc = rules_append_prefix_rule(path, tokens, n, perr, sizeof perr);
    if (rc < 0)
        snprintf(err, errlen, "cannot save the rule: %s", perr);
    free(path);
    if (rc == 0) {
        rules_ws_reload_user(G(srv)->rules_ws);
        refresh_rules_error(srv);
    }
    return rc;
}

/* ---- the state machine, driven ----------------------------------------------------- */

void gate_done(gate_ticket *t)
{
    if (t->done)
        return;
    t->done = true;
    link_del(&t->node);
    gate_request_free(&t->g);
    t->port->release(t);
}

static void settle(gate_ticket *t, gate_settle how, const char *message)
{
    t->port->settle(t, how, message);
    gate_done(t);
}

static void step(gate_ticket *t, gate_next next);

static void on_answer(approval_t *a, approval_answer answer, const char *note, double waited, void *user)
{
    (void)a;
    gate_ticket *t = user;
    t->approval = NULL;
    /* The requester's yield does not run out while a human decides. */
    session_t *s = t->g.session ? server_find(t->srv, t->g.session) : NULL;
    if (s)
        waiter_extend(s, (uint64_t)(waited * 1000.0));
    step(t, gate_answer(&t->g, answer, note));
}

/* A network answer that persists: p allows, d denies, a network_rule
 * naming the exact host in the user's default.rules. */
static int save_network_rule(server_t *srv, const gate_request *g, rule_decision d, char *err, size_t errlen)
{
    char *dir = paths_config_dir();
    char *path = xasprintf("%s/rules/default.rules", dir);
    free(dir);
    char perr[512];
    int rc = rules_append_network_rule(path, g->host, g->net_proto, d, NULL, perr, sizeof perr);
    if (rc < 0)
        snprintf(err, errlen, "cannot save the rule: %s", perr);
    free(path);
    if (rc == 0) {
        rules_ws_reload_user(G(srv)->rules_ws);
        refresh_rules_error(srv);
    }
    return rc;
}

static int on_accept(approval_t *a, approval_answer answer, char *err, size_t errlen, void *user)
{
    (void)a;
    gate_ticket *t = user;
    if (t->g.origin == GATE_NETWORK && (answer == ANSWER_PERSIST || answer == ANSWER_FORBID))
        return save_network_rule(t->srv, &t->g, answer == ANSWER_PERSIST ? RULE_ALLOW : RULE_FORBIDDEN, err,
                                 errlen);
    if (answer == ANSWER_FORBID) {
        snprintf(err, errlen, "a rule that denies from now on is saved for network hosts only; deny it without "
                              "--persist, and add a prefix_rule with decision=\"forbidden\" to forbid the command");
        return -1;
    }
    if (answer != ANSWER_PERSIST)
        return 0;
    if (!t->g.persist) {
        snprintf(err, errlen, "\"always\" cannot be offered for this request (%s); answer once or for this session",
                 t->g.persist_refusal ? t->g.persist_refusal : "no rule can be made of it");
        return -1;
    }
    return save_rule(t->srv, t->g.persist, err, errlen);
}

/* Would t run once approved?  Its widened sandbox is compiled (and
 * thrown away) before anyone is asked: a request that cannot run must not
 * cost a human a decision. */
static bool can_run(gate_ticket *t, char *err, size_t errlen)
{
    if (t->g.origin == GATE_HOOK || t->g.origin == GATE_NETWORK)
        return true; /* the shell runs it in the session's own sandbox; the proxy connects */
    gate_launch l;
    gate_widen(&t->g, &l);
    sbconf_tools tools = {.set_env = (char *const *)server_session_env(l.spec.agent, l.spec.tty)};
    sb_plan *plan = sbconf_compile(server_conf(t->srv), &l.spec, &tools, 0, err, errlen);
    gate_launch_free(&l);
    if (!plan)
        return false;
    sb_plan_free(plan);
    free(plan);
    return true;
}

/* What a request asks, in a few words for the one who waits on it (the
 * agent reads it in its progress): the host, or the command. */
static char *pending_what(const gate_request *g)
{
    if (g->origin == GATE_NETWORK && g->host)
        return xasprintf("network access to \"%s\", %s port %d", g->host, rule_net_proto_name(g->net_proto),
                         g->port);
    if (!g->argv || !g->argv[0])
        return NULL;
    char *full = g->line ? quote_text_visible(g->line, strlen(g->line)) : quote_argv_display(g->argv);
    char *shown = quote_shorten(full, 160);
    free(full);
    char *what = xasprintf("%s %s", g->origin == GATE_HOOK ? "the typed line" : "running", shown);
    free(shown);
    return what;
}

json_t *gate_pending_event(server_t *srv, int approval, const gate_request *g)
{
    char *what = g ? pending_what(g) : NULL;
    char *msg = xasprintf("waiting for a human to approve request %d%s%s%s: answer it in the supervisor screen "
                          "(corral), or with corral approve %d / corral deny %d%s",
                          approval, what ? " (" : "", what ? what : "", what ? ")" : "", approval, approval,
                          gate_someone_can_answer(srv) ? "" : " (no screen is attached now)");
    free(what);
    json_t *ev = json_pack("{s:s, s:i, s:s}", "event", "approval_pending", "approval", approval, "message", msg);
    free(msg);
    return ev;
}

static void ask(gate_ticket *t)
{
    char err[2048];
    if (!can_run(t, err, sizeof err)) {
        char *msg = xasprintf("it cannot run as asked, so nobody was asked: %s", err);
        settle(t, SETTLE_FAILED, msg);
        free(msg);
        return;
    }
    /* A line typed in a session (or a corral escalate run there) now waits
     * for a person: keys typed into it until now go, before any screen
     * shows the question (session.h). */
    session_t *asker = t->g.session && (t->g.origin == GATE_HOOK || t->g.origin == GATE_ESCALATE)
                           ? server_find(t->srv, t->g.session)
                           : NULL;
    if (asker)
        session_drop_typeahead(asker);
    t->approval = approval_submit(&G(t->srv)->approvals, t->g.session, gate_request_json(&t->g), on_answer, on_accept,
                                  t);
    int id = approval_id(t->approval);
    /* The user's [notify] command hears of it (with the id clients see). */
    json_t *shown = gate_request_json(&t->g);
    json_object_set_new(shown, "id", json_integer(id));
    notify_request(t->srv, shown, gate_server_waiting(t->srv));
    json_decref(shown);
    if (t->port->pending)
        t->port->pending(t, id);
    /* Whoever waits on the asking session (an agent's exec, corral send)
     * is told too: its wait pauses until the answer. */
    session_t *s = t->g.session ? server_find(t->srv, t->g.session) : NULL;
    if (s)
        waiter_tell(s, gate_pending_event(t->srv, id, &t->g));
}

static void launch(gate_ticket *t)
{
    gate_launch l;
    gate_widen(&t->g, &l);
    gate_launched(&t->g);
    char err[2048];
    int rc = t->port->launch(t, &l, err, sizeof err);
    gate_launch_free(&l);
    if (rc < 0)
        settle(t, SETTLE_FAILED, err);
}

static void step(gate_ticket *t, gate_next next)
{
    switch (next) {
    case GATE_ASK:
        ask(t);
        break;
    case GATE_LAUNCH:
        launch(t);
        break;
    case GATE_REFUSE:
        settle(t, SETTLE_FORBIDDEN, t->g.message);
        break;
    case GATE_DENY:
        settle(t, SETTLE_DENIED, t->g.message);
        break;
    case GATE_REPLY:
        settle(t, SETTLE_NO_RETRY, t->g.message);
        break;
    case GATE_DROP:
        gate_done(t);
        break;
    }
}

void gate_submit(server_t *srv, gate_ticket *t, const gate_port *port)
{
    t->srv = srv;
    t->port = port;
    link_add(&G(srv)->tickets, &t->node);
    const rules_t *rules = gate_rules_for(srv, t->g.workspace ? t->g.workspace : t->g.cwd);
    step(t, gate_judge(&t->g, rules, rules_ws_builtin(G(srv)->rules_ws)));
}

void gate_withdraw(gate_ticket *t, const char *why)
{
    if (t->approval)
        approval_withdraw(&G(t->srv)->approvals, t->approval, why); /* on_answer drops it */
    else if (t->g.state != GATE_LAUNCHED)
        gate_done(t);
}

bool gate_finished(gate_ticket *t, const gate_run *run)
{
    gate_next next = gate_after_run(&t->g, run);
    if (next == GATE_REPLY)
        return false;
    step(t, next);
    return true;
}

/* ---- start and end ------------------------------------------------------------- */

static void hook_broadcast(void *user, json_t *ev)
{
    (void)user;
    conn_broadcast(ev);
}

static void hook_session_log(void *user, int session, const char *event, json_t *fields)
{
    session_t *s = server_find(user, session);
    if (s && s->events)
        eventlog_write(s->events, event, fields, true);
    else
        json_decref(fields);
}

static const approval_hooks queue_hooks = {.broadcast = hook_broadcast, .session_log = hook_session_log};

static void gate_server_start(server_t *srv)
{
    gate_server_state *st = xcalloc(1, sizeof *st);
    link_init(&st->tickets);
    server_attach(srv, &gate_state_key, st, free);
    G(srv)->rules_ws = rules_ws_new();
    rules_ws_builtin(G(srv)->rules_ws);
    rules_ws_reload_user(G(srv)->rules_ws);
    refresh_rules_error(srv);
    approval_queue_init(&G(srv)->approvals, server_loop(srv), server_conf(srv)->approval_timeout_ms, &queue_hooks, srv);
    char *path = xasprintf("%s/approvals.jsonl", server_state_dir(srv));
    char err[512];
    if (approval_queue_open_log(&G(srv)->approvals, path, err, sizeof err) < 0)
        server_log("approvals are not logged: %s", err);
    free(path);
}

static void gate_server_shutdown(server_t *srv)
{
    approval_queue_shutdown(&G(srv)->approvals); /* every question withdrawn: nothing waits */
    /* What still waits in the gate ends; what was launched is ended by
     * its owner (a session's waiter, a running escalation). */
    for (link_t *l = G(srv)->tickets.next; l != &G(srv)->tickets;) {
        gate_ticket *t = link_entry(l, gate_ticket, node);
        l = l->next;
        if (t->g.state != GATE_LAUNCHED)
            gate_withdraw(t, "the corral server is stopping");
    }
    rules_ws_free(G(srv)->rules_ws);
    G(srv)->rules_ws = NULL;
    free(G(srv)->rules_error);
    G(srv)->rules_error = NULL;
}

/* A screen subscribed: the approvals waiting now, and rule files that
 * could not be loaded. */
static void gate_server_subscribed(server_t *srv, json_t *reply)
{
    json_object_set_new(reply, "approvals", approvals_json(&G(srv)->approvals));
    if (G(srv)->rules_error)
        json_object_set_new(reply, "rules_error", json_string(G(srv)->rules_error));
}

/* A request of s waits for a human: its wait does not end at its
 * deadline (the answer extends it). */
static bool gate_server_holds_wait(server_t *srv, session_t *s)
{
    return approvals_pending_for_session(&G(srv)->approvals, s->id);
}

/* ---- the protocol's approvals, approve, deny ---------------------------------- */

static void cmd_approvals(conn_t *c, json_t *id, json_t *req)
{
    (void)req;
    server_t *srv = conn_server(c);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "approvals", approvals_json(&G(srv)->approvals));
    json_object_set_new(r, "policy", json_string(approval_policy_name(server_policy(srv)->approval)));
    if (G(srv)->rules_error)
        json_object_set_new(r, "rules_error", json_string(G(srv)->rules_error));
    conn_send(c, r);
}

/* approve {id, scope: once|session|persist} and deny {id, note, stop,
 * persist} (persist: a network host's deny rule). */
static void answer(conn_t *c, json_t *id, json_t *req, bool approve)
{
    proto_err e;
    int64_t aid;
    const char *scope = NULL, *note = NULL, *key = NULL;
    bool stop = false, persist = false;
    if (proto_get_int(req, "approval", true, 1, INT32_MAX, &aid, &e) < 0 ||
        proto_get_string(req, "scope", false, &scope, &e) < 0 || proto_get_string(req, "note", false, &note, &e) < 0 ||
        proto_get_bool(req, "stop", false, &stop, &e) < 0 || proto_get_bool(req, "persist", false, &persist, &e) < 0 ||
        proto_get_string(req, "key", false, &key, &e) < 0) {
        conn_reply_error(c, id, e.code, e.message);
        return;
    }
    approval_answer ans = approve ? ANSWER_ONCE : persist ? ANSWER_FORBID : stop ? ANSWER_STOP : ANSWER_DENY;
    if (approve && scope && (approval_answer_parse(scope, &ans) < 0 || ans > ANSWER_PERSIST)) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'scope' must be \"once\", \"session\" or \"persist\"");
        return;
    }
    char err[600];
    server_t *srv = conn_server(c);
    char *clean = note ? sanitize_text(note, strlen(note), 2000) : NULL;
    char *clean_key = key ? sanitize_text(key, strlen(key), 16) : NULL;
    int rc = approval_decide(&G(srv)->approvals, (int)aid, ans, clean, conn_client(c), clean_key, err, sizeof err);
    free(clean);
    free(clean_key);
    if (rc < 0) {
        conn_reply_error(c, id, PERR_NOT_FOUND, err);
        return;
    }
    json_t *r = proto_ok(id);
    json_object_set_new(r, "approval", json_integer(aid));
    json_object_set_new(r, "answer", json_string(approval_answer_name(ans)));
    conn_send(c, r);
}

static void cmd_approve(conn_t *c, json_t *id, json_t *req)
{
    answer(c, id, req, true);
}

static void cmd_deny(conn_t *c, json_t *id, json_t *req)
{
    answer(c, id, req, false);
}

static const server_command gate_commands[] = {
    {"approvals", cmd_approvals}, {"approve", cmd_approve}, {"deny", cmd_deny}, {NULL, NULL}};

bool gate_someone_can_answer(server_t *srv)
{
    return server_conf(srv)->approval_timeout_ms || conn_any_subscribed();
}

/* A session a request of which waits says so in lists (corral ls): a
 * program waiting on the proxy is otherwise silent, and with no screen
 * attached nothing else shows the wait. */
static void gate_server_session_json(server_t *srv, session_t *s, json_t *o)
{
    json_t *a = approvals_first_for_session(&G(srv)->approvals, s->id);
    if (!a)
        return;
    char *summary = approval_summary(a, 300);
    json_object_set_new(o, "waiting", json_pack("{s:I, s:s}", "approval", json_integer_value(json_object_get(a, "id")),
                                                "summary", summary));
    free(summary);
    json_decref(a);
}

/* A reload: [approvals] timeout holds for the requests asked from now on
 * (one already waiting keeps the deadline it was shown with). */
static void gate_server_config_changed(server_t *srv)
{
    G(srv)->approvals.timeout_ms = server_conf(srv)->approval_timeout_ms;
}

const server_module gate_server_module = {
    .name = "gate",
    .start = gate_server_start,
    .shutdown = gate_server_shutdown,
    .config_changed = gate_server_config_changed,
    .session_json = gate_server_session_json,
    .subscribed = gate_server_subscribed,
    .holds_wait = gate_server_holds_wait,
    .commands = gate_commands,
};

size_t gate_server_waiting(server_t *srv)
{
    return approvals_waiting(&G(srv)->approvals);
}
