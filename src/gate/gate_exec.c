/*
 * gate_exec.c - exec requests into the gate (docs/ARCHITECTURE.md, "One exec, end to end"):
 * an exec's sandbox fields (sandbox_permissions, additional_permissions,
 * justification, prefix_rule) are read and checked, its paths resolved,
 * and it goes through gate_submit like every other request.  This port
 * starts an allowed command as a session whose reply goes to the requester
 * (its yield held while a human decides), remembers "for this session"
 * answers on the requester's connection (an agent's session), and offers
 * the one retry without the sandbox when a run failed like a sandbox
 * denial.
 */
#include "config.h"

#include "gate/gate_server.h"
#include "gate/pathres.h"
#include "server/spawn_args.h"
#include "base/paths.h"
#include "protocol/uexec.h"
#include "policy/safety.h"
#include "snap/snap_server.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct exec_ticket {
    gate_ticket t; /* first: the gate hands it back */
    conn_t *conn;
    json_t *id;
    exec_params p;
    char *name;
    int rows, cols;
    link_t gated_node;     /* in gated until it is launched */
    int approval;          /* the request a human answered, for the log */
    char **run_roots;      /* where the launched run could write */
    /* The retry: the failed run's reply, held while the user decides. */
    json_t *failed_reply;
    int failed_session;
} exec_ticket;

/* Exec requests still in the gate (not launched), whoever sent them: they
 * are withdrawn when their connection closes. */
static link_t gated = {&gated, &gated};

/* A connection's "for this session" answers (its agent's session), kept
 * on the connection for as long as it or a request of it lives. */
static const char approved_key[] = "gate_exec approved";

static void approved_free(void *data)
{
    gate_cache_free(data);
    free(data);
}

static gate_cache *approved_of(conn_t *c)
{
    gate_cache *cache = conn_attached(c, approved_key);
    if (!cache) {
        cache = xcalloc(1, sizeof *cache);
        conn_attach(c, approved_key, cache, approved_free);
    }
    return cache;
}

static void exec_release(gate_ticket *t)
{
    exec_ticket *e = (exec_ticket *)t;
    link_del(&e->gated_node);
    json_decref(e->id);
    json_decref(e->failed_reply);
    free(e->name);
    strv_free(e->run_roots);
    conn_release(e->conn);
    free(e);
}

static void exec_pending(gate_ticket *t, int approval)
{
    exec_ticket *e = (exec_ticket *)t;
    e->approval = approval;
    /* The requester is told what it waits for and how it ends. */
    conn_send(e->conn, gate_pending_event(t->srv, approval, &t->g));
}

/* A line from corral at the end of a reply's output (and of the envelope
 * the agent reads): "corral: LINE". */
static void append_line(json_t *reply, const char *line)
{
    static const char *const fields[] = {"output", "text"};
    for (size_t i = 0; i < 2; i++) {
        const char *old = json_string_value(json_object_get(reply, fields[i]));
        if (!old)
            continue;
        size_t n = strlen(old);
        char *now = xasprintf("%s%scorral: %s\n", old, n && old[n - 1] != '\n' ? "\n" : "", line);
        json_object_set_new(reply, fields[i], json_string(now));
        free(now);
    }
}

/* What the sandbox refused in the run that gave reply, and how to ask for
 * it: one line in the reply, its own field, and the session's log. */
static void explain_denial(exec_ticket *e, json_t *reply)
{
    const safety_denial *d = &e->t.g.denial;
    if (d->kind == DENIAL_NONE)
        return;
    char advice[6000];
    safety_denial_advice(d, advice, sizeof advice);
    append_line(reply, advice);
    json_object_set_new(reply, "sandbox_advice", json_string(advice));
    session_t *s = server_find(e->t.srv, e->failed_session);
    if (s && s->events)
        eventlog_write(s->events, "sandbox_denied",
                       json_pack("{s:s, s:s?, s:s}", "line", d->line, "path", d->path[0] ? d->path : NULL, "advice",
                                 advice),
                       false);
}

static void exec_settle(gate_ticket *t, gate_settle how, const char *message)
{
    exec_ticket *e = (exec_ticket *)t;
    if (conn_closing(e->conn))
        return;
    if (e->failed_reply) {
        /* No retry (declined, or it could not start): the first run's
         * answer stands, with the answer and the user's note, and what to
         * ask for instead. */
        if (message) {
            append_line(e->failed_reply, message + (strncmp(message, "corral: ", 8) == 0 ? 8 : 0));
            json_object_set_new(e->failed_reply, "denial", json_string(message));
        }
        explain_denial(e, e->failed_reply);
        conn_send(e->conn, e->failed_reply);
        e->failed_reply = NULL;
        return;
    }
    const char *code = how == SETTLE_FORBIDDEN ? PERR_FORBIDDEN_BY_POLICY
                       : how == SETTLE_DENIED  ? PERR_DENIED
                                               : PERR_SPAWN;
    conn_reply_error(e->conn, e->id, code, message ? message : "it did not run");
}

