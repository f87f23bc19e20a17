/*
 * uiconn.c - see uiconn.h.
 */
#include "config.h"

#include "uiconn.h"
#include "protocol/client.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct write_req {
    uv_write_t req;
    char *data;
} write_req;

static void on_write(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows as a read error */
    write_req *w = (write_req *)req;
    free(w->data);
    free(w);
}

static void fail_pending(uiconn_t *c)
{
    while (c->pending) {
        uiconn_pending *p = c->pending;
        c->pending = p->next;
        if (p->fn)
            p->fn(c, NULL, p->user);
        free(p);
    }
}

static void shut(uiconn_t *c, const char *why)
{
    if (c->closed)
        return;
    c->closed = true;
    uv_read_stop((uv_stream_t *)&c->pipe);
    fail_pending(c);
    if (c->on_closed)
        c->on_closed(c, why, c->user);
}

static void dispatch_message(uiconn_t *c, json_t *m)
{
    /* An event first: whatever fields it has, it is never a reply. */
    if (json_object_get(m, "event")) {
        if (c->on_event)
            c->on_event(c, m, c->user);
        return;
    }
    json_t *id = json_object_get(m, "id");
    if (json_is_integer(id)) {
        long want = (long)json_integer_value(id);
        for (uiconn_pending **pp = &c->pending; *pp; pp = &(*pp)->next) {
            if ((*pp)->id != want)
                continue;
            uiconn_pending *p = *pp;
            *pp = p->next;
            if (p->fn)
                p->fn(c, m, p->user);
            free(p);
            return;
        }
        return; /* a reply nobody waits for */
    }
}

/* {"event":"term","session":N,"data_b64":"..."} exactly as the server
 * writes it: decoded without building JSON.  Anything else (another key
 * order, an escape) goes the ordinary way. */
static bool fast_term(uiconn_t *c, const char *line, size_t len)
{
    static const char head[] = "{\"event\":\"term\",\"session\":";
    static const char mid[] = ",\"data_b64\":\"";
    size_t hl = sizeof head - 1, ml = sizeof mid - 1;
    if (!c->on_term || len < hl + ml + 3 || memcmp(line, head, hl) != 0)
        return false;
    size_t i = hl;
    long session = 0;
    while (i < len && line[i] >= '0' && line[i] <= '9' && session < 100000000)
        session = session * 10 + (line[i++] - '0');
    if (i == hl || len - i < ml + 2 || memcmp(line + i, mid, ml) != 0)
        return false;
    i += ml;
    if (memcmp(line + len - 2, "\"}", 2) != 0)
        return false;
    size_t out;
    char *data = base64_decode(line + i, len - 2 - i, &out);
    if (!data)
        return false;
    c->on_term(c, (int)session, data, out, c->user);
    free(data);
    return true;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static char rbuf[256 * 1024];
    *buf = uv_buf_init(rbuf, sizeof rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    uiconn_t *c = st->data;
    if (n < 0) {
        shut(c, n == UV_EOF ? "the server closed the connection" : uv_strerror((int)n));
        return;
    }
    proto_reader_feed(&c->rd, buf->base, (size_t)n);
    const char *line;
    size_t len;
    int r;
    while (!c->closed && (r = proto_reader_next(&c->rd, &line, &len)) != 0) {
        if (r < 0 || len == 0)
            continue;
        if (fast_term(c, line, len))
            continue;
        json_error_t je;
        json_t *m = json_loadb(line, len, 0, &je);
        if (!json_is_object(m)) {
            json_decref(m);
            continue;
        }
        dispatch_message(c, m);
        json_decref(m);
    }
}

/* Take fd over (and what was read of it already) and start reading. */
static int attach_fd(uiconn_t *c, uv_loop_t *loop, int fd, const char *left, size_t nleft, char *err,
                     size_t errlen)
{
    proto_reader_init(&c->rd, PROTO_MAX_MSG);
    if (nleft)
        proto_reader_feed(&c->rd, left, nleft);
    uv_pipe_init(loop, &c->pipe, 0);
    c->pipe.data = c;
    if (uv_pipe_open(&c->pipe, fd) < 0) {
        snprintf(err, errlen, "cannot use the server connection");
        close(fd);
        proto_reader_free(&c->rd);
        c->closed = true;
        uv_close((uv_handle_t *)&c->pipe, NULL);
        return -1;
    }
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
    return 0;
}

int uiconn_open(uiconn_t *c, uv_loop_t *loop, uiconn_event_fn on_event, uiconn_term_fn on_term,
                uiconn_closed_fn on_closed, void *user, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    client_t cl;
    if (client_connect(&cl, "user", true, err, errlen) < 0)
        return -1;
    c->server_pid = (int)json_integer_value(json_object_get(cl.hello, "pid"));
    c->next_id = cl.next_id + 1000;
    c->on_event = on_event;
    c->on_term = on_term;
    c->on_closed = on_closed;
    c->user = user;
    /* Anything already read behind the hello reply stays ours. */
    size_t left = proto_reader_pending(&cl.rd);
    int fd = cl.fd;
    cl.fd = -1;
    int rc = attach_fd(c, loop, fd, cl.rd.buf.data + cl.rd.start, left, err, errlen);
    client_close(&cl);
    return rc;
}

int uiconn_open_fd(uiconn_t *c, uv_loop_t *loop, int fd, uiconn_event_fn on_event, uiconn_term_fn on_term,
                   uiconn_closed_fn on_closed, void *user, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->next_id = 1;
    c->on_event = on_event;
    c->on_term = on_term;
    c->on_closed = on_closed;
    c->user = user;
    return attach_fd(c, loop, fd, NULL, 0, err, errlen);
}

void uiconn_request(uiconn_t *c, json_t *req, uiconn_reply_fn fn, void *user)
{
    if (c->closed) {
        json_decref(req);
        if (fn)
            fn(c, NULL, user);
        return;
    }
    long id = c->next_id++;
    json_object_set_new(req, "id", json_integer(id));
    if (fn) {
        uiconn_pending *p = xcalloc(1, sizeof *p);
        p->id = id;
        p->fn = fn;
        p->user = user;
        p->next = c->pending;
        c->pending = p;
    }
    size_t len;
    char *line = proto_dump(req, &len);
    write_req *w = xmalloc(sizeof *w);
    w->data = line;
    uv_buf_t b = uv_buf_init(line, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_write) < 0) {
        free(line);
        free(w);
        shut(c, "cannot write to the server");
    }
}

static void free_on_close(uv_handle_t *h)
{
    free(h->data);
}

void uiconn_destroy(uiconn_t *c)
{
    shut(c, NULL);
    proto_reader_free(&c->rd);
    c->pipe.data = c;
    if (!uv_is_closing((uv_handle_t *)&c->pipe))
        uv_close((uv_handle_t *)&c->pipe, free_on_close);
}

void uiconn_close(uiconn_t *c)
{
    shut(c, NULL);
    proto_reader_free(&c->rd);
    if (!uv_is_closing((uv_handle_t *)&c->pipe))
        uv_close((uv_handle_t *)&c->pipe, NULL);
}
