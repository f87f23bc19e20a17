/*
 * proxy.c - see proxy.h.  One client connection's life:
 *
 *   HEAD       read the request head (HTTP) or SOCKS5 messages, with a size
 *              cap and the header timeout
 *   DECIDING   the decide hook has (host, protocol, port); nothing is
 *              resolved yet, so a name nobody approved never reaches DNS
 *   RESOLVING  uv_getaddrinfo on the thread pool (an IP literal skips it);
 *              every address is checked (netaddr.c, and this machine's own
 *              addresses) unless the verdict is PROXY_ALLOW_EXPLICIT
 *   CONNECTING the checked addresses in order, never a second lookup
 *   RELAY      a tunnel (CONNECT, SOCKS5: bytes both ways, untouched; moved
 *              by the kernel with splice(2) in proxy_pump.c, or through
 *              libuv's reads and writes) or absolute-form HTTP exchanges
 *              (proxy_forward.c)
 *   DRAINING   a refusal (or the last response) was written: the client's
 *              bytes are read and dropped until it closes, so that closing
 *              never resets a connection before it read the answer
 *
 * Backpressure: a side stops being read while the other side's write queue
 * holds more than max_buffered bytes, and starts again when it fell to
 * half.  A connection is freed only when all of its handles have closed
 * and its lookup has come back, never inside a callback that still uses
 * it.
 */
#include "config.h"

#include "net/proxy.h"

#include "base/netaddr.h"
#include "net/proxy_http.h"
#include "net/proxy_int.h"
#include "net/proxy_pump.h"
#include "net/proxy_socks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One read's buffer in a tunnel, kept in a small pool so that busy tunnels
 * do not go through malloc for each read and idle ones hold none. */
#define BLOCK_SIZE (256 * 1024)
#define POOL_MAX 64
/* Connections over the limit that are still answered (503, SOCKS 0x01);
 * beyond these they are closed as soon as accepted. */
#define OVER_LIMIT_ANSWERED 16
/* Greeting (2 + 255) and request (4 + 1 + 255 + 2), with room to spare. */
#define SOCKS_HEAD_MAX 600
/* How often this machine's own addresses are listed again. */
#define OWN_ADDRS_TTL_MS 1000

typedef struct listener {
    proxy_t *px;
    struct listener *prev, *next;
    int session;
    unsigned owner;
    proxy_listener_kind kind;
    uv_tcp_t h;
} listener;

typedef struct session_count {
    int session;
    size_t open, over;
} session_count;

struct proxy {
    uv_loop_t *loop;
    proxy_hooks hooks;
    void *user;
    proxy_limits lim;
    listener *listeners;
    pconn *conns;
    session_count *counts;
    size_t ncounts, capcounts;
    char *pool[POOL_MAX];
    size_t npool;
    size_t live; /* listeners and connections not freed yet */
    bool shut, free_requested;
    pump_pool *pipes;
    uv_interface_address_t *own;
    int nown;
    bool own_ok;
    uint64_t own_at;
};

typedef struct queued_write {
    uv_write_t req;
    pconn *c;
    int to;
    char *block; /* a pool block holding the bytes, or NULL: they follow */
    char data[];
} queued_write;

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out);
static void pconn_start_tunnel(pconn *c);
static void on_handle_closed(uv_handle_t *h);
static void on_upstream_closed(uv_handle_t *h);
static void connect_next(pconn *c);
static void refuse(pconn *c, int status, const char *code, uint8_t socks_code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- small things ------------------------------------------------------------------ */

static void proxy_destroy(proxy_t *px)
{
    for (size_t i = 0; i < px->npool; i++)
        free(px->pool[i]);
    if (px->own)
        uv_free_interface_addresses(px->own, px->nown);
    pump_pool_free(px->pipes);
    free(px->counts);
    free(px);
}

static char *block_get(proxy_t *px)
{
    return px->npool ? px->pool[--px->npool] : xmalloc(BLOCK_SIZE);
}

static void block_put(proxy_t *px, char *b)
{
    if (!b)
        return;
    if (px->npool < POOL_MAX)
        px->pool[px->npool++] = b;
    else
        free(b);
}

static uv_stream_t *side_stream(pconn *c, int side)
{
    return side == SIDE_CLIENT ? (uv_stream_t *)&c->client : (uv_stream_t *)&c->upstream;
}

static bool is_tunnel(const pconn *c)
{
    return (c->mode == MODE_CONNECT || c->mode == MODE_SOCKS) && c->phase == PH_RELAY;
}

static session_count *count_for(proxy_t *px, int session)
{
    for (size_t i = 0; i < px->ncounts; i++)
        if (px->counts[i].session == session)
            return &px->counts[i];
    if (px->ncounts == px->capcounts) {
        px->capcounts = px->capcounts ? px->capcounts * 2 : 8;
        px->counts = xrealloc(px->counts, px->capcounts * sizeof *px->counts);
    }
    px->counts[px->ncounts] = (session_count){.session = session};
    return &px->counts[px->ncounts++];
}

static void forget_count_if_idle(proxy_t *px, session_count *sc)
{
    if (sc->open || sc->over)
        return;
    *sc = px->counts[--px->ncounts];
}

size_t proxy_open_count(const proxy_t *p, int session)
{
    for (size_t i = 0; i < p->ncounts; i++)
        if (p->counts[i].session == session)
            return p->counts[i].open;
    return 0;
}

/* Is sa one of this machine's own addresses?  A public address of the
 * host reaches whatever listens there on all interfaces (a database, a
 * development server), so it is as local as 127.0.0.1.  -1 when the list
 * of addresses cannot be had (then nothing is dialled: see the caller). */
static int own_address(proxy_t *px, const struct sockaddr *sa)
{
    uint64_t now = uv_now(px->loop);
    if (!px->own_ok || now - px->own_at >= OWN_ADDRS_TTL_MS) {
        if (px->own)
            uv_free_interface_addresses(px->own, px->nown);
        px->own = NULL;
        px->nown = 0;
        px->own_ok = uv_interface_addresses(&px->own, &px->nown) == 0;
        px->own_at = now;
        if (!px->own_ok)
            return -1;
    }
    for (int i = 0; i < px->nown; i++)
        if (netaddr_same_address((const struct sockaddr *)&px->own[i].address, sa))
            return 1;
    return 0;
}

/* ---- records ----------------------------------------------------------------------- */

static const char *verdict_name(proxy_verdict v)
{
    switch (v) {
    case PROXY_ALLOW: return "allow";
    case PROXY_ALLOW_EXPLICIT: return "allow_explicit";
    case PROXY_DENY: return "deny";
    }
    return "?";
}

static void record_start(pconn *c)
{
    free(c->rec.reason);
    free(c->rec.message);
    memset(&c->rec, 0, sizeof c->rec);
    c->rec.active = true;
    c->rec.start_ms = uv_now(c->px->loop);
}

void pconn_emit_record(pconn *c, const char *close_reason)
{
    conn_record *r = &c->rec;
    if (!r->active)
        return;
    proxy_t *px = c->px;
    json_t *o = json_object();
    json_object_set_new(o, "session", json_integer(c->session));
    json_object_set_new(o, "listener", json_string(c->kind == PROXY_LISTEN_HTTP ? "http" : "socks5"));
    if (r->has_target) {
        json_object_set_new(o, "host", json_string(c->host));
        json_object_set_new(o, "port", json_integer(c->port));
        json_object_set_new(o, "protocol", json_string(rule_net_proto_name(c->proto)));
    }
    if (r->method[0])
        json_object_set_new(o, "method", json_string(r->method));
    if (r->decided)
        json_object_set_new(o, "decision", json_string(verdict_name(r->verdict)));
    if (r->reason)
        json_object_set_new(o, "reason", json_string(r->reason));
    if (r->address[0])
        json_object_set_new(o, "address", json_string(r->address));
    if (r->status)
        json_object_set_new(o, "status", json_integer(r->status));
    json_object_set_new(o, "bytes_to_server", json_integer((json_int_t)r->to_server));
    json_object_set_new(o, "bytes_to_client", json_integer((json_int_t)r->to_client));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)(uv_now(px->loop) - r->start_ms)));
    json_object_set_new(o, "close", json_string(close_reason));
    if (r->error)
        json_object_set_new(o, "error", json_string(r->error));
    if (r->message)
        json_object_set_new(o, "message", json_string(r->message));
    free(r->reason);
    free(r->message);
    memset(r, 0, sizeof *r);
    if (px->hooks.log)
        px->hooks.log(px->user, c->session, o);
    else
        json_decref(o);
}

