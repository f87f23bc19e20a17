/*
 * mcp_state.c - what `corral mcp` does with each MCP message.
 */
#include "config.h"

#include "mcp/mcp_rpc.h"
#include "mcp/mcp_state.h"
#include "base/quote.h"
#include "base/util.h"
#include "protocol/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tools/call still waiting for the server. */
typedef struct mcp_call {
    link_t node;
    mcp_state *s;
    json_t *rpc_id;   /* the client's request id */
    json_t *req;      /* what was asked of the server */
    json_t *token;    /* the client's progressToken, or NULL */
    json_t *warnings; /* the server's warnings on the way (strings) */
    int link;
    int progress;     /* the last progress value sent */
    int approval;     /* the request it waits on a human for, 0: none */
    int asked;        /* the last request it waited on, 0: none */
    bool progress_said_request; /* that request's message went out as progress */
    bool stateless;   /* asked under the stateless revision: its result says resultType */
    char *waiting;    /* that request's message */
    uint64_t waiting_since; /* when the last request for a human came */
    uint64_t started;       /* when the call was sent to the server */
    uint64_t last_sent;     /* the last progress sent, 0: none yet */
    uint64_t next_beat;     /* the next progress is due (with a token) */
} mcp_call;

static void out(mcp_state *s, json_t *msg)
{
    if (s->out_broken) {
        json_decref(msg);
        return;
    }
    if (rpc_send(s->out_fd, msg) < 0)
        s->out_broken = true;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("corral mcp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void call_free(mcp_call *c)
{
    link_del(&c->node);
    json_decref(c->rpc_id);
    json_decref(c->req);
    json_decref(c->token);
    json_decref(c->warnings);
    free(c->waiting);
    free(c);
}

/* ---- the bridge's callbacks ------------------------------------------------------ */

static void progress(mcp_call *c, const char *message)
{
    if (!c->token)
        return;
    json_t *params = json_pack("{s:O, s:i, s:s}", "progressToken", c->token, "progress", ++c->progress, "message",
                               message);
    out(c->s, rpc_notification("notifications/progress", params));
    c->last_sent = now_ms();
    c->next_beat = c->last_sent + c->s->opt.progress_ms;
}

/* A beat of a waiting call: the client hears the call is alive (Claude
 * Code ends a call that is quiet for its idle timeout, and tells nobody),
 * and what it waits for: a human (the request, said in full the first
 * time), or its command. */
static void beat(mcp_call *c)
{
    char *msg;
    if (c->approval && c->waiting && !c->progress_said_request)
        msg = xstrdup(c->waiting); /* deferred by the interval: said now */
    else if (c->approval)
        msg = xasprintf("still %s (%llu s so far)", c->waiting ? c->waiting : "waiting for a human",
                        (unsigned long long)((now_ms() - c->waiting_since) / 1000));
    else
        msg = xasprintf("the command is still running (%llu s so far); the call returns when it ends or after "
                        "its yield of %lld s",
                        (unsigned long long)((now_ms() - c->started) / 1000),
                        (long long)(json_integer_value(json_object_get(c->req, "yield_time_ms")) / 1000));
    if (c->approval)
        c->progress_said_request = true;
    progress(c, msg);
    free(msg);
}

static void on_event(void *user, void *call, json_t *ev)
{
    (void)user;
    mcp_call *c = call;
    const char *kind = json_string_value(json_object_get(ev, "event"));
    if (!kind || !json_is_string(json_object_get(ev, "message")))
        return;
    /* Said on stderr and to the agent: another machine's server (-H) may
     * send anything, so its invisible characters are made visible. */
    char *seen = client_field(ev, "message", NULL);
    char *clean = quote_shorten(seen, 2000);
    free(seen);
    if (strcmp(kind, "approval_pending") == 0) {
        /* Whoever runs the agent may have no screen attached: the request
         * and how to answer it are named where they can see it. */
        note("%s", clean);
        c->approval = (int)json_integer_value(json_object_get(ev, "approval"));
        c->asked = c->approval;
        free(c->waiting);
        c->waiting = xstrdup(clean);
        c->waiting_since = now_ms();
        /* Who is asked, and how to answer, is news: said at once, unless a
         * progress went out less than an interval ago (the client hears
         * at most one per interval), then at the next beat. */
        c->progress_said_request = false;
        if (!c->last_sent || c->waiting_since >= c->last_sent + c->s->opt.progress_ms) {
            progress(c, clean);
            c->progress_said_request = true;
        } else
            c->next_beat = c->last_sent + c->s->opt.progress_ms;
    } else if (strcmp(kind, "warning") == 0) {
        note("warning: %s", clean);
        if (!c->warnings)
            c->warnings = json_array();
        json_array_append_new(c->warnings, json_string(clean));
    }
    free(clean);
}

static void on_reply(void *user, void *call, json_t *reply, const char *err)
{
    (void)user;
    mcp_call *c = call;
    json_t *result;
    json_t *waits = NULL;
    if (c->asked) {
        /* The wall time the envelope shows counts from the answer: the
         * model hears of the wait before it here. */
        waits = json_array();
        char *w = xasprintf("corral: this call waited %llu s for the user to answer request %d",
                            (unsigned long long)((now_ms() - c->waiting_since + 500) / 1000), c->asked);
        json_array_append_new(waits, json_string(w));
        free(w);
    }
    if (reply) {
        result = mcp_tool_result(c->req, reply, c->warnings, waits);
        json_decref(reply);
    } else {
        char *text = xasprintf("corral: the call was lost: %s. A command it started may still be running: "
                               "see corral ls",
                               err);
        result = mcp_tool_error(text);
        free(text);
    }
    json_decref(waits);
    if (c->stateless)
        json_object_set_new(result, "resultType", json_string("complete"));
    out(c->s, rpc_result(json_incref(c->rpc_id), result));
    call_free(c);
}

/* The approvals list, asked while a call waits: still waiting, or answered. */
static void on_answer(void *user, void *call, json_t *reply)
{
    (void)user;
    mcp_call *c = call;
    bool pending = false;
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(reply, "approvals"), i, a) {
        if (json_integer_value(json_object_get(a, "id")) == c->approval)
            pending = true;
    }
    json_decref(reply);
    if (!pending)
        c->approval = 0; /* answered: the call waits for its command now */
    beat(c);
}

static const mcp_bridge_ops bridge_ops = {.event = on_event, .reply = on_reply, .answer = on_answer};

/* ---- methods ------------------------------------------------------------------ */

char *mcp_client_group(const char *client_name)
{
    if (!client_name || !*client_name)
        return xstrdup("mcp");
    if (strcmp(client_name, "codex-mcp-client") == 0)
        return xstrdup("codex");
    if (strcmp(client_name, "claude-code") == 0)
        return xstrdup("claude");
    if (strcmp(client_name, "gemini-cli-mcp-client") == 0)
        return xstrdup("gemini");
    return sanitize_text(client_name, strlen(client_name), 64);
}

static const char instructions[] =
    "Every command runs in a sandboxed corral session that the user watches live. exec_command and write_stdin "
    "work as in the Codex CLI. A command that needs more than its sandbox allows can ask with "
    "sandbox_permissions (require_escalated, or with_additional_permissions) and a justification: the call "
    "waits until the user answers, and a denial says what they answered and any note they typed. Inside a "
    "session a program can ask the same way with `corral escalate --reason TEXT -- CMD` ($CORRAL_BIN is "
    "corral's absolute path). The "
    "network goes through corral's proxy (HTTP_PROXY and friends are set): the first connection to a new host "
    "waits for the user too, and a denied host answers HTTP 403 with the reason.";

static void reply_error(mcp_state *s, json_t *id, int code, const char *message)
{
    out(s, rpc_error(json_incref(id), code, message));
}

/* The name sessions are grouped under, from a client's clientInfo (unless
 * --name gave one), before the first connection. */
static void learn_client(mcp_state *s, json_t *info)
{
    const char *name = json_string_value(json_object_get(info, "name"));
    if (s->opt.name || !name || s->connected_once)
        return;
    free(s->client);
    s->client = mcp_client_group(name);
    mcp_bridge_set_name(&s->bridge, s->client);
}

/* The stateless revision (2026-07-28) has no initialize: a client asks
 * server/discover which revisions are served (Claude Code does, then
 * falls back to initialize if it is not answered), and every request
 * names its revision and client in params._meta.  The tools and their
 * results are the same; a result says resultType "complete". */
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CLIENT "io.modelcontextprotocol/clientInfo"

static void m_discover(mcp_state *s, json_t *id, json_t *params)
{
    learn_client(s, json_object_get(json_object_get(params, "_meta"), META_CLIENT));
    json_t *result = json_pack("{s:[s], s:{s:{s:b}}, s:s, s:i, s:s, s:s, s:{s:{s:s, s:s, s:s}}}", "supportedVersions",
                               MCP_VERSION_STATELESS, "capabilities", "tools", "listChanged", false, "instructions",
                               instructions, "ttlMs", 0, "cacheScope", "private", "resultType", "complete", "_meta",
                               "io.modelcontextprotocol/serverInfo", "name", "corral", "title", "corral", "version",
                               PACKAGE_VERSION);
    out(s, rpc_result(json_incref(id), result));
    if (!s->connected_once && !s->connect_at)
        s->connect_at = now_ms() + MCP_CONNECT_GRACE_MS;
}

/* A request under the stateless revision: 1, 0 for one without the
 * revision in its _meta, -1 when it names one corral does not serve
 * (answered here with -32022, as the revision asks). */
static int stateless(mcp_state *s, rpc_msg *m)
{
    json_t *meta = json_object_get(m->params, "_meta");
    json_t *v = json_object_get(meta, META_VERSION);
    if (!v)
        return 0;
    if (!json_is_string(v) || strcmp(json_string_value(v), MCP_VERSION_STATELESS) != 0) {
        json_t *err = rpc_error(json_incref(m->id), RPC_UNSUPPORTED_VERSION,
                                "unsupported protocol version: corral mcp serves " MCP_VERSION_STATELESS
                                " (and, after initialize, " MCP_VERSION_NEW " and " MCP_VERSION_OLD ")");
        json_object_set_new(json_object_get(err, "error"), "data",
                            json_pack("{s:[s], s:O}", "supported", MCP_VERSION_STATELESS, "requested", v));
        out(s, err);
        return -1;
    }
    learn_client(s, json_object_get(meta, META_CLIENT));
    return 1;
}

static void m_initialize(mcp_state *s, json_t *id, json_t *params)
{
    json_t *version = json_object_get(params, "protocolVersion");
    if (!json_is_object(params) || !json_is_string(version)) {
        reply_error(s, id, RPC_INVALID_PARAMS, "initialize needs params.protocolVersion (a string)");
        return;
    }
    const char *asked = json_string_value(version);
    const char *agreed = strcmp(asked, MCP_VERSION_OLD) == 0 ? MCP_VERSION_OLD : MCP_VERSION_NEW;
    free(s->version);
    s->version = xstrdup(agreed);
    if (!s->opt.name && !s->connected_once) {
        json_t *info = json_object_get(params, "clientInfo");
        free(s->client);
        s->client = mcp_client_group(json_string_value(json_object_get(info, "name")));
        mcp_bridge_set_name(&s->bridge, s->client);
    }
    json_t *result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", agreed,
                               "capabilities", "tools", "listChanged", false, "serverInfo", "name", "corral",
                               "title", "corral", "version", PACKAGE_VERSION, "instructions", instructions);
    out(s, rpc_result(json_incref(id), result));
    /* Not connected yet: a client's tools/list comes next and must be
     * answered at once (Claude Code sends its first model request without
     * the tools of a server that is slow to list them), and reaching the
     * server may mean starting one.  The connection follows the tools/list
     * answer, or CONNECT_GRACE_MS of quiet, or the first call. */
    s->connect_at = now_ms() + MCP_CONNECT_GRACE_MS;
}

