/*
 * watch.c - clients that follow the server live (the TUI).
 *
 * A subscribed connection hears about the session list: a "session" event
 * whenever something the list shows changes (coalesced over NOTIFY_MS, so a
 * program retitling itself every frame costs one event per tick), a
 * "session_removed" when one leaves the store, and "bell".
 *
 * A watch follows one session's terminal.  It starts with a "sync" event
 * (make a fresh model of this size) followed by "term" events carrying
 * vt_sync_bytes, which recreate the server's model in the client's, and
 * then every byte the server's model takes, in order, with "resized" events
 * where the size changes.  The client's model therefore stays identical to
 * the server's.
 *
 * A watch over a slow link (another machine's screen, through ssh) asks
 * for frames: output is passed on at once while it is light (an echo
 * costs no wait), but what comes within frame_ms of a period that already
 * carried FRAME_BUDGET bytes (or the last frame's size, when more) is
 * held, and the period ends with either the held bytes, when they are
 * few, or a frame: a "sync" marked "frame" that recreates the model as it
 * is now, with the history lines that scrolled off since the last send
 * (up to a screenful).  A stream of output then costs a screen per
 * period, not its every byte (tmux sends only what it redraws, too); the
 * client keeps the history it had, so what it lacks is only lines that
 * scrolled past between two frames (the server has them: a fresh watch
 * brings them).
 *
 * A client that does not keep up never slows a session down and never
 * makes the server buffer without bound: while the connection has more
 * than WATCH_HIGH_WATER bytes queued, output for its watches is dropped and
 * the watch is marked stale; once the queue drains, a fresh sync replaces
 * everything that was dropped.  A slow client sees fewer frames, never a
 * wrong screen.
 */
#include "config.h"

#include "server/server_int.h"
#include "server/server_conf.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define WATCH_HIGH_WATER (4u << 20)
#define TERM_CHUNK (192u << 10) /* raw bytes per term event: well under the 1 MiB message cap */
#define NOTIFY_MS 30
#define FRAME_BUDGET (8u << 10) /* raw bytes a framed watch passes on per period */
#define BELL_MIN_MS 1000 /* at most one bell event a second per session */

typedef struct watch {
    link_t conn_node; /* in watches */
    link_t sess_node; /* in server_session->watchers */
    conn_t *conn;
    session_t *s;
    int history; /* lines of history to send on a sync */
    bool stale;  /* output was dropped: sync again when the connection drains */
    /* The size this client last asked for the session (resize), and when
     * (asked_seq order; 0: never). */
    int rows, cols;
    uint64_t asked;
    /* Frames (frame_ms > 0): the period that started at period_at has
     * carried period_bytes; while holding, output waits for its end, in
     * held (at most the budget) or, past that, as frame_due. */
    int frame_ms;
    uint64_t period_at;
    size_t period_bytes;
    size_t frame_cost; /* bytes of the last frame: a period may pass on as much raw */
    bool holding, frame_due;
    buf_t held;
    unsigned pushes_sent; /* the model's history pushes when the client's copy was last level */
} watch_t;

static uint64_t asked_seq;

/* Every watch, of every connection: a closing connection's end, a drained
 * one's stale ones are synced again. */
static link_t watches = {&watches, &watches};

static size_t queued(conn_t *c)
{
    return conn_queued(c);
}

/* term events are most of what a watching client gets: encoded here
 * directly (base64 needs no JSON escaping), in the key order clients may
 * rely on for a fast path: {"event":"term","session":N,"data_b64":"..."}. */
static void send_term(conn_t *c, session_t *s, const char *data, size_t len)
{
    for (size_t off = 0; off < len; off += TERM_CHUNK) {
        size_t n = len - off < TERM_CHUNK ? len - off : TERM_CHUNK;
        size_t b64_len;
        char *b64 = base64_encode(data + off, n, &b64_len);
        char head[64];
        int hl = snprintf(head, sizeof head, "{\"event\":\"term\",\"session\":%d,\"data_b64\":\"", s->id);
        char *line = xmalloc((size_t)hl + b64_len + 3);
        memcpy(line, head, (size_t)hl);
        memcpy(line + hl, b64, b64_len);
        memcpy(line + hl + b64_len, "\"}\n", 3);
        free(b64);
        conn_send_line(c, line, (size_t)hl + b64_len + 3);
    }
}