/* A read, write or shutdown on side failed (a reset, mostly).  While
 * draining that is how many clients say goodbye: the refusal's reason
 * stays the record's. */
static void side_failed(pconn *c, int side)
{
    if (c->phase == PH_DRAINING)
        pconn_close(c, c->drain_reason);
    else
        pconn_abort(c, side == SIDE_CLIENT ? "client_error" : "server_error");
}

/* ---- reading and writing ----------------------------------------------------------- */

static size_t client_buffer_cap(const pconn *c)
{
    const proxy_limits *l = &c->px->lim;
    if (c->phase == PH_HEAD)
        return c->kind == PROXY_LISTEN_SOCKS5 ? SOCKS_HEAD_MAX : l->max_header_bytes;
    /* What waits while the request is decided, or an exchange's body on
     * its way upstream: bounded like a write queue. */
    return l->max_header_bytes + l->max_buffered;
}

void pconn_update_reading(pconn *c)
{
    for (int side = 0; side < 2; side++) {
        uv_stream_t *s = side_stream(c, side);
        bool want = c->phase != PH_CLOSING && !c->pump && c->want_read[side] && !c->throttled[side] && !c->eof[side];
        if (side == SIDE_UPSTREAM)
            want = want && c->upstream_connected;
        else if (!is_tunnel(c))
            want = want && c->in.len < client_buffer_cap(c) + 1;
        if (want && !c->reading[side]) {
            int r = uv_read_start(s, on_alloc, on_read);
            if (r < 0) {
                pconn_abort(c, side == SIDE_CLIENT ? "client_error" : "server_error");
                return;
            }
            c->reading[side] = true;
        } else if (!want && c->reading[side]) {
            uv_read_stop(s);
            c->reading[side] = false;
        }
    }
}

static void on_write(uv_write_t *req, int status)
{
    queued_write *w = (queued_write *)req;
    pconn *c = w->c;
    int to = w->to;
    block_put(c->px, w->block);
    free(w);
    if (c->phase == PH_CLOSING)
        return;
    if (status < 0) {
        side_failed(c, to);
        return;
    }
    c->last_active = uv_now(c->px->loop);
    int from = 1 - to;
    if (c->throttled[from] && uv_stream_get_write_queue_size(side_stream(c, to)) <= c->px->lim.max_buffered / 2) {
        c->throttled[from] = false;
        pconn_update_reading(c);
    }
}

/* Send n bytes at p to side `to`: block (a pool block holding them, or
 * NULL to have them copied) is taken. */
static void send_bytes(pconn *c, int to, char *block, const char *p, size_t n)
{
    uv_stream_t *s = side_stream(c, to);
    if (c->phase == PH_CLOSING || n == 0 || (to == SIDE_UPSTREAM && !c->upstream_connected)) {
        block_put(c->px, block);
        return;
    }
    if (uv_stream_get_write_queue_size(s) == 0) {
        uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
        int r = uv_try_write(s, &b, 1);
        if (r == (int)n) {
            block_put(c->px, block);
            return;
        }
        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r != UV_EAGAIN && r != UV_ENOSYS) {
            block_put(c->px, block);
            pconn_abort(c, to == SIDE_CLIENT ? "client_error" : "server_error");
            return;
        }
    }
    queued_write *w;
    if (block) {
        w = xmalloc(sizeof *w);
        w->block = block;
    } else {
        w = xmalloc(sizeof *w + n);
        memcpy(w->data, p, n);
        w->block = NULL;
        p = w->data;
    }
    w->c = c;
    w->to = to;
    uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
    int r = uv_write(&w->req, s, &b, 1, on_write);
    if (r < 0) {
        block_put(c->px, w->block);
        free(w);
        pconn_abort(c, to == SIDE_CLIENT ? "client_error" : "server_error");
        return;
    }
    if (uv_stream_get_write_queue_size(s) > c->px->lim.max_buffered) {
        c->throttled[1 - to] = true;
        pconn_update_reading(c);
    }
}

