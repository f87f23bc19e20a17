/*
 * server_int.h - the server's internal types, shared by server.c (loop,
 * socket, connections, lifecycle) and dispatch.c (protocol commands) and
 * waiter.c (unified-exec waits).  Not for other modules.
 */
#ifndef CORRAL_SERVER_INT_H
#define CORRAL_SERVER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "gate/approvals.h"
#include "config/conf.h"
#include "record/eventlog.h"
#include "gate/gate.h"
#include "base/list.h"
#include "policy/policy.h"
#include "protocol/proto.h"
#include "policy/rules.h"
#include "server/session.h"
#include "server/store.h"

typedef struct server server_t;
typedef struct conn conn_t;
typedef struct waiter waiter_t;
/* Called exactly once when a wait ends: with the reply before it is sent
 * (true takes it over; text is the output, len bytes), or with reply NULL
 * when the wait ended without one (the requester went away). */
typedef bool (*waiter_exit_hook)(session_t *s, json_t *reply, const char *text, size_t len, void *user);

struct conn {
    link_t node; /* in server->conns */
    server_t *srv;
    uv_pipe_t pipe;
    proto_reader rd;
    bool hello;
    bool closing;
    char *client;     /* name given in hello */
    pid_t peer_pid;
    int refs;         /* the connection plus each waiter that points at it */
    link_t waiters;   /* waiter_t.conn_node */
    bool subscribed;  /* gets session events (watch.c) */
    link_t watches;   /* watch_t.conn_node: sessions whose terminal it follows */
    link_t gated;     /* its exec requests still in the gate (gate_exec.c) */
    gate_cache approved; /* its "for this session" answers (the agent's session) */
};

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
    link_t conn_node;
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
    link_t conns;
    conf_t conf;
    char *state_dir;
    char *socket_path;
    char *lock_path;
    int lock_fd;
    uint64_t use_clock;
    bool shutting_down;
    int exit_status;
};

/* server.c */
/* A line on the server's log (stderr): time, pid, the message. */
void server_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Shutting down: finish once every session has ended. */
void server_maybe_finish_shutdown(server_t *srv);
void conn_send(conn_t *c, json_t *msg); /* steals msg */
/* A message already encoded, ending in '\n' (stolen). */
void conn_send_line(conn_t *c, char *line, size_t len);
void conn_reply_error(conn_t *c, json_t *id, const char *code, const char *message);
void conn_unref(conn_t *c);
/* Mark s used (most recently); the quiet form sends no session event. */
void server_touch(server_t *srv, session_t *s);
void server_touch_quiet(server_t *srv, session_t *s);
session_t *server_find(server_t *srv, int id);
/* What a client asks for when it starts a session. */
typedef struct spawn_request {
    char **argv;
    const char *cwd;
    const char *workspace; /* the writable workspace; NULL: cwd */
    const char *name;
    const char *profile; /* NULL: the configured default */
    char **write, **read, **deny;
    /* Write roots the server resolved at request time: each must still be
     * bound from exactly that path when the plan is compiled. */
    char *const *resolved_write;
    int net;             /* -1: the profile's */
    session_kind kind;
    bool tty, pinned;
    int rows, cols;
    const policy_settings *policy; /* NULL: the server's */
    /* A writable workspace or write root at $HOME, / or above $HOME is
     * allowed (sb_request.allow_home_workspace). */
    bool allow_home_workspace;
} spawn_request;

/* The sandbox plan of r for session id; with tools, the session's channel
 * and corral's tools are made visible to it and an interactive shell gets
 * the shell hook.  NULL with err on failure; free with sb_plan_free. */
struct sb_plan *server_plan(server_t *srv, const spawn_request *r, int id, bool tools, char *err, size_t errlen);

/* The sandbox r asks for, as the gate keeps it (a copy). */
void server_sandbox_of(const spawn_request *r, gate_sandbox *out);

/* Compile the sandbox plan, spawn and store a session (pruning first if the
 * store is full).  NULL with err filled on failure; *warning receives what
 * the requester should be told (the sandbox's warnings, the 60-process
 * warning; one a line), or NULL. */
session_t *server_start_session(server_t *srv, const spawn_request *r, const char *client, char *err,
                                size_t errlen, char **warning);
void server_begin_shutdown(server_t *srv);
json_t *server_session_json(server_t *srv, session_t *s);
/* corral rm: an exited session leaves the store (its directory, with its
 * log and recording, stays under the state directory). */
void server_remove_session(server_t *srv, session_t *s);
/* Kill s's tree and answer request id on c once it has ended. */
void server_kill_and_wait(server_t *srv, conn_t *c, json_t *id, session_t *s);
/* Send ev to every subscribed client (stolen). */
void server_broadcast(server_t *srv, json_t *ev);
/* Someone could answer a request now: a screen (a subscribed client) is
 * attached, or [approvals] timeout will answer it. */
bool server_someone_can_answer(server_t *srv);

/* watch.c: clients that follow the session list and sessions' terminals */
/* The ls reply (sessions most recently used first), also subscribe's. */
json_t *watch_list_reply(server_t *srv, json_t *id);
void watch_subscribe(conn_t *c, json_t *id);
/* Follow s: a sync of its model, then its output as it comes. */
void watch_start(conn_t *c, json_t *id, session_t *s, int history);
void watch_stop(conn_t *c, json_t *id, int session);
void watch_session_output(session_t *s, const char *data, size_t len);
void watch_session_resized(session_t *s);
/* s changed in a way the list shows (state, title, use): a coalesced
 * session event to subscribers. */
void watch_session_changed(session_t *s);
void watch_session_bell(session_t *s);
/* s left the store: a session_removed event; watches of it end. */
void watch_session_removed(session_t *s);
/* s is being freed. */
void watch_session_freed(session_t *s);
void watch_conn_closed(conn_t *c);
void watch_conn_drained(conn_t *c);

/* dispatch.c */
void dispatch(conn_t *c, json_t *id, json_t *req);

/* waiter.c */
/* Wait on s for conn, answering request id with the unified-exec reply. */
void waiter_start(conn_t *c, json_t *id, session_t *s, uint32_t yield_ms, uint32_t settle_ms,
                  int64_t max_tokens, bool stream, bool raw);
/* Send ev (stolen) to whoever waits on s now, if anyone. */
void waiter_tell(session_t *s, json_t *ev);
/* A request about s waited ms for a human: its wait's deadline moves on. */
void waiter_extend(session_t *s, uint64_t ms);
/* The wait on s (just started) calls hook if it ends with the exit. */
void waiter_set_exit_hook(session_t *s, waiter_exit_hook hook, void *user);
void waiter_session_output(session_t *s, const char *data, size_t len);
void waiter_session_finished(session_t *s);
void waiter_conn_closed(conn_t *c);
/* Flow control: the connection's queue drained below the low mark. */
void waiter_conn_drained(conn_t *c);

#endif
