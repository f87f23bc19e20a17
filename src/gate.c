/*
 * gate.c - the exec path's policy gate (DESIGN section 4 steps 2-3):
 * every exec request is judged (policy.c) before it starts.  Refused: the
 * reply says why.  Asked: the request waits in the approval queue, its
 * reply (and so the agent's yield) held until a human answers; a "for
 * this session" answer is remembered for the connection (the agent's
 * session).  Allowed or approved: it starts with the sandbox the answer
 * gives: escalated runs unsandboxed (or, with deny entries configured, in
 * the sandbox made writable everywhere else); more permissions add the
 * write roots and the network asked for.
 */
#include "config.h"

#include "approvals.h"
#include "safety.h"
#include "server_int.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gated_exec {
    link_t node; /* in conn->gated while waiting */
    conn_t *conn;
    json_t *id;
    /* The spawn request, owning its strings. */
    spawn_request r;
    char *cwd, *name, *profile;
    exec_params p;
    sandbox_request sandbox;
    policy_settings policy; /* the request's approval policy, else the server's */
    char **more_write;
    bool more_net;
    approval_t *approval; /* while waiting */
    int approval_id;      /* the answered request, for the session's log */
    const char *approval_answer;
    /* Sandbox denial (escalation path 4): the failed run's reply, held
     * while the user decides on the one retry without the sandbox. */
    bool retried;
    json_t *failed_reply;
    int failed_session;
} gated_exec;

static void gated_free(gated_exec *g)
{
    proto_free_argv(g->r.argv);
    proto_free_argv(g->r.write);
    proto_free_argv(g->r.read);
    proto_free_argv(g->r.deny);
    proto_free_argv(g->more_write);
    free(g->cwd);
    free(g->name);
    free(g->profile);
    json_decref(g->id);
    json_decref(g->failed_reply);
    if (g->conn)
        conn_unref(g->conn);
    free(g);
}

/* Append list b to the owned list *a. */
static void strv_extend(char ***a, char *const *b)
{
    size_t na = 0, nb = 0;
    while (*a && (*a)[na])
        na++;
    while (b && b[nb])
        nb++;
    if (!nb)
        return;
    *a = xrealloc(*a, (na + nb + 1) * sizeof **a);
    for (size_t i = 0; i < nb; i++)
        (*a)[na + i] = xstrdup(b[i]);
    (*a)[na + nb] = NULL;
}

/* Deny entries from the config or the request keep a sandbox even when a
 * command is escalated. */
static bool has_deny_entries(server_t *srv, const spawn_request *r)
{
    return srv->conf.sandbox.n_deny > 0 || (r->deny && r->deny[0]);
}

static bool offer_retry(session_t *s, json_t *reply, const char *text, size_t len, void *user);

/* May a failure of this run be offered again without the sandbox?  Once
 * only, for a sandboxed run whose requester waits for the reply, when the
 * policy lets anything ask. */
static bool retry_possible(const gated_exec *g, const session_t *s)
{
    const policy_settings *ps = &g->policy;
    return !g->retried && g->sandbox != SANDBOX_ESCALATED && strcmp(s->profile, "full") != 0 && !g->p.stream &&
           ps->approval != APPROVAL_NEVER && !(ps->approval == APPROVAL_GRANULAR && !ps->granular_sandbox_approval);
}

/* Start g; true when g is kept (for a retry), else the caller frees it. */
static bool run(gated_exec *g)
{
    conn_t *c = g->conn;
    server_t *srv = c->srv;
    static char *const everything[] = {"/", NULL};
    if (g->sandbox == SANDBOX_ESCALATED) {
        if (has_deny_entries(srv, &g->r)) {
            strv_extend(&g->r.write, everything);
            g->r.net = SB_NET_FULL;
        } else {
            free(g->profile);
            g->profile = xstrdup("full");
            g->r.profile = g->profile;
        }
    } else if (g->sandbox == SANDBOX_MORE_PERMISSIONS) {
        strv_extend(&g->r.write, g->more_write);
        if (g->more_net)
            g->r.net = SB_NET_FULL;
    }
    char err[2048], *warning = NULL;
    session_t *s = server_start_session(srv, &g->r, c->client, err, sizeof err, &warning);
    if (!s) {
        if (g->failed_reply) { /* the retry could not start: the first run's answer stands */
            conn_send(c, g->failed_reply);
            g->failed_reply = NULL;
        } else {
            conn_reply_error(c, g->id, PERR_SPAWN, err);
        }
        return false;
    }
    if (warning) {
        conn_send(c, json_pack("{s:s, s:i, s:s}", "event", "warning", "session", s->id, "message", warning));
        free(warning);
    }
    if (g->approval_id)
        eventlog_write(s->events, "approved",
                       json_pack("{s:i, s:s}", "approval", g->approval_id, "answer", g->approval_answer), false);
    if (g->retried)
        eventlog_write(s->events, "retry_of", json_pack("{s:i}", "session", g->failed_session), false);
    json_decref(g->failed_reply);
    g->failed_reply = NULL;
    bool keep = retry_possible(g, s);
    waiter_start(c, g->id, s, g->p.yield_ms, 0, g->p.max_tokens, g->p.stream, g->p.raw);
    if (keep)
        waiter_set_exit_hook(s, offer_retry, g);
    return keep;
}