/* The first connection to the server, made once, before the first call
 * (which would make it anyway) or once the client is answered. */
static void connect_server(mcp_state *s)
{
    if (s->connected_once)
        return;
    s->connected_once = true;
    s->connect_at = 0;
    char err[1024];
    if (mcp_bridge_connect(&s->bridge, err, sizeof err) < 0)
        note("cannot reach the corral server yet (each call tries again): %s", err);
    else
        note("serving %s through the corral server (pid %d)", s->client, s->bridge.server_pid);
}

static void m_tools_call(mcp_state *s, json_t *id, json_t *params, bool is_stateless)
{
    json_t *name = json_object_get(params, "name");
    json_t *args = json_object_get(params, "arguments");
    if (!json_is_object(params) || !json_is_string(name)) {
        reply_error(s, id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
        return;
    }
    if (args && !json_is_object(args) && !json_is_null(args)) {
        reply_error(s, id, RPC_INVALID_PARAMS, "tools/call: params.arguments must be an object");
        return;
    }
    char err[2048];
    json_t *req;
    switch (mcp_tool_request(json_string_value(name), args, &s->opt.exec, &req, err, sizeof err)) {
    case MCP_TOOL_UNKNOWN:
        reply_error(s, id, RPC_INVALID_PARAMS, err);
        return;
    case MCP_TOOL_BAD_ARGS: {
        json_t *result = mcp_tool_error(err);
        if (is_stateless)
            json_object_set_new(result, "resultType", json_string("complete"));
        out(s, rpc_result(json_incref(id), result));
        return;
    }
    case MCP_TOOL_OK:
        break;
    }
    connect_server(s);
    mcp_call *c = xcalloc(1, sizeof *c);
    link_init(&c->node);
    c->s = s;
    c->rpc_id = json_incref(id);
    c->stateless = is_stateless;
    json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (json_is_string(token) || json_is_integer(token))
        c->token = json_incref(token);
    /* An approval this call waits for says whether progress keeps the
     * client's call alive (the dialog and corral approvals show it). */
    const char *verb = json_string_value(json_object_get(req, "cmd"));
    if (verb && strcmp(verb, "exec") == 0)
        json_object_set_new(req, "mcp_progress_s", json_integer(c->token ? (json_int_t)(s->opt.progress_ms / 1000) : 0));
    c->req = json_deep_copy(req);
    c->started = now_ms();
    c->next_beat = c->started + s->opt.progress_ms;
    link_add(&s->calls, &c->node);
    c->link = mcp_bridge_call(&s->bridge, req, c, err, sizeof err);
    if (c->link < 0) {
        char *text = xasprintf("corral: cannot reach the corral server: %s", err);
        json_t *result = mcp_tool_error(text);
        if (is_stateless)
            json_object_set_new(result, "resultType", json_string("complete"));
        out(s, rpc_result(json_incref(id), result));
        free(text);
        call_free(c);
    }
}

/* The waiting call with this id, or NULL. */
static mcp_call *find_call(mcp_state *s, json_t *id)
{
    for (link_t *l = s->calls.next; l != &s->calls; l = l->next) {
        mcp_call *c = link_entry(l, mcp_call, node);
        if (json_equal(c->rpc_id, id))
            return c;
    }
    return NULL;
}

static void m_cancelled(mcp_state *s, json_t *params)
{
    mcp_call *c = find_call(s, json_object_get(params, "requestId"));
    if (!c)
        return; /* answered already, or never ours: nothing to do */
    /* The wait ends now and nothing is answered (as MCP asks); the
     * command keeps running in the server, where corral ls shows it. */
    mcp_bridge_cancel(&s->bridge, c->link);
    call_free(c);
}

/* result (stolen) answers id; under the stateless revision it says so. */
static void answer(mcp_state *s, json_t *id, json_t *result, bool is_stateless)
{
    if (is_stateless)
        json_object_set_new(result, "resultType", json_string("complete"));
    out(s, rpc_result(json_incref(id), result));
}

static void request(mcp_state *s, rpc_msg *m)
{
    const char *method = m->method;
    if (strcmp(method, "server/discover") == 0) {
        m_discover(s, m->id, m->params);
        return;
    }
    int st = strcmp(method, "initialize") == 0 ? 0 : stateless(s, m);
    if (st < 0)
        return;
    if (strcmp(method, "initialize") == 0) {
        m_initialize(s, m->id, m->params);
    } else if (strcmp(method, "ping") == 0) {
        answer(s, m->id, json_object(), st);
    } else if (strcmp(method, "tools/list") == 0) {
        answer(s, m->id, mcp_tools_list(), st);
        /* Answered: now the server, while the client's model thinks. */
        if (!s->connected_once)
            s->connect_at = now_ms();
    } else if (strcmp(method, "tools/call") == 0) {
        m_tools_call(s, m->id, m->params, st);
    } else {
        char *shown = sanitize_text(method, strlen(method), 100);
        char *msg = xasprintf("method not found: %s (corral mcp offers server/discover, initialize, ping, "
                              "tools/list and tools/call)",
                              shown);
        reply_error(s, m->id, RPC_METHOD_NOT_FOUND, msg);
        free(msg);
        free(shown);
    }
}

static void notification(mcp_state *s, rpc_msg *m)
{
    if (strcmp(m->method, "notifications/initialized") == 0)
        s->initialized = true;
    else if (strcmp(m->method, "notifications/cancelled") == 0)
        m_cancelled(s, m->params);
    /* Any other notification needs nothing from a server with only tools. */
}

void mcp_state_message(mcp_state *s, const char *line, size_t len)
{
    rpc_msg m;
    rpc_parse(line, len, &m);
    switch (m.kind) {
    case RPC_REQUEST:
        request(s, &m);
        break;
    case RPC_NOTIFICATION:
        notification(s, &m);
        break;
    case RPC_RESPONSE:
        break; /* corral mcp asks the client nothing */
    case RPC_BAD:
        /* A notification with a wrong field gets no answer (it has no id
         * to answer); everything else is told what was wrong. */
        if (m.error_code == RPC_PARSE_ERROR || m.id || !json_object_get(m.root, "method") ||
            json_object_get(m.root, "id"))
            reply_error(s, m.id, m.error_code, m.error_text);
        break;
    }
    rpc_msg_free(&m);
}

void mcp_state_too_large(mcp_state *s)
{
    char msg[160];
    snprintf(msg, sizeof msg, "invalid request: the message is longer than %u bytes and was skipped",
             RPC_MAX_MESSAGE);
    reply_error(s, NULL, RPC_INVALID_REQUEST, msg);
}

int mcp_state_timeout(mcp_state *s)
{
    uint64_t now = now_ms(), next = s->connect_at;
    for (link_t *l = s->calls.next; l != &s->calls; l = l->next) {
        mcp_call *c = link_entry(l, mcp_call, node);
        if (c->token && (!next || c->next_beat < next))
            next = c->next_beat;
    }
    if (!next)
        return -1;
    return next <= now ? 0 : (int)(next - now);
}

void mcp_state_tick(mcp_state *s)
{
    uint64_t now = now_ms();
    if (s->connect_at && s->connect_at <= now)
        connect_server(s);
    for (link_t *l = s->calls.next; l != &s->calls; l = l->next) {
        mcp_call *c = link_entry(l, mcp_call, node);
        if (!c->token || c->next_beat > now)
            continue;
        c->next_beat = now + s->opt.progress_ms;
        /* Waiting for a human: is it still?  The answer comes through
         * on_answer, which sends the progress.  If the question cannot be
         * asked (one is outstanding), this beat says the call is alive. */
        if (!c->approval || mcp_bridge_ask(&s->bridge, c->link, json_pack("{s:s}", "cmd", "approvals")) < 0)
            beat(c);
    }
}

void mcp_state_init(mcp_state *s, const mcp_options *opt, int out_fd)
{
    memset(s, 0, sizeof *s);
    s->opt = *opt;
    if (!s->opt.progress_ms)
        s->opt.progress_ms = MCP_PROGRESS_INTERVAL_MS;
    s->out_fd = out_fd;
    link_init(&s->calls);
    mcp_bridge_init(&s->bridge, &bridge_ops, s);
    s->client = xstrdup(opt->name ? opt->name : "mcp");
    mcp_bridge_set_name(&s->bridge, s->client);
}

void mcp_state_free(mcp_state *s)
{
    mcp_bridge_close(&s->bridge);
    while (!link_empty(&s->calls))
        call_free(link_entry(s->calls.next, mcp_call, node));
    free(s->version);
    free(s->client);
    s->version = s->client = NULL;
}
