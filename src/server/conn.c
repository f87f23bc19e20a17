/*
 * conn.c - see conn.h.  A connection is freed with its last reference: the
 * open connection holds one, each write in flight one, and each module
 * that will still answer on it (a wait, a held reply, a request in the
 * gate) one.
 */
#include "config.h"

#include "server/conn.h"
#include "base/attach.h"
#include "base/list.h"
#include "protocol/proto.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

#define CONN_READ_MAX (64u * 1024u)
#define DRAINED_BELOW (1u << 20)
#define OBSERVERS_MAX 16

struct conn {
    link_t node; /* in conns while open */
    struct server *srv;
    uv_pipe_t pipe;
    proto_reader rd;
    conn_message_fn on_message;
    bool closing;
    bool subscribed;
    char *client; /* name given in hello */
    pid_t peer_pid;
    int refs;
    attach_slots attached; /* conn_attach */
};

static link_t conns = {&conns, &conns};
static const conn_observer *observers[OBSERVERS_MAX];
static size_t n_observers;

void conn_observe(const conn_observer *o)
{
    if (n_observers == OBSERVERS_MAX) {
        fprintf(stderr, "corral: more than %d connection observers\n", OBSERVERS_MAX);
        abort(); /* a programming error, found by any test */
    }
    observers[n_observers++] = o;
}

void conn_observers_clear(void)
{
    n_observers = 0;
}

conn_t *conn_ref(conn_t *c)
{
    c->refs++;
    return c;
}

void conn_release(conn_t *c)
{
    if (--c->refs > 0)
        return;
    attach_free_all(&c->attached);
    proto_reader_free(&c->rd);
    free(c->client);
    free(c);
}

typedef struct write_req {
    uv_write_t req;
    char *data;
} write_req;

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    conn_t *c = req->data;
    free(w->data);
    free(w);
    (void)status;
    if (!c->closing && conn_queued(c) < DRAINED_BELOW) {
        for (size_t i = 0; i < n_observers; i++)
            if (observers[i]->drained)
                observers[i]->drained(c);
    }
    conn_release(c);
}

void conn_send_line(conn_t *c, char *line, size_t len)
{
    if (c->closing) {
        free(line);
        return;
    }
    write_req *w = xmalloc(sizeof *w);
    w->data = line;
    w->req.data = c;
    uv_buf_t b = uv_buf_init(line, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_write) < 0) {
        free(line);
        free(w);
        return;
    }
    conn_ref(c);
}

void conn_send(conn_t *c, json_t *msg)
{
    size_t len;
    char *line = proto_dump(msg, &len);
    conn_send_line(c, line, len);
}

void conn_reply_error(conn_t *c, json_t *id, const char *code, const char *message)
{
    conn_send(c, proto_error(id, code, message));
}

size_t conn_queued(const conn_t *c)
{
    return uv_stream_get_write_queue_size((const uv_stream_t *)&c->pipe);
}

static void on_closed(uv_handle_t *h)
{
    conn_release(h->data);
}

void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (!link_empty(&c->node))
        link_del(&c->node);
    for (size_t i = 0; i < n_observers; i++)
        if (observers[i]->closed)
            observers[i]->closed(c);
    uv_close((uv_handle_t *)&c->pipe, on_closed);
}

void conn_close_all(void)
{
    while (!link_empty(&conns))
        conn_close(link_entry(conns.next, conn_t, node));
}

bool conn_closing(const conn_t *c)
{
    return c->closing;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static char rbuf[CONN_READ_MAX];
    *buf = uv_buf_init(rbuf, sizeof rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    conn_t *c = st->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    if (n == 0)
        return;
    proto_reader_feed(&c->rd, buf->base, (size_t)n);
    const char *line;
    size_t len;
    int r;
    conn_ref(c); /* a handler may close the connection */
    while (!c->closing && (r = proto_reader_next(&c->rd, &line, &len)) != 0) {
        if (r < 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "message longer than %u bytes; it was discarded", PROTO_MAX_MSG);
            conn_reply_error(c, NULL, PERR_TOO_LARGE, msg);
            continue;
        }
        if (len == 0)
            continue; /* blank lines are keep-alives */
        c->on_message(c, line, len);
    }
    conn_release(c);
}

conn_t *conn_new(struct server *srv, uv_loop_t *loop, conn_message_fn on_message)
{
    conn_t *c = xcalloc(1, sizeof *c);
    c->srv = srv;
    c->refs = 1;
    c->on_message = on_message;
    link_init(&c->node);
    proto_reader_init(&c->rd, PROTO_MAX_MSG);
    uv_pipe_init(loop, &c->pipe, 0);
    c->pipe.data = c;
    link_add(&conns, &c->node);
    return c;
}

uv_stream_t *conn_stream(conn_t *c)
{
    return (uv_stream_t *)&c->pipe;
}

void conn_start(conn_t *c)
{
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}

struct server *conn_server(const conn_t *c)
{
    return c->srv;
}

const char *conn_client(const conn_t *c)
{
    return c->client;
}

void conn_set_client(conn_t *c, const char *name)
{
    free(c->client);
    c->client = xstrdup(name);
}

pid_t conn_peer_pid(const conn_t *c)
{
    return c->peer_pid;
}

void conn_set_peer_pid(conn_t *c, pid_t pid)
{
    c->peer_pid = pid;
}

void conn_attach(conn_t *c, const void *key, void *data, void (*free_fn)(void *data))
{
    attach_put(&c->attached, "a connection", key, data, free_fn);
}

void *conn_attached(const conn_t *c, const void *key)
{
    return attach_get(&c->attached, key);
}

void conn_set_subscribed(conn_t *c, bool on)
{
    c->subscribed = on;
}

bool conn_subscribed(const conn_t *c)
{
    return c->subscribed;
}

void conn_broadcast(json_t *ev)
{
    for (link_t *l = conns.next; l != &conns; l = l->next) {
        conn_t *c = link_entry(l, conn_t, node);
        if (c->subscribed && !c->closing)
            conn_send(c, json_incref(ev));
    }
    json_decref(ev);
}

bool conn_any_subscribed(void)
{
    for (link_t *l = conns.next; l != &conns; l = l->next) {
        conn_t *c = link_entry(l, conn_t, node);
        if (c->subscribed && !c->closing)
            return true;
    }
    return false;
}
