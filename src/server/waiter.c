/*
 * waiter.c - unified-exec waits: an exec_command or write_stdin request
 * that collects a session's output until its yield deadline, or until the
 * process has exited and its output is drained, whichever comes first
 * (as the Codex CLI's unified exec does), then answers with the envelope.
 * A streaming wait (corral exec --raw) forwards output as events instead and
 * answers when the process ends; it applies flow control to the session
 * when the client reads slowly.
 */
#include "config.h"

#include "server/server_int.h"
#include "protocol/uexec.h"

#include <stdlib.h>
#include <string.h>

#define STREAM_HIGH_WATER (8u << 20)

/* Every wait, whoever asked (conn_node links them): a closing connection's
 * end, a drained one's streams resume. */
static link_t waiters = {&waiters, &waiters};

/* Who may hold an exec's reply (waiter_hold_replies), or NULL. */
static waiter_hold_fn hold_reply;

void waiter_hold_replies(waiter_hold_fn hold)
{
    hold_reply = hold;
}

static void waiter_free_cb(uv_handle_t *h)
{
    waiter_t *w = h->data;
    json_decref(w->id);
    free(w);
}

/* Detach w from its session and connection and free it. */
static void waiter_dispose(waiter_t *w)
{
    session_t *s = w->s;
    server_session *x = srv_session(s);
    if (w->exit_hook) {
        waiter_exit_hook hook = w->exit_hook;
        w->exit_hook = NULL;
        hook(s, NULL, NULL, 0, w->exit_hook_user);
    }
    if (x->waiter == w)
        x->waiter = NULL;
    link_del(&w->conn_node);
    uv_timer_stop(&w->timer);
    if (w->stream)
        session_pause_reading(s, false);
    conn_t *c = w->conn;
    uv_close((uv_handle_t *)&w->timer, waiter_free_cb);
    conn_release(c);
    /* An entry pruned from the store while we waited is closed now. */
    if (!x->in_store && s->finished)
        session_close(s);
}

/* A reply held until the command's record is written (snap_hold.h). */
typedef struct held_reply {
    conn_t *conn;
    json_t *reply;
} held_reply;

static void send_held(void *user)
{
    held_reply *h = user;
    if (!conn_closing(h->conn))
        conn_send(h->conn, h->reply);
    else
        json_decref(h->reply);
    conn_release(h->conn);
    free(h);
}

static void send_reply(waiter_t *w, json_t *reply)
{
    session_t *s = w->s;
    if (s->finished && s->kind == SESSION_EXEC && hold_reply) {
        held_reply *h = xcalloc(1, sizeof *h);
        h->conn = conn_ref(w->conn);
        h->reply = reply;
        if (hold_reply(s, send_held, h))
            return;
        conn_release(h->conn);
        free(h);
    }
    conn_send(w->conn, reply);
}

static void waiter_complete(waiter_t *w)
{
    if (w->done)
        return;
    w->done = true;
    session_t *s = w->s;
    server_t *srv = conn_server(w->conn);
    size_t raw_len;
    char *raw = session_take_pending(s, &raw_len);
    size_t text_len;
    char *text = uexec_lossy_utf8(raw, raw_len, &text_len);
    free(raw);
    size_t out_len;
    char *out = w->raw ? xstrndup(text, text_len)
                       : uexec_format_output(text, text_len, (size_t)w->max_tokens, &out_len);
    if (w->raw)
        out_len = text_len;

    uexec_reply r = {0};
    uexec_chunk_id(r.chunk_id);
    double wall = now_sec() - w->start;
    r.wall_time = wall < 0 ? 0 : wall;
    r.exited = s->finished;
    r.exit_code = s->exit_code;
    r.session_id = s->id;
    r.original_token_count = uexec_approx_tokens(text_len);
    r.output = out;
    r.output_len = out_len;
    size_t env_len;
    char *envelope = uexec_envelope(&r, &env_len);

    json_t *reply = proto_ok(w->id);
    json_object_set_new(reply, "chunk_id", json_string(r.chunk_id));
    json_object_set_new(reply, "wall_time_seconds", json_real(r.wall_time));
    json_object_set_new(reply, "session", json_integer(s->id));
    if (r.exited) {
        json_object_set_new(reply, "exit_code", json_integer(s->exit_code));
        if (s->exit_signal)
            json_object_set_new(reply, "signal", json_integer(s->exit_signal));
    } else {
        json_object_set_new(reply, "session_id", json_integer(s->id));
    }
    json_object_set_new(reply, "original_token_count", json_integer((json_int_t)r.original_token_count));
    if (!w->stream) {
        json_object_set_new(reply, "output", json_stringn(out, out_len));
        json_object_set_new(reply, "text", json_stringn(envelope, env_len));
    }
    (void)srv;
    waiter_exit_hook hook = w->exit_hook;
    w->exit_hook = NULL;
    if (!(hook && hook(s, reply, text, text_len, w->exit_hook_user)))
        send_reply(w, reply);
    free(envelope);
    free(out);
    free(text);
    waiter_dispose(w);
}

