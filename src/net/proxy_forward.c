/*
 * proxy_forward.c - absolute-form HTTP (GET http://host/path HTTP/1.1)
 * through the proxy, one exchange after another on a kept-alive client
 * connection.  Each request is decided on its own (it may name another
 * host than the one before: it never goes down the earlier host's
 * connection); the head goes upstream in origin form, the body follows by
 * its framing, and the response comes back untouched, framed to know
 * where it ends (Content-Length, chunked, until close, no body after HEAD,
 * 1xx, 204 and 304).  The upstream connection is kept for the next
 * request only when that names the same host and port and the address
 * still passes for the new decision.
 *
 * Requests are handled one at a time: the client is not read from the end
 * of a request's body until its response is complete, so pipelined
 * requests wait in the buffer and are answered in order.
 */
#include "config.h"

#include "net/proxy_int.h"

#include <stdio.h>
#include <string.h>

/* Response heads can be large (cookies); bounded all the same. */
#define RESP_HEAD_MAX (64 * 1024)

void fwd_request_head(pconn *c, const http_head *h)
{
    fwd_state *f = &c->fwd;
    http_target t;
    http_framing fr;
    const char *why = NULL;
    if (http_parse_absolute_target(h->target, &t, &why) < 0) {
        pconn_refuse_http(c, 400, "bad-request", "malformed request: %s", why);
        return;
    }
    if (http_request_framing(h, &fr, &why) < 0) {
        pconn_refuse_http(c, 400, "bad-request", "malformed request: %s", why);
        return;
    }
    c->mode = MODE_FORWARD;
    f->head_request = http_span_is(h->method, "HEAD");
    f->client_close = h->version_minor == 0 || http_header_has_token(h, "Connection", "close") ||
                      http_header_has_token(h, "Proxy-Connection", "close");
    buf_reset(&f->head);
    http_forward_head(h, &t, f->client_close, &f->head);
    f->req_framing = fr;
    f->req_left = fr.length;
    memset(&f->req_chunked, 0, sizeof f->req_chunked);
    f->req = fr.kind == HTTP_BODY_NONE ? REQ_DONE : REQ_BODY;
    f->resp = RESP_HEAD;
    f->resp_scanned = 0;
    f->upstream_close = false;
    buf_consume(&c->in, h->length); /* h and t point into c->in: not used after this */
    pconn_decide(c, t.host, t.port, RULE_NET_HTTP);
}

void fwd_allowed(pconn *c)
{
    fwd_state *f = &c->fwd;
    if (c->upstream_connected && f->upstream_idle && strcmp(f->up_host, c->host) == 0 && f->up_port == c->port &&
        pconn_address_allowed(c, (const struct sockaddr *)&c->connected_addr)) {
        f->upstream_idle = false;
        netaddr_format((const struct sockaddr *)&c->connected_addr, true, c->rec.address, sizeof c->rec.address);
        fwd_connected(c);
        return;
    }
    f->upstream_idle = false;
    pconn_resolve(c); /* closes the upstream connection of another host first */
}

void fwd_connected(pconn *c)
{
    fwd_state *f = &c->fwd;
    snprintf(f->up_host, sizeof f->up_host, "%s", c->host);
    f->up_port = c->port;
    pconn_set_phase(c, PH_RELAY);
    c->rec.to_server += f->head.len;
    pconn_send(c, SIDE_UPSTREAM, f->head.data, f->head.len);
    buf_reset(&f->head);
    if (c->phase != PH_RELAY)
        return;
    c->want_read[SIDE_UPSTREAM] = true;
    c->want_read[SIDE_CLIENT] = f->req == REQ_BODY;
    fwd_client_input(c);
}

/* Both halves of the exchange are through: log it, then wait for the next
 * request, or end the connection the way the exchange said. */
static void exchange_maybe_done(pconn *c)
{
    fwd_state *f = &c->fwd;
    if (c->phase != PH_RELAY || f->resp != RESP_DONE)
        return;
    if (f->req != REQ_DONE) {
        /* The server answered before the body was all sent (a 413, a
         * redirect): neither connection is in a state to go on. */
        pconn_emit_record(c, "early_response");
        pconn_finish(c, "early_response");
        return;
    }
    pconn_emit_record(c, "done");
    bool until_close = f->resp_framing.kind == HTTP_BODY_CLOSE;
    if (f->upstream_close || until_close) {
        pconn_close_upstream(c);
    } else {
        f->upstream_idle = true;
    }
    if (f->client_close || until_close) {
        pconn_finish(c, "done");
        return;
    }
    c->head_started = false;
    pconn_set_phase(c, PH_HEAD);
    c->want_read[SIDE_CLIENT] = true;
    c->want_read[SIDE_UPSTREAM] = f->upstream_idle;
    pconn_update_reading(c);
    if (c->in.len && c->phase == PH_HEAD)
        pconn_client_input(c); /* a pipelined request */
}

void fwd_client_input(pconn *c)
{
    fwd_state *f = &c->fwd;
    while (c->phase == PH_RELAY && f->req == REQ_BODY && c->in.len) {
        size_t take;
        if (f->req_framing.kind == HTTP_BODY_LENGTH) {
            take = c->in.len;
            if ((uint64_t)take > f->req_left)
                take = (size_t)f->req_left;
            f->req_left -= take;
            if (f->req_left == 0)
                f->req = REQ_DONE;
        } else {
            bool done = false;
            const char *why = NULL;
            long r = http_chunked_feed(&f->req_chunked, c->in.data, c->in.len, &done, &why);
            if (r < 0) {
                c->rec.error = "bad-request";
                free(c->rec.message);
                c->rec.message = xasprintf("malformed chunked request body: %s", why);
                pconn_abort(c, "bad-request");
                return;
            }
            take = (size_t)r;
            if (done)
                f->req = REQ_DONE;
        }
        c->rec.to_server += take;
        pconn_send(c, SIDE_UPSTREAM, c->in.data, take);
        buf_consume(&c->in, take);
    }
    if (c->phase != PH_RELAY)
        return;
    if (f->req == REQ_DONE)
        c->want_read[SIDE_CLIENT] = false; /* what follows is the next request: after this response */
    pconn_update_reading(c);
    exchange_maybe_done(c);
}