static void on_answer(server_t *srv, approval_t *a, approval_answer answer, const char *note, void *user);

/* The wait of a sandboxed run ended.  Exited with what looks like a
 * sandbox denial: hold the reply and ask for one retry without the
 * sandbox; otherwise the reply goes as it is. */
static bool offer_retry(session_t *s, json_t *reply, const char *text, size_t len, void *user)
{
    gated_exec *g = user;
    server_t *srv = g->conn->srv;
    json_t *code = reply ? json_object_get(reply, "exit_code") : NULL;
    const char *why = NULL;
    if (!code || g->conn->closing ||
        !safety_likely_sandbox_denied((int)json_integer_value(code), text, len, &why)) {
        gated_free(g);
        return false;
    }
    g->failed_reply = json_incref(reply);
    g->failed_session = s->id;
    approval_t *a = approval_new(srv, g->r.argv, g->cwd, g->conn->client);
    free(a->kind);
    a->kind = xstrdup("retry");
    a->session = s->id;
    a->session_name = xstrdup(s->name);
    a->tty = g->r.tty;
    a->sandbox = SANDBOX_ESCALATED;
    a->reason = xasprintf("it failed in the sandbox (exit %d) and looks like the sandbox stopped it (%s): run it "
                          "once more without the sandbox?",
                          (int)json_integer_value(code), why);
    a->fn = on_answer;
    a->user = g;
    g->approval = a;
    link_add(&g->conn->gated, &g->node);
    approval_submit(srv, a);
    return true;
}

static void on_answer(server_t *srv, approval_t *a, approval_answer answer, const char *note, void *user)
{
    (void)srv;
    gated_exec *g = user;
    link_del(&g->node);
    g->approval = NULL;
    if (answer == ANSWER_GONE || g->conn->closing) {
        gated_free(g);
        return;
    }
    if (g->failed_reply) {
        /* The retry's answer: run it once more unsandboxed, or let the
         * failed run's reply go. */
        if (answer == ANSWER_ONCE || answer == ANSWER_SESSION || answer == ANSWER_PERSIST) {
            g->approval_id = a->id;
            g->approval_answer = approval_answer_name(answer);
            g->retried = true;
            g->sandbox = SANDBOX_ESCALATED;
            if (run(g))
                return;
        } else {
            conn_send(g->conn, g->failed_reply);
            g->failed_reply = NULL;
        }
        gated_free(g);
        return;
    }
    if (answer == ANSWER_ONCE || answer == ANSWER_SESSION || answer == ANSWER_PERSIST) {
        g->approval_id = a->id;
        g->approval_answer = approval_answer_name(answer);
        if (run(g))
            return;
    } else {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s%s%s",
                 answer == ANSWER_TIMEOUT ? "nobody approved this command in time; it did not run"
                                          : "the user denied this command; it did not run",
                 note && *note ? ". Note from the user: " : "", note && *note ? note : "");
        conn_reply_error(g->conn, g->id, PERR_DENIED, msg);
    }
    gated_free(g);
}