void pconn_send(pconn *c, int to, const char *p, size_t n)
{
    send_bytes(c, to, NULL, p, n);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
    (void)suggested;
    pconn *c = h->data;
    int side = h == (uv_handle_t *)&c->client ? SIDE_CLIENT : SIDE_UPSTREAM;
    if (is_tunnel(c)) {
        out->base = block_get(c->px);
        out->len = BLOCK_SIZE;
        c->alloc_block[side] = true;
        return;
    }
    buf_t *b = side == SIDE_CLIENT ? &c->in : &c->up_in;
    size_t room = 16 * 1024;
    buf_reserve(b, room);
    out->base = b->data + b->len;
    out->len = room;
    c->alloc_block[side] = false;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    pconn *c = req->data;
    int side = req == &c->shutdown_req[SIDE_CLIENT] ? SIDE_CLIENT : SIDE_UPSTREAM;
    c->shutdown_done[side] = true;
    if (c->phase == PH_CLOSING)
        return;
    if (status < 0) {
        side_failed(c, side);
        return;
    }
    if (c->phase == PH_DRAINING && side == SIDE_CLIENT && c->eof[SIDE_CLIENT]) {
        pconn_close(c, c->drain_reason);
        return;
    }
    if (is_tunnel(c) && c->eof[0] && c->eof[1] && c->shutdown_done[0] && c->shutdown_done[1])
        pconn_close(c, c->first_eof == SIDE_CLIENT ? "client_closed" : "server_closed");
}

/* No more bytes to side (after those queued). */
static void pconn_shutdown_side(pconn *c, int side)
{
    if (c->shutdown_sent[side] || (side == SIDE_UPSTREAM && !c->upstream_connected))
        return;
    c->shutdown_sent[side] = true;
    c->shutdown_req[side].data = c;
    if (uv_shutdown(&c->shutdown_req[side], side_stream(c, side), on_shutdown) < 0)
        pconn_abort(c, side == SIDE_CLIENT ? "client_error" : "server_error");
}

/* ---- the connection's timer ---------------------------------------------------------- */

static void on_timer(uv_timer_t *t);

/* When the current phase times out, or 0 for never. */
static uint64_t deadline(const pconn *c)
{
    const proxy_limits *l = &c->px->lim;
    switch (c->phase) {
    case PH_HEAD:
        /* The head's clock starts with its first byte (at accept for the
         * first request): an idle kept-alive connection waits idle_timeout. */
        return c->head_started ? c->phase_start + l->header_timeout_ms : c->last_active + l->idle_timeout_ms;
    case PH_DECIDING: return 0; /* the decider (a person, maybe) owns this wait */
    case PH_RESOLVING:
    case PH_CONNECTING: return c->phase_start + l->connect_timeout_ms;
    case PH_RELAY: return c->last_active + l->idle_timeout_ms;
    case PH_DRAINING: return c->last_active + l->header_timeout_ms;
    case PH_CLOSING: return 0;
    }
    return 0;
}

static void pconn_arm_timer(pconn *c)
{
    uint64_t d = deadline(c);
    if (!d) {
        uv_timer_stop(&c->timer);
        return;
    }
    uint64_t now = uv_now(c->px->loop);
    uv_timer_start(&c->timer, on_timer, d > now ? d - now : 0, 0);
}

void pconn_set_phase(pconn *c, conn_phase ph)
{
    c->phase = ph;
    c->phase_start = c->last_active = uv_now(c->px->loop);
    pconn_arm_timer(c);
}

static void on_timer(uv_timer_t *t)
{
    pconn *c = t->data;
    uint64_t d = deadline(c);
    if (!d)
        return;
    if (d > uv_now(c->px->loop)) {
        pconn_arm_timer(c);
        return;
    }
    const proxy_limits *l = &c->px->lim;
    switch (c->phase) {
    case PH_HEAD:
        if (!c->head_started)
            pconn_close(c, "idle_timeout");
        else if (c->kind == PROXY_LISTEN_HTTP && c->in.len) /* one that said nothing is just closed */
            refuse(c, 408, "request-timeout", 0, "the request head did not arrive within %llu ms",
                   (unsigned long long)l->header_timeout_ms);
        else
            pconn_close(c, "header_timeout");
        break;
    case PH_RESOLVING:
        refuse(c, 504, "resolve-failed", SOCKS5_HOST_UNREACHABLE, "\"%s\" did not resolve within %llu ms", c->host,
               (unsigned long long)l->connect_timeout_ms);
        break;
    case PH_CONNECTING:
        c->last_connect_error = UV_ETIMEDOUT;
        pconn_close_upstream(c); /* on_upstream_closed tries the next address */
        break;
    case PH_RELAY:
        if (c->mode == MODE_FORWARD)
            pconn_abort(c, "idle_timeout");
        else
            pconn_close(c, "idle_timeout");
        break;
    case PH_DRAINING: pconn_close(c, c->drain_reason); break;
    default: break;
    }
}

/* ---- closing ----------------------------------------------------------------------- */

static void maybe_free(pconn *c)
{
    if (c->handles || c->gai_active)
        return;
    proxy_t *px = c->px;
    if (c->prev)
        c->prev->next = c->next;
    else
        px->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    buf_free(&c->in);
    buf_free(&c->up_in);
    fwd_free(c);
    free(c->rec.reason);
    free(c->rec.message);
    free(c);
    if (--px->live == 0 && px->free_requested)
        proxy_destroy(px);
}

static void on_handle_closed(uv_handle_t *h)
{
    pconn *c = h->data;
    c->handles--;
    maybe_free(c);
}

static void on_upstream_closed(uv_handle_t *h)
{
    pconn *c = h->data;
    c->handles--;
    c->upstream_open = false;
    if (c->phase == PH_CLOSING) {
        maybe_free(c);
        return;
    }
    if (c->phase == PH_CONNECTING) {
        connect_next(c);
    } else if (c->resolve_after_close) {
        c->resolve_after_close = false;
        pconn_resolve(c);
    }
}

void pconn_close_upstream(pconn *c)
{
    if (!c->upstream_open || uv_is_closing((uv_handle_t *)&c->upstream))
        return;
    c->upstream_connected = false;
    c->reading[SIDE_UPSTREAM] = false;
    c->eof[SIDE_UPSTREAM] = false;
    c->throttled[SIDE_UPSTREAM] = c->throttled[SIDE_CLIENT] = false;
    c->shutdown_sent[SIDE_UPSTREAM] = c->shutdown_done[SIDE_UPSTREAM] = false;
    buf_reset(&c->up_in);
    uv_close((uv_handle_t *)&c->upstream, on_upstream_closed);
}

