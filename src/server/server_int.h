/*
 * server_int.h - the server's state (struct server) and a session as the
 * server keeps it (server_session), with the calls on them that only the
 * core makes (server_sessions.c, server.c, dispatch.c, waits and
 * watches).  The modules see both only through server.h.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_SERVER_INT_H
#define CORRAL_SERVER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "config/conf.h"
#include "config/sbconf.h"
#include "record/eventlog.h"
#include "base/attach.h"
#include "base/list.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/module.h"
#include "server/prebuilt.h"
#include "server/server.h"
#include "policy/policy.h"
#include "protocol/proto.h"
#include "policy/rules.h"
#include "server/session.h"
#include "server/store.h"
#include "server/waiter.h"
#include "server/watch.h"

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
    /* What it was launched with (server.h): its workspace, its own
     * sandbox, its approval policy. */
    char *workspace;         /* canonical */
    launch_sandbox sandbox;
    policy_settings policy;
    const char *net_mode; /* its sandbox's network: "off", "proxy", "full" (static) */
    bool shell_hook;      /* an interactive bash or zsh with the shell hook: its lines are its commands */
    attach_slots attached; /* what modules keep on it (server_session_attach) */
    prebuilt *prebuilt;   /* the pre-built sandbox it started from, until it ends */
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
    uv_timer_t frame_timer;  /* ends the periods of watches that hold output (watch.c) */
    policy_settings policy; /* the configured approval policy (server_policy) */
    struct proxy *proxy;   /* the network proxy (made by the network gate), or NULL */
    attach_slots attached; /* what modules keep on the server (server_attach) */
    char *exe;             /* corral's executable, for sessions' tools */
    char *hook_dir;        /* the shell hooks, written at start (NULL: none) */
    store_t store;
    link_t sessions; /* session_extra.node */
    prebuilt_pool prebuilts; /* agents' one-shot commands start from these */
    /* The modules the server runs, in the order their hooks are called
     * (module.h), ended by NULL. */
    const server_module *const *modules;
    conf_t conf;
    /* server_conf.c: the config file read, its text as applied, the
     * errors of the last reload that was refused, the sections a reload
     * could not change (a restart will). */
    char *conf_path, *conf_text, *conf_refused, *conf_later;
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

/* server.c */
/* Shutting down: finish once every session has ended. */
void server_maybe_finish_shutdown(server_t *srv);
/* Mark s used (most recently); the quiet form sends no session event. */
void server_touch(server_t *srv, session_t *s);
void server_touch_quiet(server_t *srv, session_t *s);

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