static bool on_run_ended(session_t *s, json_t *reply, const char *text, size_t len, void *user);

static void keep_run_roots(exec_ticket *e, const gate_launch *l)
{
    static char *const always[] = {"/tmp", "/dev", NULL};
    strv_free(e->run_roots);
    size_t n = 0;
    while (l->spec.write && l->spec.write[n])
        n++;
    e->run_roots = xcalloc(n + 4, sizeof *e->run_roots);
    size_t k = 0;
    if (l->spec.workspace)
        e->run_roots[k++] = xstrdup(l->spec.workspace);
    for (size_t i = 0; i < n; i++)
        e->run_roots[k++] = xstrdup(l->spec.write[i]);
    for (char *const *a = always; *a; a++)
        e->run_roots[k++] = xstrdup(*a);
}

/* Start the command as l says (cmd: its snapshot record, or NULL). */
static int exec_start(gate_ticket *t, const gate_launch *l, struct snap_cmd *cmd, char *err, size_t errlen)
{
    exec_ticket *e = (exec_ticket *)t;
    conn_t *c = e->conn;
    launch_spec r = l->spec;
    r.name = e->name;
    r.rows = e->rows;
    r.cols = e->cols;
    char *warning = NULL;
    session_t *s = server_start_session(t->srv, &r, conn_client(c), err, errlen, &warning);
    snap_exec_started(t->srv, s, cmd);
    if (!s)
        return -1;
    link_del(&e->gated_node); /* launched: its waiter follows the connection now */
    if (warning) {
        conn_send(c, json_pack("{s:s, s:i, s:s}", "event", "warning", "session", s->id, "message", warning));
        free(warning);
    }
    if (t->g.asked_human)
        eventlog_write(s->events, "approved",
                       json_pack("{s:i, s:s}", "approval", e->approval, "answer", approval_answer_name(t->g.answer)),
                       false);
    if (t->g.origin == GATE_RETRY)
        eventlog_write(s->events, "retry_of", json_pack("{s:i}", "session", e->failed_session), false);
    json_decref(e->failed_reply);
    e->failed_reply = NULL;
    keep_run_roots(e, l);
    waiter_start(c, e->id, s, e->p.yield_ms, 0, e->p.max_tokens, e->p.stream, e->p.raw);
    waiter_set_exit_hook(s, on_run_ended, e);
    return 0;
}

/* The workspace's snapshot before the command is taken: start it now. */
static void exec_go(void *user, struct snap_cmd *cmd, bool stopping)
{
    exec_ticket *e = user;
    char err[2048] = "the server is stopping: it did not run";
    gate_launch l;
    gate_widen(&e->t.g, &l);
    if (conn_closing(e->conn)) {
        snap_exec_started(e->t.srv, NULL, cmd);
        gate_done(&e->t);
    } else if (stopping || exec_start(&e->t, &l, cmd, err, sizeof err) < 0) {
        if (stopping)
            snap_exec_started(e->t.srv, NULL, cmd);
        exec_settle(&e->t, SETTLE_FAILED, err);
        gate_done(&e->t);
    }
    gate_launch_free(&l);
}

static int exec_launch(gate_ticket *t, const gate_launch *l, char *err, size_t errlen)
{
    exec_ticket *e = (exec_ticket *)t;
    if (conn_closing(e->conn)) {
        snprintf(err, errlen, "the requester went away");
        return -1;
    }
    /* It starts once the workspace's "before" snapshot is taken
     * (snap_server.h), unless the workspace is not snapshotted. */
    if (snap_exec_before(t->srv, l->spec.workspace ? l->spec.workspace : l->spec.cwd, t->g.argv, l->spec.profile,
                         l->spec.deny, exec_go, e))
        return 0;
    return exec_start(t, l, NULL, err, errlen);
}

static const gate_port exec_port = {
    .pending = exec_pending, .launch = exec_launch, .settle = exec_settle, .release = exec_release};

/* The wait of a launched run ended (reply NULL: the requester went away).
 * An exited sandboxed run that failed like a sandbox denial may be asked
 * again without the sandbox: its reply is then held. */