/* The sandbox fields of an exec request. */
static int read_permissions(json_t *req, gated_exec *g, const char **justification, char ***prefix_rule,
                            proto_err *e)
{
    const char *sp = NULL;
    if (proto_get_string(req, "sandbox_permissions", false, &sp, e) < 0 ||
        proto_get_string(req, "justification", false, justification, e) < 0 ||
        proto_get_argv(req, "prefix_rule", false, prefix_rule, e) < 0)
        return -1;
    if (!sp || strcmp(sp, "use_default") == 0)
        g->sandbox = SANDBOX_DEFAULT;
    else if (strcmp(sp, "require_escalated") == 0)
        g->sandbox = SANDBOX_ESCALATED;
    else if (strcmp(sp, "with_additional_permissions") == 0)
        g->sandbox = SANDBOX_MORE_PERMISSIONS;
    else
        return proto_fail(e, PERR_BAD_REQUEST, "field 'sandbox_permissions' must be \"use_default\", "
                          "\"require_escalated\" or \"with_additional_permissions\""), -1;
    json_t *extra = json_object_get(req, "additional_permissions");
    if (extra && !json_is_object(extra))
        return proto_fail(e, PERR_BAD_REQUEST, "field 'additional_permissions' must be an object"), -1;
    if (extra && (proto_get_argv(extra, "write", false, &g->more_write, e) < 0 ||
                  proto_get_bool(extra, "network", false, &g->more_net, e) < 0))
        return -1;
    if (g->sandbox == SANDBOX_MORE_PERMISSIONS && !g->more_net && !(g->more_write && g->more_write[0]))
        return proto_fail(e, PERR_BAD_REQUEST, "with_additional_permissions needs 'additional_permissions' with "
                          "'write' paths or 'network': true"), -1;
    for (char **w = g->more_write; w && *w; w++)
        if ((*w)[0] != '/')
            return proto_fail(e, PERR_BAD_REQUEST, "additional write path '%s' must be absolute", *w), -1;
    if (*prefix_rule && *prefix_rule[0]) {
        /* Codex refuses a rule that would allow every interpreter or shell
         * command: nothing after the program. */
        static const char *const interpreters[] = {"bash", "sh", "zsh", "dash", "fish", "python", "python3",
                                                   "node", "perl", "ruby", "env", "sudo", NULL};
        const char *base = strrchr((*prefix_rule)[0], '/');
        base = base ? base + 1 : (*prefix_rule)[0];
        for (const char *const *i = interpreters; *i; i++)
            if (strcmp(base, *i) == 0)
                return proto_fail(e, PERR_BAD_REQUEST, "prefix_rule starting with '%s' is refused: it would "
                                  "allow any program it runs", base), -1;
    }
    return 0;
}

void gate_exec(conn_t *c, json_t *id, json_t *req, const spawn_request *r, const exec_params *p)
{
    server_t *srv = c->srv;
    gated_exec *g = xcalloc(1, sizeof *g);
    link_init(&g->node);
    g->conn = c;
    c->refs++;
    g->id = json_incref(id);
    g->r = *r;
    g->r.argv = proto_copy_argv(r->argv);
    g->r.write = proto_copy_argv(r->write);
    g->r.read = proto_copy_argv(r->read);
    g->r.deny = proto_copy_argv(r->deny);
    g->cwd = xstrdup(r->cwd);
    g->r.cwd = g->cwd;
    g->name = r->name ? xstrdup(r->name) : NULL;
    g->r.name = g->name;
    g->profile = r->profile ? xstrdup(r->profile) : NULL;
    g->r.profile = g->profile;
    g->p = *p;
    g->policy = r->policy ? *r->policy : srv->policy;
    g->r.policy = &g->policy;
    const char *justification = NULL;
    char **prefix_rule = NULL;
    proto_err e;
    if (read_permissions(req, g, &justification, &prefix_rule, &e) < 0) {
        conn_reply_error(c, id, e.code, e.message);
        proto_free_argv(prefix_rule);
        gated_free(g);
        return;
    }
    policy_result pr;
    policy_evaluate(approvals_rules_for(srv, g->cwd), srv->builtin_rules, &g->policy, g->r.argv, g->sandbox, has_deny_entries(srv, &g->r), &pr);
    if (pr.verdict == VERDICT_FORBIDDEN) {
        char msg[700];
        snprintf(msg, sizeof msg, "corral's exec policy forbids this command: %s", pr.reason);
        conn_reply_error(c, id, PERR_FORBIDDEN_BY_POLICY, msg);
        proto_free_argv(prefix_rule);
        gated_free(g);
        return;
    }
    char *key = approval_key(g->r.argv, g->cwd, g->r.tty, g->sandbox, g->more_write, g->more_net, c->client);
    if (pr.verdict == VERDICT_RUN || approval_cached(&c->approved, key)) {
        free(key);
        proto_free_argv(prefix_rule);
        if (!run(g))
            gated_free(g);
        return;
    }
    approval_t *a = approval_new(srv, g->r.argv, g->cwd, c->client);
    a->tty = g->r.tty;
    a->sandbox = g->sandbox;
    a->write = proto_copy_argv(g->more_write);
    a->network = g->more_net;
    a->justification = justification ? sanitize_text(justification, strlen(justification), 1000) : NULL;
    a->reason = xstrdup(pr.reason[0] ? pr.reason : "asks for approval");
    a->rule = pr.rule[0] ? xstrdup(pr.rule) : NULL;
    a->prefix_rule = prefix_rule;
    a->cache_key = key;
    a->cache = &c->approved;
    a->fn = on_answer;
    a->user = g;
    g->approval = a;
    link_add(&c->gated, &g->node);
    approval_submit(srv, a);
}

void gate_conn_closed(conn_t *c)
{
    /* The requester is gone: its requests are withdrawn (clients close
     * their dialogs), and nothing runs. */
    while (!link_empty(&c->gated)) {
        gated_exec *g = link_entry(c->gated.next, gated_exec, node);
        approval_withdraw(c->srv, g->approval);
    }
}