/* A fresh copy of the model: history lines of it (a frame: the client
 * keeps the history it has and gets the lines that scrolled since). */
static void send_sync(watch_t *w, int history, bool frame)
{
    session_t *s = w->s;
    json_t *ev = json_pack("{s:s, s:i, s:i, s:i}", "event", "sync", "session", s->id, "rows", vt_rows(s->vt),
                           "cols", vt_cols(s->vt));
    if (frame)
        json_object_set_new(ev, "frame", json_true());
    conn_send(w->conn, ev);
    size_t len;
    char *bytes = vt_sync_bytes(s->vt, history, &len);
    send_term(w->conn, s, bytes, len);
    free(bytes);
    if (frame) /* a first sync's whole history is no frame's cost */
        w->frame_cost = len;
    w->pushes_sent = vt_history_pushes(s->vt);
}

static void sync_watch(watch_t *w)
{
    w->stale = false;
    w->holding = w->frame_due = false;
    w->frame_cost = 0;
    buf_reset(&w->held);
    send_sync(w, w->history, false);
}

static size_t frame_budget(const watch_t *w)
{
    return w->frame_cost > FRAME_BUDGET ? w->frame_cost : FRAME_BUDGET;
}

/* The end of a period that held output: the held bytes, or a frame. */
static void end_period(watch_t *w, uint64_t now)
{
    session_t *s = w->s;
    w->period_at = now;
    if (w->frame_due) {
        unsigned scrolled = vt_history_pushes(s->vt) - w->pushes_sent;
        int history = vt_rows(s->vt);
        if (scrolled < (unsigned)history)
            history = (int)scrolled;
        if (history > w->history)
            history = w->history;
        send_sync(w, history, true);
        w->period_bytes = w->frame_cost;
        /* Output goes on: the next period holds from its start. */
        w->frame_due = false;
        buf_reset(&w->held);
        return;
    }
    w->holding = false;
    w->period_bytes = w->held.len;
    if (w->held.len)
        send_term(w->conn, s, w->held.data, w->held.len);
    buf_reset(&w->held);
    w->pushes_sent = vt_history_pushes(s->vt);
}

static void arm_frame_timer(server_t *srv);

static void on_frame_timer(uv_timer_t *t)
{
    server_t *srv = t->data;
    uint64_t now = uv_now(srv->loop);
    for (link_t *l = watches.next; l != &watches; l = l->next) {
        watch_t *w = link_entry(l, watch_t, conn_node);
        if (!w->holding || now < w->period_at + (uint64_t)w->frame_ms)
            continue;
        if (w->stale || conn_closing(w->conn)) {
            w->holding = w->frame_due = false; /* the sync on drain brings it level */
            buf_reset(&w->held);
        } else if (!w->frame_due && w->held.len == 0) {
            w->holding = false; /* a period without output: back to passing it on at once */
        } else {
            end_period(w, now);
        }
    }
    arm_frame_timer(srv);
}

/* The timer runs while a watch holds output, for the earliest period end. */
static void arm_frame_timer(server_t *srv)
{
    uint64_t now = uv_now(srv->loop), next = UINT64_MAX;
    for (link_t *l = watches.next; l != &watches; l = l->next) {
        watch_t *w = link_entry(l, watch_t, conn_node);
        if (w->holding && w->period_at + (uint64_t)w->frame_ms < next)
            next = w->period_at + (uint64_t)w->frame_ms;
    }
    if (uv_is_closing((uv_handle_t *)&srv->frame_timer))
        return;
    if (next == UINT64_MAX) {
        uv_timer_stop(&srv->frame_timer);
        return;
    }
    uv_timer_start(&srv->frame_timer, on_frame_timer, next > now ? next - now : 0, 0);
}

/* Output for a framed watch: on at once while the period's budget lasts,
 * else held for the period's end. */
static void framed_output(watch_t *w, const char *data, size_t len)
{
    server_t *srv = srv_session(w->s)->srv;
    uint64_t now = uv_now(srv->loop);
    if (!w->holding) {
        if (now >= w->period_at + (uint64_t)w->frame_ms) {
            w->period_at = now;
            w->period_bytes = 0;
        }
        if (w->period_bytes + len <= frame_budget(w)) {
            w->period_bytes += len;
            send_term(w->conn, w->s, data, len);
            w->pushes_sent = vt_history_pushes(w->s->vt);
            return;
        }
        w->holding = true;
        arm_frame_timer(srv);
    }
    if (w->frame_due)
        return;
    if (w->held.len + len > frame_budget(w)) {
        w->frame_due = true; /* a frame will cost less than these bytes */
        buf_reset(&w->held);
        return;
    }
    buf_append(&w->held, data, len);
}