/* The response cannot be passed on.  Before its head went to the client,
 * the client gets a 502 saying why; after, only a reset can tell it that
 * what it got is not all. */
static void bad_response(pconn *c, const char *why)
{
    if (c->fwd.resp == RESP_HEAD)
        pconn_refuse_http(c, 502, "upstream-error", "the server of \"%s\" (%s) %s", c->host, c->rec.address, why);
    else
        pconn_abort(c, "bad_response");
}

static void response_head(pconn *c, long n)
{
    fwd_state *f = &c->fwd;
    http_head h;
    http_framing fr;
    const char *why = NULL;
    if (http_parse_response(c->up_in.data, (size_t)n, &h, &why) < 0 ||
        http_response_framing(&h, f->head_request, &fr, &why) < 0) {
        char text[200];
        snprintf(text, sizeof text, "sent a malformed response: %s", why);
        bad_response(c, text);
        return;
    }
    if (h.status == 101) {
        bad_response(c, "switched protocols, which this proxy does not pass on (it removes Upgrade)");
        return;
    }
    if (h.status >= 200) {
        c->rec.status = h.status;
        f->upstream_close = f->client_close || h.version_minor == 0 || http_header_has_token(&h, "Connection", "close");
        f->resp_framing = fr;
        f->resp_left = fr.length;
        memset(&f->resp_chunked, 0, sizeof f->resp_chunked);
        f->resp = fr.kind == HTTP_BODY_NONE ? RESP_DONE : RESP_BODY;
    } /* else an interim 1xx: passed on, and the final response follows */
    c->rec.to_client += (uint64_t)n;
    pconn_send(c, SIDE_CLIENT, c->up_in.data, (size_t)n);
    buf_consume(&c->up_in, (size_t)n);
    f->resp_scanned = 0;
}

void fwd_upstream_input(pconn *c)
{
    fwd_state *f = &c->fwd;
    if (c->phase != PH_RELAY || f->upstream_idle) {
        /* Bytes from a server that was asked nothing: it cannot be trusted
         * with the next request. */
        f->upstream_idle = false;
        pconn_close_upstream(c);
        return;
    }
    while (c->phase == PH_RELAY && c->up_in.len) {
        if (f->resp == RESP_HEAD) {
            long n = http_head_end(c->up_in.data, c->up_in.len, &f->resp_scanned);
            if (n < 0) {
                bad_response(c, "sent a response line ending in a bare LF (CRLF expected)");
                return;
            }
            if (n == 0) {
                if (c->up_in.len > RESP_HEAD_MAX)
                    bad_response(c, "sent a response head larger than 64 KiB");
                return;
            }
            response_head(c, n);
        } else if (f->resp == RESP_BODY) {
            size_t take = c->up_in.len;
            bool done = false;
            if (f->resp_framing.kind == HTTP_BODY_LENGTH) {
                if ((uint64_t)take > f->resp_left)
                    take = (size_t)f->resp_left;
                f->resp_left -= take;
                done = f->resp_left == 0;
            } else if (f->resp_framing.kind == HTTP_BODY_CHUNKED) {
                const char *why = NULL;
                long r = http_chunked_feed(&f->resp_chunked, c->up_in.data, c->up_in.len, &done, &why);
                if (r < 0) {
                    c->rec.error = "upstream-error";
                    free(c->rec.message);
                    c->rec.message = xasprintf("malformed chunked response body: %s", why);
                    pconn_abort(c, "bad_response");
                    return;
                }
                take = (size_t)r;
            }
            c->rec.to_client += take;
            pconn_send(c, SIDE_CLIENT, c->up_in.data, take);
            buf_consume(&c->up_in, take);
            if (done)
                f->resp = RESP_DONE;
        } else {
            /* More than the response: the connection is not reused. */
            f->upstream_close = true;
            buf_reset(&c->up_in);
        }
    }
    exchange_maybe_done(c);
}

void fwd_upstream_gone(pconn *c, bool failed)
{
    fwd_state *f = &c->fwd;
    if (c->phase != PH_RELAY || f->upstream_idle) {
        f->upstream_idle = false; /* a kept connection the server closed: the next request makes a new one */
        pconn_close_upstream(c);
        return;
    }
    if (!failed && f->resp == RESP_BODY && f->resp_framing.kind == HTTP_BODY_CLOSE) {
        f->resp = RESP_DONE;
        f->upstream_close = true;
        exchange_maybe_done(c);
        return;
    }
    if (f->resp == RESP_HEAD)
        bad_response(c, failed ? "reset the connection before answering" : "closed the connection without answering");
    else
        pconn_abort(c, failed ? "server_error" : "server_closed");
}

void fwd_client_eof(pconn *c)
{
    if (c->fwd.req == REQ_BODY) {
        pconn_abort(c, "client_closed");
        return;
    }
    /* The client closed its half after the request: the response still
     * goes to it, then the connection ends. */
    c->fwd.client_close = true;
}

void fwd_free(pconn *c)
{
    buf_free(&c->fwd.head);
}
