/*
 * escalation.c - see escalation.h.
 */
#include "config.h"

#include "gate/escalation.h"

#include "protocol/chanmsg.h"
#include "gate/gate_server.h"
#include "sandbox/launch.h"
#include "gate/pathres.h"
#include "snap/snap_server.h"
#include "server/sesschan.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One request from inside a session, alive while its requester is. */
/* What escalation keeps on the server: every request from inside a
 * session, asked or running. */
typedef struct escalation_state {
    link_t requests; /* chan_ticket.node */
} escalation_state;
static const int escalation_state_key;

static link_t *requests(server_t *srv)
{
    escalation_state *st = server_attached(srv, &escalation_state_key);
    return &st->requests;
}

/* What it keeps on each session: the commands answered "for this
 * session". */
static const int approved_key;

static void approved_free(void *p)
{
    gate_cache_free(p);
    free(p);
}

static gate_cache *approved_of(session_t *s)
{
    return server_session_data(s, &approved_key, sizeof(gate_cache), approved_free);
}

typedef struct chan_ticket {
    gate_ticket t;  /* first: the gate hands it back */
    link_t node;    /* in the server's requests (requests()) */
    server_t *srv;
    int session;
    int reply;      /* the requester's reply socket */
    uv_poll_t poll; /* on reply: the requester going away */
    bool polling;
    int stdio[3];   /* escalate: the requester's 0, 1, 2 */
    int approval;
    bool running;   /* escalate: the command has started */
    sb_child child;
    sesschan *run_chan; /* escalate: the running command's channel (its proxy listeners) */
    bool released;
} chan_ticket;