static watch_t *find_watch(conn_t *c, int session)
{
    for (link_t *l = watches.next; l != &watches; l = l->next) {
        watch_t *w = link_entry(l, watch_t, conn_node);
        if (w->conn == c && w->s->id == session)
            return w;
    }
    return NULL;
}

/* The size of a terminal is the one its latest asker asked for (as tmux's
 * window-size latest).  When that client stops watching it (it detached,
 * or no longer shows it), the terminal gets back the size asked by the
 * watcher that asked latest before it, instead of keeping a size nobody
 * shows. */
static void give_back_size(session_t *s, uint64_t gone)
{
    watch_t *latest = NULL;
    link_t *head = &srv_session(s)->watchers;
    for (link_t *l = head->next; l != head; l = l->next) {
        watch_t *v = link_entry(l, watch_t, sess_node);
        if (v->asked > gone)
            return; /* a later asker's size stands */
        if (v->asked && (!latest || v->asked > latest->asked))
            latest = v;
    }
    if (!latest || s->state != SESSION_RUNNING || (latest->rows == s->rows && latest->cols == s->cols))
        return;
    if (session_resize(s, latest->rows, latest->cols) == 0)
        watch_session_resized(s);
}

/* give_back: the session lives on (not for a session being removed). */
static void drop_watch(watch_t *w, bool give_back)
{
    link_del(&w->conn_node);
    link_del(&w->sess_node);
    if (give_back && w->asked)
        give_back_size(w->s, w->asked);
    buf_free(&w->held);
    free(w);
}

void watch_size_asked(conn_t *c, session_t *s, int rows, int cols)
{
    watch_t *w = find_watch(c, s->id);
    if (!w)
        return;
    w->rows = rows;
    w->cols = cols;
    w->asked = ++asked_seq;
}

json_t *watch_list_reply(server_t *srv, json_t *id)
{
    size_t n = store_len(&srv->store);
    session_t **sorted = xcalloc(n ? n : 1, sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = srv->store.entries[i].item;
    /* Most recently used first (insertion sort: at most 64 entries). */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && sorted[j]->last_used > sorted[j - 1]->last_used; j--) {
            session_t *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    json_t *list = json_array();
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(list, server_session_json(srv, sorted[i]));
        live += sorted[i]->state == SESSION_RUNNING;
    }
    free(sorted);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "sessions", list);
    json_object_set_new(r, "live", json_integer((json_int_t)live));
    json_object_set_new(r, "stored", json_integer((json_int_t)n));
    json_object_set_new(r, "max", json_integer(STORE_MAX));
    return r;
}

void watch_subscribe(conn_t *c, json_t *id)
{
    server_t *srv = conn_server(c);
    conn_set_subscribed(c, true);
    json_t *r = watch_list_reply(srv, id);
    /* What the modules say a screen must see now (the approvals waiting,
     * say); later changes come as events. */
    TELL_MODULES(srv, subscribed, r);
    json_object_set_new(r, "config", server_conf_status(srv));
    conn_send(c, r);
}

void watch_start(conn_t *c, json_t *id, session_t *s, int history, int frame_ms)
{
    watch_t *w = find_watch(c, s->id);
    if (!w) {
        w = xcalloc(1, sizeof *w);
        w->conn = c;
        w->s = s;
        buf_init(&w->held);
        link_add(&watches, &w->conn_node);
        link_add(&srv_session(s)->watchers, &w->sess_node);
    }
    w->history = history;
    w->frame_ms = frame_ms;
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", json_integer(s->id));
    conn_send(c, r);
    /* A repeated watch is a request for a fresh copy. */
    sync_watch(w);
}

void watch_stop(conn_t *c, json_t *id, int session)
{
    watch_t *w = find_watch(c, session);
    if (w)
        drop_watch(w, true);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", json_integer(session));
    conn_send(c, r);
}

