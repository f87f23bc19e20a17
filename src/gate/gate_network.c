/*
 * gate_network.c - network hosts into the gate (docs/network.md): the
 * proxy's decide hook.  A sandboxed process connecting to a host through
 * the proxy is one more request of the gate (origin network): the rules,
 * the session's allow and deny sets, then the approval queue and its
 * dialog, cache and log, like every other way past a sandbox.  Concurrent
 * connections to the same (host, protocol, port) of one session share one
 * question and its answer.
 */
#include "config.h"

#include "gate/gate_network.h"
#include "net/proxy.h"

#include "gate/gate_server.h"
#include "server/watch.h"
#include "base/quote.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the network gate keeps on the server: the questions waiting for a
 * human. */
typedef struct net_state {
    link_t tickets; /* net_ticket.node */
} net_state;
static const int net_state_key;

static link_t *net_tickets(server_t *srv)
{
    net_state *st = server_attached(srv, &net_state_key);
    return &st->tickets;
}

/* What it keeps on each session: its hosts answered "for this session"
 * (a) and denied (d), and its proxied connections open now. */
typedef struct net_session {
    gate_cache allowed, denied;
    int open;
} net_session;
static const int net_session_key;

static void net_session_free(void *p)
{
    net_session *ns = p;
    gate_cache_free(&ns->allowed);
    gate_cache_free(&ns->denied);
    free(ns);
}

static net_session *net_of(session_t *s)
{
    return server_session_data(s, &net_session_key, sizeof(net_session), net_session_free);
}

typedef struct net_ticket {
    gate_ticket t; /* first: the gate hands it back */
    link_t node;   /* in the network gate's tickets while asked */
    char *key;     /* the session's key of (host, protocol, port) */
    proxy_pending **waiting; /* the connections that wait for the answer */
    size_t n, cap;
} net_ticket;

static void add_waiter(net_ticket *n, proxy_pending *p)
{
    if (n->n == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->waiting = xrealloc(n->waiting, n->cap * sizeof *n->waiting);
    }
    n->waiting[n->n++] = p;
}

static void net_release(gate_ticket *t)
{
    net_ticket *n = (net_ticket *)t;
    link_del(&n->node);
    free(n->key);
    free(n->waiting);
    free(n);
}

static int net_launch(gate_ticket *t, const gate_launch *l, char *err, size_t errlen)
{
    (void)l;
    (void)err;
    (void)errlen;
    net_ticket *n = (net_ticket *)t;
    proxy_verdict v = t->g.host_named ? PROXY_ALLOW_EXPLICIT : PROXY_ALLOW;
    /* Who allowed it, for the connection's record. */
    char *why = t->g.asked_human ? xasprintf("approved by the user (%s)", approval_answer_name(t->g.answer))
                : t->g.state == GATE_CACHED ? xstrdup("approved by the user earlier, for this session")
                : xasprintf("allowed by %s", t->g.verdict.reason[0] ? t->g.verdict.reason : "the policy");
    /* Each connection hears once; the gate is done with the ticket. */
    size_t count = n->n;
    proxy_pending **w = n->waiting;
    n->waiting = NULL;
    n->n = n->cap = 0;
    gate_done(t);
    for (size_t i = 0; i < count; i++)
        proxy_decided(w[i], v, why);
    free(w);
    free(why);
    return 0;
}

static void net_settle(gate_ticket *t, gate_settle how, const char *message)
{
    (void)how;
    net_ticket *n = (net_ticket *)t;
    for (size_t i = 0; i < n->n; i++)
        proxy_decided(n->waiting[i], PROXY_DENY, message);
    n->n = 0;
}

static const gate_port net_port = {.launch = net_launch, .settle = net_settle, .release = net_release};