static void close_all(pconn *c, const char *reason, bool reset)
{
    if (c->phase == PH_CLOSING)
        return;
    proxy_t *px = c->px;
    conn_phase was = c->phase;
    c->phase = PH_CLOSING;
    if (was == PH_DECIDING && px->hooks.cancelled)
        px->hooks.cancelled(px->user, &c->pending);
    if (c->gai_active)
        uv_cancel((uv_req_t *)&c->gai);
    pconn_emit_record(c, reason);
    session_count *sc = count_for(px, c->session);
    bool counted = c->counted;
    if (counted)
        sc->open--;
    else if (c->over_limit)
        sc->over--;
    size_t open = sc->open;
    c->counted = c->over_limit = false;
    forget_count_if_idle(px, sc);
    if (c->pump) {
        pump_stop(c->pump); /* its duplicates of the sockets are closed now: a reset below is the last word */
        c->pump = NULL;
    }
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
    if (!reset || uv_tcp_close_reset(&c->client, on_handle_closed) < 0)
        uv_close((uv_handle_t *)&c->client, on_handle_closed);
    if (c->upstream_open && !uv_is_closing((uv_handle_t *)&c->upstream)) {
        if (!reset || !c->upstream_connected || uv_tcp_close_reset(&c->upstream, on_upstream_closed) < 0)
            uv_close((uv_handle_t *)&c->upstream, on_upstream_closed);
    }
    /* Last: the hook may call back into the proxy. */
    if (counted && px->hooks.open_count)
        px->hooks.open_count(px->user, c->session, (int)open);
}

void pconn_close(pconn *c, const char *reason)
{
    close_all(c, reason, false);
}

/* Close with a reset to whoever is still there: the other end learns that
 * the connection failed rather than ended (a truncated response must not
 * look complete). */
void pconn_abort(pconn *c, const char *reason)
{
    close_all(c, reason, true);
}

/* ---- refusals ---------------------------------------------------------------------- */

static const char *status_text(int status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    }
    return "Error";
}

/* Start draining: nothing more is said; the client's bytes are dropped
 * until it closes (or the header timeout), then the connection closes. */
static void start_draining(pconn *c, const char *reason)
{
    pconn_close_upstream(c);
    c->drain_reason = reason;
    pconn_set_phase(c, PH_DRAINING);
    c->want_read[SIDE_CLIENT] = true;
    c->want_read[SIDE_UPSTREAM] = false;
    c->throttled[SIDE_CLIENT] = false;
    buf_free(&c->in);
    pconn_shutdown_side(c, SIDE_CLIENT);
    if (c->phase == PH_DRAINING)
        pconn_update_reading(c);
}

/* Answer with a refusal and drain: an HTTP response with X-Corral-Error:
 * code and a one-line body, or a SOCKS5 reply with socks_code (0: close
 * without a reply, for a client that never got past the greeting). */
static void vrefuse(pconn *c, int status, const char *code, uint8_t socks_code, const char *fmt, va_list ap)
{
    if (c->phase == PH_CLOSING || c->phase == PH_DRAINING)
        return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    char *clean = sanitize_text(line, strlen(line), 900);
    free(c->rec.message);
    c->rec.message = clean;
    c->rec.error = code;
    if (c->kind == PROXY_LISTEN_HTTP) {
        char *body = xasprintf("corral: %s\n", clean);
        /* The reason also in the status line: a client that shows nothing
         * of a refused CONNECT but its status line (pip: "Tunnel
         * connection failed: 502 ...") shows why.  clean has no control
         * character; cut at a character's start. */
        size_t cut = strlen(clean) < 240 ? strlen(clean) : 240;
        while (cut > 0 && cut < strlen(clean) && ((unsigned char)clean[cut] & 0xc0) == 0x80)
            cut--;
        char *resp = xasprintf("HTTP/1.1 %d %s (corral: %.*s%s)\r\nX-Corral-Error: %s\r\n"
                               "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                               "Connection: close\r\n\r\n%s",
                               status, status_text(status), (int)cut, clean, cut < strlen(clean) ? "..." : "", code,
                               strlen(body), body);
        pconn_send(c, SIDE_CLIENT, resp, strlen(resp));
        free(resp);
        free(body);
    } else if (socks_code && c->socks_greeted) {
        uint8_t reply[SOCKS5_REPLY_LEN];
        socks5_reply(socks_code, reply);
        pconn_send(c, SIDE_CLIENT, (const char *)reply, sizeof reply);
    }
    if (c->phase != PH_CLOSING)
        start_draining(c, code);
}

static void refuse(pconn *c, int status, const char *code, uint8_t socks_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrefuse(c, status, code, socks_code, fmt, ap);
    va_end(ap);
}

void pconn_refuse_http(pconn *c, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrefuse(c, status, code, SOCKS5_GENERAL_FAILURE, fmt, ap);
    va_end(ap);
}

/* The graceful end of an absolute-form connection: the last response is
 * queued; the client reads it and closes. */
void pconn_finish(pconn *c, const char *reason)
{
    start_draining(c, reason);
}

/* ---- deciding, resolving, connecting ------------------------------------------------ */

void pconn_decide(pconn *c, const char *host, uint16_t port, rule_net_proto proto)
{
    proxy_t *px = c->px;
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    c->proto = proto;
    c->rec.has_target = true;
    if (c->over_limit) {
        refuse(c, 503, "too-many-connections", SOCKS5_GENERAL_FAILURE,
               "session %d already has %zu open connections through the proxy (the limit); \"%s\" was not tried",
               c->session, px->lim.max_per_session, host);
        return;
    }
    pconn_set_phase(c, PH_DECIDING);
    c->want_read[SIDE_CLIENT] = true; /* to see the client go away while it waits */
    pconn_update_reading(c);
    c->pending.c = c;
    if (c->allowed_host[0] && strcmp(c->allowed_host, c->host) == 0 && c->allowed_port == port &&
        c->allowed_proto == proto) {
        proxy_decided(&c->pending, c->allowed_verdict, "allowed earlier on this connection");
        return;
    }
    proxy_request r = {.session = c->session, .host = c->host, .port = port, .proto = proto};
    px->hooks.decide(px->user, &c->pending, &r);
}