void watch_session_output(session_t *s, const char *data, size_t len)
{
    link_t *head = &srv_session(s)->watchers;
    for (link_t *l = head->next; l != head; l = l->next) {
        watch_t *w = link_entry(l, watch_t, sess_node);
        if (w->stale || conn_closing(w->conn))
            continue;
        if (queued(w->conn) > WATCH_HIGH_WATER) {
            w->stale = true; /* the sync on drain replaces what is dropped */
            continue;
        }
        if (w->frame_ms)
            framed_output(w, data, len);
        else
            send_term(w->conn, s, data, len);
    }
}

void watch_session_resized(session_t *s)
{
    link_t *head = &srv_session(s)->watchers;
    for (link_t *l = head->next; l != head; l = l->next) {
        watch_t *w = link_entry(l, watch_t, sess_node);
        if (w->stale || conn_closing(w->conn))
            continue;
        /* Held bytes were written at the old size: they go first.  A
         * frame due is made at the new size: after the event. */
        if (w->holding && !w->frame_due && w->held.len)
            end_period(w, uv_now(srv_session(s)->srv->loop));
        conn_send(w->conn, json_pack("{s:s, s:i, s:i, s:i}", "event", "resized", "session", s->id, "rows",
                                     s->rows, "cols", s->cols));
        if (w->holding && w->frame_due)
            end_period(w, uv_now(srv_session(s)->srv->loop));
    }
    watch_session_changed(s);
}

static void on_notify_timer(uv_timer_t *t)
{
    server_t *srv = t->data;
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        server_session *x = link_entry(l, server_session, node);
        if (!x->notify_pending)
            continue;
        x->notify_pending = false;
        if (x->in_store)
            conn_broadcast(json_pack("{s:s, s:o}", "event", "session", "session", server_session_json(srv, &x->base)));
    }
}

void watch_session_changed(session_t *s)
{
    server_t *srv = srv_session(s)->srv;
    srv_session(s)->notify_pending = true;
    if (!uv_is_active((uv_handle_t *)&srv->notify_timer) && !uv_is_closing((uv_handle_t *)&srv->notify_timer))
        uv_timer_start(&srv->notify_timer, on_notify_timer, NOTIFY_MS, 0);
}

void watch_session_bell(session_t *s)
{
    server_session *x = srv_session(s);
    uint64_t now = uv_now(x->srv->loop);
    if (x->last_bell_ms && now - x->last_bell_ms < BELL_MIN_MS)
        return;
    x->last_bell_ms = now;
    conn_broadcast(json_pack("{s:s, s:i}", "event", "bell", "session", s->id));
}

static void end_watches(session_t *s)
{
    link_t *head = &srv_session(s)->watchers;
    while (!link_empty(head))
        drop_watch(link_entry(head->next, watch_t, sess_node), false);
}

void watch_session_removed(session_t *s)
{
    server_session *x = srv_session(s);
    x->notify_pending = false;
    end_watches(s);
    conn_broadcast(json_pack("{s:s, s:i}", "event", "session_removed", "session", s->id));
}

static void watch_conn_closed(conn_t *c)
{
    /* Every watch of c goes first; sizes are given back after, so that
     * the events they send (which may close another connection, and end
     * its watches) never run inside this walk of the list. */
    typedef struct {
        session_t *s;
        uint64_t asked;
    } given;
    given *back = NULL;
    size_t n = 0;
    for (link_t *l = watches.next; l != &watches;) {
        watch_t *w = link_entry(l, watch_t, conn_node);
        l = l->next;
        if (w->conn != c)
            continue;
        if (w->asked) {
            back = xrealloc(back, (n + 1) * sizeof *back);
            back[n++] = (given){w->s, w->asked};
        }
        drop_watch(w, false);
    }
    for (size_t i = 0; i < n; i++)
        give_back_size(back[i].s, back[i].asked);
    free(back);
    conn_set_subscribed(c, false);
}

static void watch_conn_drained(conn_t *c)
{
    for (link_t *l = watches.next; l != &watches; l = l->next) {
        watch_t *w = link_entry(l, watch_t, conn_node);
        if (w->conn == c && w->stale)
            sync_watch(w);
    }
}

static void on_session_finished(server_t *srv, session_t *s)
{
    (void)srv;
    watch_session_changed(s);
}

static void on_session_freed(server_t *srv, session_t *s)
{
    (void)srv;
    end_watches(s);
}

const server_module watch_module = {
    .name = "watch",
    .session_finished = on_session_finished,
    .session_freed = on_session_freed,
    .conns = {.closed = watch_conn_closed, .drained = watch_conn_drained},
};
