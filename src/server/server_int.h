/*
 * server_int.h - the server's state (struct server) and a session as the
 * server keeps it (server_session), with the calls on them
 * (server_sessions.c, server.c).  Included by the server core (src/server/)
 * and, until each has a header of its own, by the gate's and the
 * snapshots' server modules (src/gate/, src/snap/) through gate_server.h
 * and snap_server.h
 * (tests/tools/layering.py lists them).  The program's table of modules
 * does not need it: module.h, waiter.h and watch.h are enough.
 */
#ifndef CORRAL_SERVER_INT_H
#define CORRAL_SERVER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "gate/approvals.h"
#include "config/conf.h"
#include "config/sbconf.h"
#include "record/eventlog.h"
#include "gate/gate.h"
#include "base/list.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/module.h"
#include "policy/policy.h"
#include "protocol/proto.h"
#include "policy/rules.h"
#include "server/session.h"
#include "server/store.h"
#include "server/waiter.h"
#include "server/watch.h"

typedef struct server server_t;
typedef struct waiter waiter_t;

/* A session as the server keeps it: the session proper (session.c) and
 * what the server knows beside it, in one allocation (session_start
 * allocates sizeof(server_session) for the server). */
typedef struct server_session {
    session_t base;    /* first: session.c hands out &base */
    link_t node;       /* in server->sessions (every session not yet freed) */
    server_t *srv;
    bool in_store;
    waiter_t *waiter;  /* at most one exec/write_stdin waits on a session */
    link_t kill_waits; /* kill requests answered when the session ends */
    link_t watchers;   /* watch_t.sess_node */
    bool notify_pending; /* a session event is due to subscribers */
    uint64_t last_output_ms; /* loop time of the last output; 0: none yet */
    uint64_t last_bell_ms;
    struct sesschan *chan;   /* its channel (sesschan.c), NULL once closed */
    /* What requests from inside it keep (gate.h): its workspace, its own
     * sandbox (a widening adds to it, never drops its deny entries), its
     * approval policy, its "for this session" answers. */
    char *workspace;         /* canonical */
    gate_sandbox sandbox;
    policy_settings policy;
    gate_cache approved;
    /* Its network: hosts answered "for this session" (a) and denied (d),
     * and the proxied connections open now. */
    gate_cache net_allowed, net_denied;
    int net_open;
    const char *net_mode; /* its sandbox's network: "off", "proxy", "full" (static) */
    bool shell_hook;      /* an interactive bash or zsh with the shell hook: its lines are its commands */
} server_session;

static inline server_session *srv_session(session_t *s)
{
    return (server_session *)s;
}

struct waiter {
    link_t conn_node; /* in waiter.c's list of every wait */
    conn_t *conn;
    json_t *id;
    session_t *s;
    uv_timer_t timer;
    uint64_t not_before; /* monotonic ms: the 100 ms settle after a write */
    uint64_t deadline;   /* monotonic ms; 0 = until the process ends */
    double start;        /* monotonic s, for the wall time */
    int64_t max_tokens;
    bool stream;         /* send output events as it comes; reply at the end */
    bool raw;            /* no token truncation */
    bool kill_on_disconnect;
    bool done;
    waiter_exit_hook exit_hook;
    void *exit_hook_user;
};

struct server {
    uv_loop_t *loop;
    uv_pipe_t listener;
    uv_signal_t sig_term, sig_int, sig_chld, sig_hup;
    uv_timer_t shutdown_timer;
    uv_timer_t notify_timer; /* coalesces session events */
    /* The exec policy, its rules and the approval queue (gate_server.c). */
    struct rules_ws *rules_ws; /* built-in, user and trusted-workspace rules, reloaded on change */
    char *rules_error;     /* rule files that could not be loaded, or NULL */
    policy_settings policy;
    approval_queue approvals;
    link_t tickets;        /* gate_ticket.node: requests in the gate */
    link_t escalations;    /* requests from inside sessions (escalation.c) */
    struct proxy *proxy;   /* the network proxy (gate_network.c), or NULL */
    link_t net_tickets;    /* network questions waiting for a human (gate_network.c) */
    char *exe;             /* corral's executable, for sessions' tools */
    char *hook_dir;        /* the shell hooks, written at start (NULL: none) */
    store_t store;
    link_t sessions; /* session_extra.node */
    /* The modules the server runs, in the order their hooks are called
     * (module.h), ended by NULL. */
    const server_module *const *modules;
    conf_t conf;
    char *state_dir;
    char *socket_path;
    char *lock_path;
    int lock_fd;
    uint64_t use_clock;
    bool shutting_down;
    int exit_status;
};

/* Call hook of every module that has it, in the table's order. */
#define EACH_MODULE(srv, m) for (const server_module *const *m = (srv)->modules; *m; m++)
#define TELL_MODULES(srv, hook, ...)                                                                           \
    EACH_MODULE(srv, m_)                                                                                       \
        if ((*m_)->hook)                                                                                       \
            (*m_)->hook(srv, __VA_ARGS__)

/* The session with this id in the store, or NULL. */
static inline session_t *server_find(server_t *srv, int id)
{
    return store_get(&srv->store, id);
}

/* server.c */
/* Shutting down: finish once every session has ended. */
void server_maybe_finish_shutdown(server_t *srv);
/* Mark s used (most recently); the quiet form sends no session event. */
void server_touch(server_t *srv, session_t *s);
void server_touch_quiet(server_t *srv, session_t *s);


/* Compile r's sandbox plan (with the session's tools, its channel and, for
 * an interactive bash or zsh, the shell hook), spawn and store a session
 * (pruning first if the store is full).  NULL with err filled on failure; *warning receives what
 * the requester should be told (the sandbox's warnings, the 60-process
 * warning; one a line), or NULL. */
session_t *server_start_session(server_t *srv, const launch_spec *r, const char *client, char *err,
                                size_t errlen, char **warning);
/* What the server sets in the environment of everything it starts (a
 * session, an escalated command) on top of the sandbox's allowlist: the
 * terminal type, and for an agent's process the Codex CLI's
 * non-interactive settings (NO_COLOR, C.UTF-8, PAGER=cat, TERM=dumb).
 * NULL-terminated, static. */
const char *const *server_session_env(bool agent, bool tty);
void server_begin_shutdown(server_t *srv);
json_t *server_session_json(server_t *srv, session_t *s);
/* corral rm: an exited session leaves the store (its directory, with its
 * log and recording, stays under the state directory). */
void server_remove_session(server_t *srv, session_t *s);
/* Kill s's tree and answer request id on c once it has ended. */
void server_kill_and_wait(server_t *srv, conn_t *c, json_t *id, session_t *s);

/* dispatch.c */
void dispatch(conn_t *c, json_t *id, json_t *req);

#endif