void proxy_decided(proxy_pending *p, proxy_verdict v, const char *reason)
{
    pconn *c = p ? p->c : NULL;
    if (!c || c->phase != PH_DECIDING)
        return; /* answered twice, or after the client left: nothing to do */
    if (v != PROXY_ALLOW && v != PROXY_ALLOW_EXPLICIT)
        v = PROXY_DENY;
    c->rec.decided = true;
    c->rec.verdict = v;
    c->verdict = v;
    free(c->rec.reason);
    c->rec.reason = reason ? sanitize_text(reason, strlen(reason), 600) : NULL;
    if (v != PROXY_DENY) {
        snprintf(c->allowed_host, sizeof c->allowed_host, "%s", c->host);
        c->allowed_port = c->port;
        c->allowed_proto = c->proto;
        c->allowed_verdict = v;
    }
    if (v == PROXY_DENY) {
        refuse(c, 403, "denied", SOCKS5_NOT_ALLOWED, "network access to \"%s\" (port %u, %s) was denied: %s", c->host,
               c->port, rule_net_proto_name(c->proto),
               c->rec.reason ? c->rec.reason : "no rule allows it and nobody approved it");
        return;
    }
    if (c->mode == MODE_FORWARD)
        fwd_allowed(c);
    else
        pconn_resolve(c);
}

/* Why address sa may not be dialled for this connection, or NULL. */
static const char *address_refused(pconn *c, const struct sockaddr *sa)
{
    if (c->verdict == PROXY_ALLOW_EXPLICIT)
        return NULL;
    const char *why = netaddr_special(sa);
    if (why)
        return why;
    int own = own_address(c->px, sa);
    if (own < 0)
        return "unchecked (this machine's own addresses could not be listed)";
    return own ? "this machine's own address" : NULL;
}

bool pconn_address_allowed(pconn *c, const struct sockaddr *sa)
{
    return address_refused(c, sa) == NULL;
}

/* Keep the addresses that may be dialled; refuse when none is left. */
static void check_addresses(pconn *c)
{
    int kept = 0;
    const char *first_why = NULL;
    char first_addr[64] = "";
    for (int i = 0; i < c->naddrs; i++) {
        const char *why = address_refused(c, (struct sockaddr *)&c->addrs[i]);
        if (why) {
            if (!first_why) {
                first_why = why;
                netaddr_format((struct sockaddr *)&c->addrs[i], false, first_addr, sizeof first_addr);
            }
            continue;
        }
        if (kept != i)
            c->addrs[kept] = c->addrs[i];
        kept++;
    }
    c->naddrs = kept;
    if (kept == 0) {
        char what[200];
        if (strcmp(first_addr, c->host) == 0)
            snprintf(what, sizeof what, "the address is %s", first_why ? first_why : "?");
        else
            snprintf(what, sizeof what, "it resolves to %s, %s", first_addr, first_why ? first_why : "?");
        refuse(c, 403, "local-address", SOCKS5_NOT_ALLOWED,
               "refused \"%s\" (port %u, %s): %s; only a network_rule naming \"%s\" reaches such an address",
               c->host, c->port, rule_net_proto_name(c->proto), what, c->host);
        return;
    }
    c->next_addr = 0;
    c->last_connect_error = 0;
    pconn_set_phase(c, PH_CONNECTING);
    connect_next(c);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    pconn *c = req->data;
    c->gai_active = false;
    if (c->phase != PH_RESOLVING) {
        uv_freeaddrinfo(res);
        if (c->phase == PH_CLOSING)
            maybe_free(c);
        return;
    }
    if (status < 0) {
        uv_freeaddrinfo(res);
        refuse(c, 502, "resolve-failed", SOCKS5_HOST_UNREACHABLE, "could not resolve \"%s\": %s", c->host,
               uv_strerror(status));
        return;
    }
    c->naddrs = 0;
    for (struct addrinfo *ai = res; ai && c->naddrs < PROXY_MAX_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof c->addrs[0])
            continue;
        struct sockaddr_storage *ss = &c->addrs[c->naddrs++];
        memset(ss, 0, sizeof *ss);
        memcpy(ss, ai->ai_addr, ai->ai_addrlen);
        if (ai->ai_family == AF_INET)
            ((struct sockaddr_in *)ss)->sin_port = htons(c->port);
        else
            ((struct sockaddr_in6 *)ss)->sin6_port = htons(c->port);
    }
    uv_freeaddrinfo(res);
    if (c->naddrs == 0) {
        refuse(c, 502, "resolve-failed", SOCKS5_HOST_UNREACHABLE, "\"%s\" has no IPv4 or IPv6 address", c->host);
        return;
    }
    check_addresses(c);
}

void pconn_resolve(pconn *c)
{
    if (c->upstream_open) {
        /* An upstream connection of an earlier exchange: closed first, its
         * handle is the one the new connection uses. */
        c->resolve_after_close = true;
        pconn_set_phase(c, PH_RESOLVING);
        pconn_close_upstream(c);
        return;
    }
    if (netaddr_literal(c->host, c->port, &c->addrs[0])) {
        c->naddrs = 1;
        check_addresses(c);
        return;
    }
    pconn_set_phase(c, PH_RESOLVING);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP};
    c->gai.data = c;
    int r = uv_getaddrinfo(c->px->loop, &c->gai, on_resolved, c->host, NULL, &hints);
    if (r < 0) {
        refuse(c, 502, "resolve-failed", SOCKS5_HOST_UNREACHABLE, "could not resolve \"%s\": %s", c->host,
               uv_strerror(r));
        return;
    }
    c->gai_active = true;
}

static uint8_t socks_code_for(int err)
{
    switch (err) {
    case UV_ECONNREFUSED: return SOCKS5_CONNECTION_REFUSED;
    case UV_ENETUNREACH: return SOCKS5_NETWORK_UNREACHABLE;
    default: return SOCKS5_HOST_UNREACHABLE;
    }
}