static bool held_by_a_module(server_t *srv, session_t *s)
{
    EACH_MODULE(srv, m)
        if ((*m)->holds_wait && (*m)->holds_wait(srv, s))
            return true;
    return false;
}

static void on_timer(uv_timer_t *t)
{
    waiter_t *w = t->data;
    uint64_t now = now_ms();
    /* A request of the session waits for a human: the yield is extended
     * by the waiting time (docs/mcp.md); the answer re-arms it. */
    if (!w->s->finished && w->deadline && now >= w->deadline && held_by_a_module(conn_server(w->conn), w->s))
        return;
    if (w->s->finished || (w->deadline && now >= w->deadline)) {
        waiter_complete(w);
        return;
    }
    if (w->deadline)
        uv_timer_start(&w->timer, on_timer, w->deadline - now, 0);
}

void waiter_start(conn_t *c, json_t *id, session_t *s, uint32_t yield_ms, uint32_t settle_ms,
                  int64_t max_tokens, bool stream, bool raw)
{
    server_t *srv = conn_server(c);
    waiter_t *w = xcalloc(1, sizeof *w);
    w->conn = conn_ref(c);
    w->id = id ? json_incref(id) : NULL;
    w->s = s;
    w->max_tokens = max_tokens;
    w->stream = stream;
    w->raw = raw || stream;
    w->kill_on_disconnect = stream;
    uint64_t now = now_ms();
    w->not_before = now + settle_ms;
    w->deadline = stream ? 0 : w->not_before + yield_ms;
    w->start = now_sec() + settle_ms / 1000.0;
    link_add(&waiters, &w->conn_node);
    srv_session(s)->waiter = w;
    uv_timer_init(srv->loop, &w->timer);
    w->timer.data = w;
    if (stream) {
        /* What came before the client subscribed goes out first. */
        size_t len;
        char *early = session_take_pending(s, &len);
        if (len)
            waiter_session_output(s, early, len);
        free(early);
    }
    if (settle_ms)
        uv_timer_start(&w->timer, on_timer, settle_ms, 0);
    else if (s->finished)
        waiter_complete(w);
    else if (w->deadline)
        uv_timer_start(&w->timer, on_timer, yield_ms, 0);
}

void waiter_extend(session_t *s, uint64_t ms)
{
    waiter_t *w = srv_session(s)->waiter;
    if (!w || w->done || !w->deadline)
        return;
    w->deadline += ms;
    uint64_t now = now_ms();
    if (now >= w->not_before)
        uv_timer_start(&w->timer, on_timer, w->deadline > now ? w->deadline - now : 0, 0);
}

void waiter_tell(session_t *s, json_t *ev)
{
    waiter_t *w = srv_session(s)->waiter;
    if (w && !w->done && !conn_closing(w->conn))
        conn_send(w->conn, ev);
    else
        json_decref(ev);
}

void waiter_set_exit_hook(session_t *s, waiter_exit_hook hook, void *user)
{
    waiter_t *w = srv_session(s)->waiter;
    if (w && !w->done) {
        w->exit_hook = hook;
        w->exit_hook_user = user;
    }
}

void waiter_session_output(session_t *s, const char *data, size_t len)
{
    waiter_t *w = srv_session(s)->waiter;
    if (!w || !w->stream || w->done)
        return;
    /* Streamed output is not also kept for a later poll. */
    size_t dropped_len;
    free(session_take_pending(s, &dropped_len));
    conn_send(w->conn, proto_data_event("output", s->id, data, len));
    if (conn_queued(w->conn) > STREAM_HIGH_WATER)
        session_pause_reading(s, true);
}

static void waiter_session_finished(server_t *srv, session_t *s)
{
    (void)srv;
    waiter_t *w = srv_session(s)->waiter;
    if (!w || w->done)
        return;
    if (now_ms() >= w->not_before)
        waiter_complete(w); /* else the settle timer completes it */
}

static void waiter_conn_closed(conn_t *c)
{
    /* Disposing of a wait may dispose of no other, but a killed session's
     * hooks run later: the search starts again after each. */
    for (;;) {
        waiter_t *mine = NULL;
        for (link_t *l = waiters.next; l != &waiters && !mine; l = l->next) {
            waiter_t *w = link_entry(l, waiter_t, conn_node);
            if (w->conn == c)
                mine = w;
        }
        if (!mine)
            return;
        mine->done = true;
        if (mine->kill_on_disconnect)
            session_kill(mine->s, "client disconnected");
        waiter_dispose(mine);
    }
}

static void waiter_conn_drained(conn_t *c)
{
    for (link_t *l = waiters.next; l != &waiters; l = l->next) {
        waiter_t *w = link_entry(l, waiter_t, conn_node);
        if (w->conn == c && w->stream)
            session_pause_reading(w->s, false);
    }
}

const server_module waiter_module = {
    .name = "waiter",
    .session_finished = waiter_session_finished,
    .conns = {.closed = waiter_conn_closed, .drained = waiter_conn_drained},
};