static bool on_run_ended(session_t *s, json_t *reply, const char *text, size_t len, void *user)
{
    exec_ticket *e = user;
    json_t *code = reply ? json_object_get(reply, "exit_code") : NULL;
    if (!code || conn_closing(e->conn)) {
        gate_done(&e->t);
        return false;
    }
    gate_run run = {
        .exit_code = (int)json_integer_value(code),
        .output = text,
        .len = len,
        .setup_failed = s->child.error != NULL && !s->child.ready,
        .streamed = e->p.stream,
        .unconfined = strcmp(s->profile, "full") == 0,
        .write_roots = e->run_roots,
        .someone_can_answer = gate_someone_can_answer(e->t.srv),
    };
    e->failed_reply = reply; /* taken over if the gate asks */
    e->failed_session = s->id;
    /* A retry's dialog names the run that failed. */
    e->t.g.failed_session = s->id;
    free(e->t.g.failed_session_name);
    e->t.g.failed_session_name = xstrdup(s->name ? s->name : "");
    link_add(&gated, &e->gated_node); /* in the gate again: withdrawn if the requester goes */
    if (gate_finished(&e->t, &run))
        return true; /* e may be gone already */
    explain_denial(e, reply);
    e->failed_reply = NULL;
    gate_done(&e->t);
    return false;
}

/* The sandbox fields of an exec request, into g. */
static int read_permissions(json_t *req, gate_request *g, proto_err *e)
{
    const char *sp = NULL, *justification = NULL;
    if (proto_get_string(req, "sandbox_permissions", false, &sp, e) < 0 ||
        proto_get_string(req, "justification", false, &justification, e) < 0 ||
        proto_get_argv(req, "prefix_rule", false, &g->prefix_rule, e) < 0)
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
    if (extra && (proto_get_argv(extra, "write", false, &g->write, e) < 0 ||
                  proto_get_bool(extra, "network", false, &g->network, e) < 0))
        return -1;
    if (g->sandbox == SANDBOX_MORE_PERMISSIONS && !g->network && !(g->write && g->write[0]))
        return proto_fail(e, PERR_BAD_REQUEST, "with_additional_permissions needs 'additional_permissions' with "
                          "'write' paths or 'network': true"), -1;
    if (g->sandbox != SANDBOX_MORE_PERMISSIONS) {
        strv_free(g->write); /* asked only with more permissions */
        g->write = NULL;
        g->network = false;
    }
    char why[300];
    if (g->prefix_rule && g->prefix_rule[0] && !safety_rule_prefix_allowed(g->prefix_rule, why, sizeof why))
        return proto_fail(e, PERR_BAD_REQUEST, "prefix_rule is refused: %s", why), -1;
    if (justification)
        g->justification = sanitize_text(justification, strlen(justification), 1000);
    return 0;
}

/* cwd and the extra write roots, as the server resolves them. */
static int resolve_paths(gate_request *g, const char *cwd, proto_err *e)
{
    char err[PATH_MAX + 512];
    struct stat st;
    if (stat(cwd, &st) < 0 || !S_ISDIR(st.st_mode))
        return proto_fail(e, PERR_SPAWN, "working directory '%s' does not exist or is not a directory", cwd), -1;
    g->cwd = pathres_resolve(cwd, NULL, err, sizeof err);
    if (!g->cwd)
        return proto_fail(e, PERR_SPAWN, "working directory: %s", err), -1;
    g->workspace = xstrdup(g->cwd);
    /* A symlink inside what the command may write could be re-pointed
     * by the time an approved request runs again. */
    char **writable = xcalloc(2, sizeof *writable);
    writable[0] = g->workspace;
    for (size_t i = 0; g->write && g->write[i]; i++) {
        char *canon = pathres_resolve(g->write[i], writable, err, sizeof err);
        if (!canon) {
            free(writable);
            return proto_fail(e, PERR_BAD_REQUEST, "additional write path: %s", err), -1;
        }
        free(g->write[i]);
        g->write[i] = canon;
    }
    free(writable);
    return 0;
}