static void on_connected(uv_connect_t *req, int status)
{
    pconn *c = req->data;
    if (c->phase != PH_CONNECTING || status == UV_ECANCELED)
        return; /* closed meanwhile: its close callback carries on */
    if (status < 0) {
        c->last_connect_error = status;
        pconn_close_upstream(c);
        return;
    }
    c->upstream_connected = true;
    uv_tcp_nodelay(&c->upstream, 1);
    const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[c->next_addr - 1];
    netaddr_format(sa, true, c->rec.address, sizeof c->rec.address);
    c->connected_addr = c->addrs[c->next_addr - 1];
    if (c->mode == MODE_FORWARD) {
        fwd_connected(c);
        return;
    }
    if (c->mode == MODE_CONNECT) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        pconn_send(c, SIDE_CLIENT, ok, sizeof ok - 1);
    } else {
        uint8_t reply[SOCKS5_REPLY_LEN];
        socks5_reply(SOCKS5_SUCCEEDED, reply);
        pconn_send(c, SIDE_CLIENT, (const char *)reply, sizeof reply);
    }
    if (c->phase != PH_CLOSING)
        pconn_start_tunnel(c);
}

static void connect_next(pconn *c)
{
    if (c->next_addr >= c->naddrs) {
        int e = c->last_connect_error ? c->last_connect_error : UV_EHOSTUNREACH;
        int status = e == UV_ETIMEDOUT ? 504 : 502;
        refuse(c, status, "connect-failed", socks_code_for(e), "could not connect to \"%s\" port %u: %s (%d address%s tried)",
               c->host, c->port, uv_strerror(e), c->naddrs, c->naddrs == 1 ? "" : "es");
        return;
    }
    const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[c->next_addr++];
    c->phase_start = uv_now(c->px->loop);
    pconn_arm_timer(c);
    uv_tcp_init(c->px->loop, &c->upstream);
    c->upstream.data = c;
    c->upstream_open = true;
    c->handles++;
    c->connect_req.data = c;
    int r = uv_tcp_connect(&c->connect_req, &c->upstream, sa, on_connected);
    if (r < 0) {
        c->last_connect_error = r;
        pconn_close_upstream(c);
    }
}

static void on_pump_moved(void *user, int dir, size_t n)
{
    pconn *c = user;
    c->last_active = uv_now(c->px->loop);
    if (dir == PUMP_A_TO_B)
        c->rec.to_server += n;
    else
        c->rec.to_client += n;
}

static void on_pump_ended(void *user, int error, int side)
{
    pconn *c = user;
    if (error == 0)
        pconn_close(c, side == 0 ? "client_closed" : "server_closed");
    else
        pconn_abort(c, side == 0 ? "client_error" : side == 1 ? "server_error" : "proxy_error");
}

static void on_pump_closed(void *user)
{
    pconn *c = user;
    c->handles--;
    maybe_free(c);
}

/* Hand the tunnel to the kernel (proxy_pump.c) when the sockets are
 * quiet: the reply to the client went out whole and what the client sent
 * early fits the first pipe.  Otherwise (or if that fails) the bytes go
 * through libuv's reads and writes. */
static bool start_pump(pconn *c)
{
    static const pump_hooks hooks = {.moved = on_pump_moved, .ended = on_pump_ended, .closed = on_pump_closed};
    uv_os_fd_t a, b;
    if (c->px->lim.copy_tunnels || uv_stream_get_write_queue_size((uv_stream_t *)&c->client) || c->in.len > 64 * 1024 ||
        uv_fileno((uv_handle_t *)&c->client, &a) < 0 || uv_fileno((uv_handle_t *)&c->upstream, &b) < 0)
        return false;
    proxy_t *px = c->px;
    if (!px->pipes) {
        size_t size = px->lim.max_buffered;
        size = size < 64 * 1024 ? 64 * 1024 : size > 1024 * 1024 ? 1024 * 1024 : size;
        px->pipes = pump_pool_new(size, 32);
    }
    /* Stop libuv's reads first: from now on the pump alone reads. */
    c->want_read[SIDE_CLIENT] = c->want_read[SIDE_UPSTREAM] = false;
    pconn_update_reading(c);
    if (pump_start(px->loop, px->pipes, a, b, c->in.data, c->in.len, &hooks, c, &c->pump) < 0) {
        c->pump = NULL;
        return false;
    }
    c->handles++;
    buf_free(&c->in);
    return true;
}

static void pconn_start_tunnel(pconn *c)
{
    pconn_set_phase(c, PH_RELAY);
    if (start_pump(c))
        return;
    if (c->in.len) {
        c->rec.to_server += c->in.len;
        pconn_send(c, SIDE_UPSTREAM, c->in.data, c->in.len);
    }
    buf_free(&c->in);
    if (c->phase != PH_RELAY)
        return;
    c->want_read[SIDE_CLIENT] = c->want_read[SIDE_UPSTREAM] = true;
    pconn_update_reading(c);
}

/* ---- request heads ------------------------------------------------------------------ */

static void http_head_input(pconn *c)
{
    /* A kept-alive connection may send an empty line between requests. */
    size_t skip = 0;
    while (c->in.len - skip >= 2 && c->in.data[skip] == '\r' && c->in.data[skip + 1] == '\n')
        skip += 2;
    if (skip) {
        buf_consume(&c->in, skip);
        c->head_scanned = 0;
    }
    if (c->in.len == 0)
        return;
    if (!c->head_started) {
        c->head_started = true;
        c->phase_start = uv_now(c->px->loop);
        pconn_arm_timer(c);
    }
    if (!c->rec.active)
        record_start(c);
    size_t max = c->px->lim.max_header_bytes;
    long n = http_head_end(c->in.data, c->in.len, &c->head_scanned);
    if (n < 0) {
        pconn_refuse_http(c, 400, "bad-request", "malformed request: a line ends in a bare LF (CRLF expected)");
        return;
    }
    if (n == 0 || (size_t)n > max) {
        if (n > 0 || c->in.len > max)
            pconn_refuse_http(c, 431, "request-too-large", "the request head is larger than %zu bytes", max);
        return;
    }
    http_head h;
    const char *why = NULL;
    if (http_parse_request(c->in.data, (size_t)n, &h, &why) < 0) {
        pconn_refuse_http(c, 400, "bad-request", "malformed request: %s", why);
        return;
    }
    c->head_scanned = 0;
    snprintf(c->rec.method, sizeof c->rec.method, "%.*s", (int)(h.method.n < 15 ? h.method.n : 15), h.method.p);
    if (!http_span_is(h.method, "CONNECT")) {
        fwd_request_head(c, &h);
        return;
    }
    http_target t;
    if (http_parse_connect_target(h.target, &t, &why) < 0) {
        pconn_refuse_http(c, 400, "bad-request", "malformed CONNECT: %s", why);
        return;
    }
    c->mode = MODE_CONNECT;
    buf_consume(&c->in, (size_t)n);
    pconn_decide(c, t.host, t.port, RULE_NET_HTTPS);
}