static void reply(chan_ticket *c, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (s && c->reply >= 0)
        (void)!send(c->reply, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(s);
}

/* {"state":state,"message":message}.  message may quote a path cut
 * short in the middle of a character, or a host file name that is not
 * UTF-8: proto_text_json keeps it from being refused. */
static json_t *state_json(const char *state, const char *message)
{
    return json_pack("{s:s, s:o?}", "state", state, "message", message ? proto_text_json(message) : NULL);
}

static void reply_state(chan_ticket *c, const char *state, const char *message)
{
    reply(c, state_json(state, message));
}

static void log_event(chan_ticket *c, const char *name, json_t *fields)
{
    session_t *s = server_find(c->srv, c->session);
    if (s && s->events)
        eventlog_write(s->events, name, fields, true);
    else
        json_decref(fields);
}

static void on_poll_closed(uv_handle_t *h)
{
    chan_ticket *c = h->data;
    if (c->reply >= 0)
        close(c->reply);
    free(c);
}

/* The port's release: the request's fds go; the requester sees its reply
 * socket end. */
static void chan_release(gate_ticket *t)
{
    chan_ticket *c = (chan_ticket *)t;
    c->released = true;
    link_del(&c->node);
    sesschan_run_ended(c->run_chan);
    c->run_chan = NULL;
    for (int i = 0; i < 3; i++)
        if (c->stdio[i] >= 0)
            close(c->stdio[i]);
    if (c->polling) {
        uv_close((uv_handle_t *)&c->poll, on_poll_closed);
    } else {
        if (c->reply >= 0)
            close(c->reply);
        free(c);
    }
}

static void chan_pending(gate_ticket *t, int approval)
{
    chan_ticket *c = (chan_ticket *)t;
    c->approval = approval;
    reply(c, json_pack("{s:s, s:i}", "state", "pending", "approval", approval));
}

static void chan_settle(gate_ticket *t, gate_settle how, const char *message)
{
    chan_ticket *c = (chan_ticket *)t;
    if (how == SETTLE_FAILED) {
        char *text = xasprintf("%s: %s", t->g.origin == GATE_HOOK ? "corral" : "corral escalate", message);
        reply_state(c, "failed", text);
        free(text);
        return;
    }
    reply_state(c, "denied", message);
    if (how == SETTLE_FORBIDDEN) {
        if (t->g.origin == GATE_HOOK)
            log_event(c, "command_refused", json_pack("{s:o, s:o}", "line", proto_text_json(t->g.line ? t->g.line : ""),
                                                      "reason", proto_text_json(message)));
        else
            log_event(c, "escalation_refused",
                      json_pack("{s:o, s:o}", "argv", proto_argv_json(t->g.argv), "reason", proto_text_json(message)));
    }
}

/* Names each escalated run's channel (never 0, the session's own). */
static unsigned srv_run_channels;

/* An approved escalation: a child of the server, outside the session's
 * sandbox (or in the widened one), with the requester's stdio. */
static int start_escalated(chan_ticket *c, const gate_launch *l, char *err, size_t errlen)
{
    server_t *srv = c->srv;
    session_t *s = server_find(srv, c->session);
    if (!s || s->state != SESSION_RUNNING) {
        snprintf(err, errlen, "the session has ended");
        return -1;
    }
    /* Without the session's tools, but with the environment an agent's
     * process gets. */
    sbconf_tools tools = {.set_env = (char *const *)server_session_env(true, false)};
    sb_plan *plan = sbconf_compile(server_conf(srv), &l->spec, &tools, 0, err, errlen);
    if (!plan)
        return -1;
    /* A sandbox in network mode proxy hands its listeners over a channel:
     * this run's own, which can do nothing else. */
    bool proxy_mode = !plan->unconfined && plan->net == SB_NET_PROXY;
    int chan_server = -1, chan_child = -1;
    if (proxy_mode && (chan_child = sesschan_create(srv, &chan_server, err, errlen)) < 0) {
        sb_plan_free(plan);
        free(plan);
        return -1;
    }
    sb_stdio io = {.in = c->stdio[0], .out = c->stdio[1], .err = c->stdio[2], .tty = false, .chan = chan_child};
    int rc = sb_launch(plan, &io, false, &c->child, err, errlen);
    if (chan_child >= 0)
        close(chan_child);
    if (rc == 0 && chan_server >= 0)
        c->run_chan = sesschan_attach_run(srv, s, chan_server, true, ++srv_run_channels);
    else if (chan_server >= 0)
        close(chan_server);
    json_t *fields = json_pack("{s:o, s:s, s:s, s:s, s:i}", "argv", proto_argv_json(c->t.g.argv), "cwd", plan->cwd,
                               "workspace", plan->workspace, "profile", plan->profile, "approval", c->approval);
    sb_plan_free(plan);
    free(plan);
    for (int i = 0; i < 3; i++) {
        close(c->stdio[i]);
        c->stdio[i] = -1;
    }
    if (rc < 0) {
        json_decref(fields);
        return -1;
    }
    c->running = true;
    json_object_set_new(fields, "pid", json_integer(c->child.pid));
    log_event(c, "escalated", fields);
    reply_state(c, "running", NULL);
    return 0;
}

static int chan_launch(gate_ticket *t, const gate_launch *l, char *err, size_t errlen)
{
    chan_ticket *c = (chan_ticket *)t;
    if (t->g.origin == GATE_HOOK) {
        /* The line runs in the shell, in the session's own sandbox, once
         * the workspace's "before" snapshot is taken (snap_server.h). */
        int fd = fcntl(c->reply, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            reply_state(c, "run", NULL);
        else
            snap_hook_line(c->srv, c->session, t->g.line, t->g.cwd, fd);
        gate_done(t);
        return 0;
    }
    return start_escalated(c, l, err, errlen);
}

static const gate_port chan_port = {
    .pending = chan_pending, .launch = chan_launch, .settle = chan_settle, .release = chan_release};

static bool escalation_reaped(server_t *srv, pid_t pid, int status)
{
    link_t *all = requests(srv);
    for (link_t *l = all->next; l != all; l = l->next) {
        chan_ticket *c = link_entry(l, chan_ticket, node);
        if (!c->running || c->child.pid != pid)
            continue;
        sb_child_feed(&c->child);
        int st = sb_child_status(&c->child, status);
        json_t *outcome = c->child.error && !c->child.ready ? state_json("failed", c->child.error)
                                                            : json_pack("{s:s, s:i}", "state", "exited", "status", st);
        /* Its sandbox is gone (placeholders removed, cgroup too) before the
         * requester hears of the end and goes on in the workspace. */
        session_release_sandbox(server_loop(srv), &c->child);
        sesschan_run_ended(c->run_chan);
        c->run_chan = NULL;
        c->running = false;
        reply(c, outcome);
        log_event(c, "escalation_ended", json_pack("{s:i, s:i}", "approval", c->approval, "status", st));
        gate_done(&c->t);
        return true;
    }
    return false;
}

/* End c whatever state it is in: withdrawn while asked (why: for the
 * screens), killed while running (reaped later, then done), dropped
 * otherwise. */
static void end_request(chan_ticket *c, const char *why)
{
    if (c->running)
        launch_kill_tree(c->child.pid); /* escalation_reaped finishes it */
    else
        gate_withdraw(&c->t, why);
}

static void on_reply_event(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    chan_ticket *c = h->data;
    char buf[256];
    ssize_t n = recv(c->reply, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
        return; /* nothing more is expected from the requester: ignored */
    /* Gone: nothing of its request may go on. */
    uv_poll_stop(&c->poll);
    end_request(c, "the program that asked (corral escalate) stopped waiting");
}

/* ---- requests ------------------------------------------------------------------ */

/* Where code in session x's sandbox could write: a symlink there may not
 * be followed in a path it sends. */
static char **writable_roots(server_t *srv, session_t *s)
{
    const launch_sandbox *sb = server_session_sandbox(s);
    const conf_t *conf = server_conf(srv);
    size_t n = 1;
    for (char **w = sb->write; w && *w; w++)
        n++;
    n += conf->sandbox.n_write;
    char **out = xcalloc(n + 1, sizeof *out);
    size_t k = 0;
    out[k++] = xstrdup(server_session_workspace(s));
    for (char **w = sb->write; w && *w; w++)
        out[k++] = xstrdup(*w);
    for (size_t i = 0; i < conf->sandbox.n_write; i++)
        out[k++] = xstrdup(conf->sandbox.write[i]);
    return out;
}

/* The gate request of session s, with its cwd resolved (-1 with err). */
static int fill_request(chan_ticket *c, session_t *s, gate_origin origin, const char *cwd, char *err,
                        size_t errlen)
{
    server_t *srv = c->srv;
    gate_request *g = &c->t.g;
    gate_request_init(g, origin);
    g->requester = xstrdup(s->client ? s->client : "user");
    g->session = s->id;
    g->session_name = xstrdup(s->name);
    g->cache = approved_of(s);
    g->tty = s->tty;
    /* The session's own sandbox, deny entries and all: whatever widens it
     * keeps them.  Its workspace stays its workspace. */
    g->workspace = xstrdup(server_session_workspace(s));
    launch_sandbox_copy(&g->base, server_session_sandbox(s));
    g->config_deny = server_conf(srv)->sandbox.n_deny > 0;
    g->policy = *server_session_policy(s);
    char **writable = writable_roots(srv, s);
    char perr[PATH_MAX + 512];
    g->cwd = pathres_resolve(cwd, writable, perr, sizeof perr);
    strv_free(writable);
    if (!g->cwd) {
        snprintf(err, errlen, "its working directory: %s", perr);
        return -1;
    }
    return 0;
}

/* An escalation's argv and write roots, resolved against session s's
 * writable roots (-1 with err). */
static int read_escalate(chan_ticket *c, session_t *s, const chan_msg *m, char *err, size_t errlen)
{
    gate_request *g = &c->t.g;
    g->argv = strv_copy(m->argv);
    g->network = m->network;
    if (m->write) {
        size_t n = 0;
        while (m->write[n])
            n++;
        g->write = xcalloc(n + 1, sizeof *g->write);
        char **writable = writable_roots(c->srv, s);
        for (size_t i = 0; i < n; i++) {
            char perr[PATH_MAX + 512];
            g->write[i] = pathres_resolve(m->write[i], writable, perr, sizeof perr);
            if (!g->write[i]) {
                snprintf(err, errlen, "write path: %s", perr);
                strv_free(writable);
                return -1;
            }
        }
        strv_free(writable);
    }
    g->sandbox = g->network || (g->write && g->write[0]) ? SANDBOX_MORE_PERMISSIONS : SANDBOX_ESCALATED;
    if (m->reason)
        g->justification = xstrdup(m->reason);
    return 0;
}

/* A shell hook's line as the command its shell runs. */
static void read_check(chan_ticket *c, const chan_msg *m)
{
    gate_request *g = &c->t.g;
    g->argv = xcalloc(4, sizeof *g->argv);
    g->argv[0] = xstrdup(m->shell);
    g->argv[1] = xstrdup("-c");
    g->argv[2] = xstrdup(m->line);
    g->line = xstrdup(m->line);
    g->sandbox = SANDBOX_DEFAULT;
}

static void escalation_request(server_t *srv, session_t *s, const chan_msg *m, int reply_fd, int stdio[3])
{
    if (m->verb == CHAN_MARK) {
        /* The shell hook's "the line ended" (snap_server.h): no request. */
        for (int i = 0; i < 3; i++)
            if (stdio[i] >= 0)
                close(stdio[i]);
        snap_hook_mark(srv, s, m, reply_fd);
        return;
    }
    chan_ticket *c = xcalloc(1, sizeof *c);
    c->srv = srv;
    c->session = s->id;
    c->reply = reply_fd;
    for (int i = 0; i < 3; i++)
        c->stdio[i] = stdio[i];
    link_add(requests(srv), &c->node);
    fcntl(c->reply, F_SETFL, fcntl(c->reply, F_GETFL) | O_NONBLOCK);
    bool escalate = m->verb == CHAN_ESCALATE;
    char err[PATH_MAX + 600];
    int rc = -1;
    /* chanmsg.c took only escalate, check and mark; sesschan.c the listeners. */
    if (escalate && (stdio[0] < 0 || stdio[1] < 0 || stdio[2] < 0))
        snprintf(err, sizeof err, "escalate needs the requester's stdin, stdout and stderr");
    else if (fill_request(c, s, escalate ? GATE_ESCALATE : GATE_HOOK, m->cwd, err, sizeof err) == 0) {
        if (escalate)
            rc = read_escalate(c, s, m, err, sizeof err);
        else {
            read_check(c, m);
            rc = 0;
        }
    }
    if (rc < 0) {
        reply_state(c, "failed", err);
        gate_request_free(&c->t.g);
        chan_release(&c->t);
        return;
    }
    uv_poll_init(server_loop(srv), &c->poll, c->reply);
    c->poll.data = c;
    c->polling = true;
    uv_poll_start(&c->poll, UV_READABLE | UV_DISCONNECT, on_reply_event);
    gate_submit(srv, &c->t, &chan_port);
}

static size_t escalation_open_count(server_t *srv, int id)
{
    size_t n = 0;
    link_t *all = requests(srv);
    for (link_t *l = all->next; l != all; l = l->next)
        n += link_entry(l, chan_ticket, node)->session == id;
    return n;
}

/* End every request of session id (0: all). */
static void end_requests(server_t *srv, int id)
{
    link_t *all = requests(srv);
    link_t *l = all->next;
    while (l != all) {
        chan_ticket *c = link_entry(l, chan_ticket, node);
        l = l->next;
        if (id && c->session != id)
            continue;
        end_request(c, id ? "the session that asked has ended" : "the corral server is stopping");
        /* (end_request may free c, never another entry) */
    }
}

static void escalation_session_ended(server_t *srv, int id)
{
    end_requests(srv, id);
}

static void escalation_shutdown(server_t *srv)
{
    end_requests(srv, 0);
}

static void on_session_ended(server_t *srv, session_t *s)
{
    escalation_session_ended(srv, s->id);
}

static const sesschan_handler channel_handler = {
    .open_count = escalation_open_count,
    .request = escalation_request,
};

static void escalation_start(server_t *srv)
{
    escalation_state *st = xcalloc(1, sizeof *st);
    link_init(&st->requests);
    server_attach(srv, &escalation_state_key, st, free);
    sesschan_handle_with(&channel_handler);
}

const server_module escalation_module = {
    .name = "escalation",
    .start = escalation_start,
    .shutdown = escalation_shutdown,
    .session_finished = on_session_ended,
    .session_freed = on_session_ended,
    .reaped = escalation_reaped,
};