static void gate_exec(conn_t *c, json_t *id, json_t *req, const launch_spec *r, const exec_params *p)
{
    server_t *srv = conn_server(c);
    exec_ticket *e = xcalloc(1, sizeof *e);
    link_init(&e->gated_node);
    e->conn = conn_ref(c);
    e->id = json_incref(id);
    e->p = *p;
    e->name = r->name ? xstrdup(r->name) : NULL;
    e->rows = r->rows;
    e->cols = r->cols;
    gate_request *g = &e->t.g;
    gate_request_init(g, GATE_EXEC);
    g->requester = xstrdup(conn_client(c) ? conn_client(c) : "user");
    g->cache = approved_of(c);
    g->argv = strv_copy(r->argv);
    g->tty = r->tty;
    g->policy = r->policy ? *r->policy : *server_policy(srv);
    g->config_deny = server_conf(srv)->sandbox.n_deny > 0;
    launch_sandbox_of(r, &g->base);
    proto_err pe;
    /* corral mcp says a call is its client's and how it keeps it alive. */
    int64_t progress_s = -1;
    if (proto_get_int(req, "mcp_progress_s", false, 0, 600, &progress_s, &pe) < 0 ||
        read_permissions(req, g, &pe) < 0 || resolve_paths(g, r->cwd, &pe) < 0) {
        conn_reply_error(c, id, pe.code, pe.message);
        gate_request_free(g);
        json_decref(e->id);
        free(e->name);
        conn_release(c);
        free(e);
        return;
    }
    g->mcp_progress_s = (int)progress_s;
    link_add(&gated, &e->gated_node);
    gate_submit(srv, &e->t, &exec_port);
}

static void exec_conn_closed(conn_t *c)
{
    /* The requester is gone: its requests are withdrawn (clients close
     * their dialogs), and nothing runs.  A withdrawal may release other
     * requests, so the search starts again after each. */
    for (;;) {
        exec_ticket *mine = NULL;
        for (link_t *l = gated.next; l != &gated && !mine; l = l->next) {
            exec_ticket *e = link_entry(l, exec_ticket, gated_node);
            if (e->conn == c)
                mine = e;
        }
        if (!mine)
            return;
        link_del(&mine->gated_node);
        /* An MCP bridge closes a call's connection when its client cancels
         * the call, and all of them when the agent ends. */
        gate_withdraw(&mine->t, "the requester stopped waiting: its call was cancelled, or the agent or its "
                                "connection to corral ended");
    }
}

/* The protocol's exec (corral exec, an agent's exec_command): the request
 * read and checked, then into the gate. */
static void cmd_exec(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    spawn_args a;
    const char *shell = NULL, *line = NULL;
    bool tty = false, login = true, stream = false, raw = false;
    int64_t yield = -1, max_tokens = UEXEC_DEFAULT_MAX_TOKENS;
    if (spawn_args_read(c, id, req, "workdir", &a) < 0)
        return;
    if (proto_get_argv(req, "argv", false, &a.r.argv, &e) < 0 ||
        proto_get_string(req, "shell", false, &shell, &e) < 0 || proto_get_bool(req, "tty", false, &tty, &e) < 0 ||
        proto_get_bool(req, "login", false, &login, &e) < 0 || proto_get_bool(req, "stream", false, &stream, &e) < 0 ||
        proto_get_bool(req, "raw", false, &raw, &e) < 0 ||
        proto_get_int(req, "yield_time_ms", false, INT32_MIN, INT32_MAX, &yield, &e) < 0 ||
        proto_get_int(req, "max_output_tokens", false, 0, INT32_MAX, &max_tokens, &e) < 0 ||
        /* "cmd" is the protocol's verb; the shell command line of
         * exec_command travels as "command" (or "argv" for an exact argv). */
        proto_get_string(req, "command", false, &line, &e) < 0) {
        spawn_args_free(&a);
        conn_reply_error(c, id, e.code, e.message);
        return;
    }
    if (!a.r.argv == !line) {
        spawn_args_free(&a);
        conn_reply_error(c, id, PERR_BAD_REQUEST,
                         line ? "give either 'argv' or 'command', not both"
                              : "give the command as 'argv' (array) or 'command' (string)");
        return;
    }
    if (line) {
        a.r.argv = xcalloc(4, sizeof *a.r.argv);
        a.r.argv[0] = xstrdup(shell ? shell : paths_user_shell());
        a.r.argv[1] = xstrdup(login ? "-lc" : "-c");
        a.r.argv[2] = xstrdup(line);
    }
    a.r.agent = true;
    a.r.tty = tty;
    exec_params p = {uexec_exec_yield(yield), max_tokens, stream, raw};
    gate_exec(c, id, req, &a.r, &p);
    spawn_args_free(&a);
}

static const server_command exec_commands[] = {{"exec", cmd_exec}, {NULL, NULL}};

const server_module gate_exec_module = {
    .name = "gate_exec",
    .conns = {.closed = exec_conn_closed},
    .commands = exec_commands,
};