static void socks_input(pconn *c)
{
    const uint8_t *d = (const uint8_t *)c->in.data;
    const char *why = NULL;
    if (!c->rec.active)
        record_start(c);
    if (!c->socks_greeted) {
        bool no_auth = false;
        int n = socks5_parse_greeting(d, c->in.len, &no_auth, &why);
        if (n < 0) {
            refuse(c, 400, "bad-request", 0, "malformed SOCKS5 greeting: %s", why);
            return;
        }
        if (n == 0)
            return;
        buf_consume(&c->in, (size_t)n);
        c->socks_greeted = true;
        if (!no_auth) {
            static const uint8_t none[2] = {5, 0xff};
            pconn_send(c, SIDE_CLIENT, (const char *)none, 2);
            refuse(c, 400, "bad-request", 0, "the SOCKS5 client offers no method without authentication");
            return;
        }
        static const uint8_t chosen[2] = {5, 0};
        pconn_send(c, SIDE_CLIENT, (const char *)chosen, 2);
        if (c->phase == PH_CLOSING)
            return;
        d = (const uint8_t *)c->in.data;
    }
    socks5_request r;
    uint8_t code = SOCKS5_GENERAL_FAILURE;
    int n = socks5_parse_request(d, c->in.len, &r, &code, &why);
    if (n < 0) {
        refuse(c, 400, "bad-request", code, "malformed SOCKS5 request: %s", why);
        return;
    }
    if (n == 0)
        return;
    buf_consume(&c->in, (size_t)n);
    c->mode = MODE_SOCKS;
    if (r.command != SOCKS5_CMD_CONNECT) {
        snprintf(c->host, sizeof c->host, "%s", r.host);
        c->port = r.port;
        c->proto = RULE_NET_SOCKS5_TCP;
        c->rec.has_target = true;
        refuse(c, 400, "command-not-supported", SOCKS5_COMMAND_NOT_SUPPORTED,
               "SOCKS5 %s is not supported (only CONNECT)",
               r.command == SOCKS5_CMD_BIND ? "BIND" : "UDP ASSOCIATE");
        return;
    }
    pconn_decide(c, r.host, r.port, RULE_NET_SOCKS5_TCP);
}

void pconn_client_input(pconn *c)
{
    switch (c->phase) {
    case PH_HEAD:
        if (c->kind == PROXY_LISTEN_SOCKS5)
            socks_input(c);
        else
            http_head_input(c);
        break;
    case PH_RELAY:
        if (c->mode == MODE_FORWARD)
            fwd_client_input(c);
        break;
    case PH_DRAINING: buf_reset(&c->in); break;
    default: break; /* kept until the request is decided and connected */
    }
    if (c->phase != PH_CLOSING)
        pconn_update_reading(c);
}

/* ---- reads --------------------------------------------------------------------------- */

static void on_eof(pconn *c, int side)
{
    c->eof[side] = true;
    if (c->first_eof < 0)
        c->first_eof = side;
    if (is_tunnel(c)) {
        pconn_update_reading(c);
        pconn_shutdown_side(c, 1 - side);
        return;
    }
    if (c->mode == MODE_FORWARD && c->phase == PH_RELAY) {
        if (side == SIDE_CLIENT)
            fwd_client_eof(c);
        else
            fwd_upstream_gone(c, false);
        return;
    }
    if (side == SIDE_UPSTREAM) {
        if (c->mode == MODE_FORWARD)
            fwd_upstream_gone(c, false); /* an idle kept-alive upstream */
        return;
    }
    if (c->phase == PH_DRAINING) {
        if (c->shutdown_done[SIDE_CLIENT])
            pconn_close(c, c->drain_reason);
        else
            pconn_update_reading(c);
        return;
    }
    pconn_close(c, "client_closed");
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    pconn *c = s->data;
    int side = s == (uv_stream_t *)&c->client ? SIDE_CLIENT : SIDE_UPSTREAM;
    char *block = c->alloc_block[side] ? buf->base : NULL;
    c->alloc_block[side] = false;
    if (nread == 0 || c->phase == PH_CLOSING) {
        block_put(c->px, block);
        return;
    }
    if (nread < 0) {
        block_put(c->px, block);
        if (nread == UV_EOF) {
            on_eof(c, side);
        } else if (c->mode == MODE_FORWARD && side == SIDE_UPSTREAM) {
            fwd_upstream_gone(c, true);
        } else {
            side_failed(c, side);
        }
        return;
    }
    size_t n = (size_t)nread;
    if (c->phase != PH_DRAINING)
        c->last_active = uv_now(c->px->loop);
    if (block) {
        /* A tunnel: straight to the other side, the block with it. */
        if (side == SIDE_CLIENT)
            c->rec.to_server += n;
        else
            c->rec.to_client += n;
        send_bytes(c, 1 - side, block, block, n);
        return;
    }
    buf_t *b = side == SIDE_CLIENT ? &c->in : &c->up_in;
    b->len += n;
    b->data[b->len] = '\0';
    if (side == SIDE_CLIENT)
        pconn_client_input(c);
    else if (c->mode == MODE_FORWARD)
        fwd_upstream_input(c);
    else
        buf_reset(b);
}

/* ---- connections and listeners ------------------------------------------------------- */

static pconn *conn_new(proxy_t *px, int session, proxy_listener_kind kind)
{
    pconn *c = xcalloc(1, sizeof *c);
    c->px = px;
    c->session = session;
    c->kind = kind;
    c->mode = kind == PROXY_LISTEN_SOCKS5 ? MODE_SOCKS : MODE_HTTP;
    c->first_eof = -1;
    buf_init(&c->in);
    buf_init(&c->up_in);
    buf_init(&c->fwd.head);
    uv_timer_init(px->loop, &c->timer);
    c->timer.data = c;
    uv_tcp_init(px->loop, &c->client);
    c->client.data = c;
    c->handles = 2;
    c->next = px->conns;
    if (px->conns)
        px->conns->prev = c;
    px->conns = c;
    px->live++;
    return c;
}