static void decide(void *user, proxy_pending *p, const proxy_request *r)
{
    server_t *srv = user;
    session_t *s = server_find(srv, r->session);
    if (!s || s->state != SESSION_RUNNING) {
        proxy_decided(p, PROXY_DENY, "the session has ended");
        return;
    }
    net_session *ns = net_of(s);
    net_ticket *n = xcalloc(1, sizeof *n);
    link_init(&n->node);
    gate_request *g = &n->t.g;
    gate_request_init(g, GATE_NETWORK);
    g->requester = xstrdup(s->client ? s->client : "user");
    g->session = s->id;
    g->session_name = xstrdup(s->name);
    g->cache = &ns->allowed;
    g->deny_cache = &ns->denied;
    g->policy = *server_session_policy(s);
    g->workspace = xstrdup(server_session_workspace(s));
    g->cwd = xstrdup(server_session_workspace(s));
    g->host = xstrdup(r->host);
    g->port = r->port;
    g->net_proto = r->proto;
    g->network = true;
    g->argv = xcalloc(3, sizeof *g->argv);
    g->argv[0] = xstrdup("network-access");
    g->argv[1] = xasprintf("%s://%s:%u", r->proto == RULE_NET_HTTP ? "http" : r->proto == RULE_NET_HTTPS ? "https"
                                                                                                    : "socks5",
                           r->host, (unsigned)r->port);
    /* What connects: the program in the foreground of the session's
     * terminal (what its shell runs); else the command running now (a
     * typed line, as typed; an exec); else the session's own command. */
    g->running = session_foreground_command(s);
    if (!g->running && s->running_line && s->running_line[0])
        g->running = xstrdup(s->running_line);
    if (!g->running)
        g->running = quote_argv_display(s->argv);
    n->key = gate_cache_key(g);
    /* Another connection of this session already asks about the same
     * host, protocol and port: it waits for that answer. */
    link_t *all = net_tickets(srv);
    for (link_t *l = all->next; l != all; l = l->next) {
        net_ticket *o = link_entry(l, net_ticket, node);
        if (strcmp(o->key, n->key) == 0) {
            add_waiter(o, p);
            gate_request_free(g);
            free(n->key);
            free(n);
            return;
        }
    }
    add_waiter(n, p);
    link_add(net_tickets(srv), &n->node);
    gate_submit(srv, &n->t, &net_port);
}

static void cancelled(void *user, proxy_pending *p)
{
    server_t *srv = user;
    link_t *all = net_tickets(srv);
    for (link_t *l = all->next; l != all; l = l->next) {
        net_ticket *n = link_entry(l, net_ticket, node);
        for (size_t i = 0; i < n->n; i++) {
            if (n->waiting[i] != p)
                continue;
            n->waiting[i] = n->waiting[--n->n];
            /* Nobody waits any more: the question is withdrawn. */
            if (n->n == 0)
                gate_withdraw(&n->t, "no connection waits for this host any more (the program gave up or ended)");
            return;
        }
    }
}

/* ---- the proxy's other hooks ------------------------------------------------------ */

static void log_connection(void *user, int session, json_t *record)
{
    session_t *s = server_find(user, session);
    if (s && s->events)
        eventlog_write(s->events, "network", record, false);
    else
        json_decref(record);
}

static void open_count(void *user, int session, int open)
{
    session_t *s = server_find(user, session);
    if (!s)
        return;
    net_of(s)->open = open;
    watch_session_changed(s); /* lists show the count */
}

static const proxy_hooks hooks = {
    .decide = decide, .cancelled = cancelled, .log = log_connection, .open_count = open_count};

static void gate_network_start(server_t *srv)
{
    net_state *st = xcalloc(1, sizeof *st);
    link_init(&st->tickets);
    server_attach(srv, &net_state_key, st, free);
    proxy_limits limits = {.max_per_session = server_conf(srv)->network_max_connections};
    server_set_proxy(srv, proxy_new(server_loop(srv), &hooks, srv, &limits));
}

static void gate_network_shutdown(server_t *srv)
{
    if (server_proxy(srv))
        proxy_shutdown(server_proxy(srv));
}

static void gate_network_session_ended(server_t *srv, session_t *s)
{
    if (server_proxy(srv))
        proxy_session_ended(server_proxy(srv), s->id);
}

/* Its proxied connections open now, in the session's JSON. */
static void gate_network_session_json(server_t *srv, session_t *s, json_t *o)
{
    (void)srv;
    net_session *ns = server_session_attached(s, &net_session_key);
    json_object_set_new(o, "connections", json_integer(ns ? ns->open : 0));
}

const server_module gate_network_module = {
    .name = "gate_network",
    .start = gate_network_start,
    .shutdown = gate_network_shutdown,
    .session_finished = gate_network_session_ended,
    .session_json = gate_network_session_json,
};