/* A connection is in: count it against its session's limit and start
 * reading its request. */
static void conn_admit(pconn *c)
{
    proxy_t *px = c->px;
    session_count *sc = count_for(px, c->session);
    if (sc->open < px->lim.max_per_session) {
        c->counted = true;
        sc->open++;
    } else if (sc->over < OVER_LIMIT_ANSWERED) {
        c->over_limit = true;
        sc->over++;
    } else {
        pconn_close(c, "too_many_connections");
        return;
    }
    record_start(c);
    uv_tcp_nodelay(&c->client, 1);
    c->head_started = true;
    pconn_set_phase(c, PH_HEAD);
    c->want_read[SIDE_CLIENT] = true;
    pconn_update_reading(c);
    if (c->counted && px->hooks.open_count) /* last: the hook may call back into the proxy */
        px->hooks.open_count(px->user, c->session, (int)count_for(px, c->session)->open);
}

static void on_accept(uv_stream_t *server, int status)
{
    listener *l = server->data;
    if (status < 0 || l->px->shut)
        return; /* EMFILE and the like: libuv keeps listening */
    pconn *c = conn_new(l->px, l->session, l->kind);
    if (uv_accept(server, (uv_stream_t *)&c->client) < 0) {
        pconn_close(c, "accept_failed");
        return;
    }
    conn_admit(c);
}

static void on_listener_closed(uv_handle_t *h)
{
    listener *l = h->data;
    proxy_t *px = l->px;
    free(l);
    if (--px->live == 0 && px->free_requested)
        proxy_destroy(px);
}

static void listener_close(listener *l)
{
    proxy_t *px = l->px;
    if (l->prev)
        l->prev->next = l->next;
    else
        px->listeners = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->prev = l->next = NULL;
    uv_close((uv_handle_t *)&l->h, on_listener_closed);
}

static int check_stream_socket(int fd, bool listening, char *err, size_t errlen)
{
    int type = 0, acc = 0, domain = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
        snprintf(err, errlen, "fd %d is not a socket: %s", fd, strerror(errno));
        return -1;
    }
    len = sizeof domain;
    if (type != SOCK_STREAM || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
        (domain != AF_INET && domain != AF_INET6)) {
        snprintf(err, errlen, "fd %d is not a TCP socket", fd);
        return -1;
    }
    len = sizeof acc;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0 || (acc != 0) != listening) {
        snprintf(err, errlen, listening ? "fd %d is not a listening socket" : "fd %d is a listening socket, not a connection",
                 fd);
        return -1;
    }
    return 0;
}

int proxy_add_listener(proxy_t *p, int session, unsigned owner, int fd, proxy_listener_kind kind, char *err,
                       size_t errlen)
{
    if (p->shut) {
        snprintf(err, errlen, "the proxy is shut down");
        close(fd);
        return -1;
    }
    if (check_stream_socket(fd, true, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    listener *l = xcalloc(1, sizeof *l);
    l->px = p;
    l->session = session;
    l->owner = owner;
    l->kind = kind;
    uv_tcp_init(p->loop, &l->h);
    l->h.data = l;
    p->live++;
    int r = uv_tcp_open(&l->h, fd);
    if (r < 0)
        close(fd);
    else
        r = uv_listen((uv_stream_t *)&l->h, SOMAXCONN, on_accept);
    if (r < 0) {
        snprintf(err, errlen, "cannot listen on fd %d: %s", fd, uv_strerror(r));
        uv_close((uv_handle_t *)&l->h, on_listener_closed);
        return -1;
    }
    l->next = p->listeners;
    if (p->listeners)
        p->listeners->prev = l;
    p->listeners = l;
    return 0;
}

int proxy_add_connection(proxy_t *p, int session, int fd, proxy_listener_kind kind, char *err, size_t errlen)
{
    if (p->shut) {
        snprintf(err, errlen, "the proxy is shut down");
        close(fd);
        return -1;
    }
    if (check_stream_socket(fd, false, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    pconn *c = conn_new(p, session, kind);
    int r = uv_tcp_open(&c->client, fd);
    if (r < 0) {
        close(fd);
        snprintf(err, errlen, "cannot use fd %d: %s", fd, uv_strerror(r));
        c->rec.active = false;
        pconn_close(c, "accept_failed");
        return -1;
    }
    conn_admit(c);
    return 0;
}

proxy_t *proxy_new(uv_loop_t *loop, const proxy_hooks *hooks, void *user, const proxy_limits *limits)
{
    if (!hooks || !hooks->decide)
        return NULL;
    proxy_t *px = xcalloc(1, sizeof *px);
    px->loop = loop;
    px->hooks = *hooks;
    px->user = user;
    proxy_limits l = limits ? *limits : (proxy_limits){0};
    if (!l.max_per_session)
        l.max_per_session = 256;
    if (!l.header_timeout_ms)
        l.header_timeout_ms = 10 * 1000;
    if (!l.idle_timeout_ms)
        l.idle_timeout_ms = 10 * 60 * 1000;
    if (!l.max_header_bytes)
        l.max_header_bytes = 16 * 1024;
    if (!l.max_buffered)
        l.max_buffered = 1024 * 1024;
    if (!l.connect_timeout_ms)
        l.connect_timeout_ms = 10 * 1000;
    px->lim = l;
    return px;
}

void proxy_close_listeners(proxy_t *p, int session, unsigned owner)
{
    for (listener *l = p->listeners, *next; l; l = next) {
        next = l->next;
        if (l->session == session && l->owner == owner)
            listener_close(l);
    }
}

void proxy_session_ended(proxy_t *p, int session)
{
    for (listener *l = p->listeners, *next; l; l = next) {
        next = l->next;
        if (l->session == session)
            listener_close(l);
    }
    for (pconn *c = p->conns; c; c = c->next)
        if (c->session == session)
            pconn_close(c, "session_ended");
}

void proxy_shutdown(proxy_t *p)
{
    p->shut = true;
    while (p->listeners)
        listener_close(p->listeners);
    for (pconn *c = p->conns; c; c = c->next)
        pconn_close(c, "shutdown");
}

void proxy_free(proxy_t *p)
{
    if (!p)
        return;
    if (!p->shut)
        proxy_shutdown(p);
    if (p->live == 0)
        proxy_destroy(p);
    else
        p->free_requested = true; /* the last close callback frees it */
}
