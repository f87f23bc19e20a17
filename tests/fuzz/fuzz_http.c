/*
 * fuzz_http.c - libFuzzer target for the HTTP/1.x the network proxy reads
 * (src/net/proxy_http.c): a request from a sandboxed program or a response
 * from a server, each hostile, read the way src/net/proxy.c and
 * src/net/proxy_forward.c read them.
 *
 * What a user would notice, checked beyond "no crash, no leak":
 *  - where a head ends does not depend on how its bytes arrived (the
 *    input is fed in pieces the first byte chooses, and once whole);
 *  - every span of a parsed head lies inside the head; header names are
 *    tokens, values hold no CR, LF or NUL;
 *  - a host the proxy will ask about is non-empty, printable, without
 *    spaces, '/', '@' or ':' outside an IPv6 literal's brackets;
 *  - the head forwarded upstream reads back, as a server would read it,
 *    as the same request: one Host, the authority the client named (the
 *    one the person approved), no hop-by-hop header, and the same body
 *    framing (a disagreement here is request smuggling);
 *  - the chunked decoder takes no byte past the body's end and gives the
 *    same end however the body is cut.
 *
 * make check runs it over tests/fuzz/corpus/http with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/netaddr.h"
#include "net/proxy_http.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_http: %s: %s\n", what, detail);
    abort();
}

static bool inside(http_span s, const char *base, size_t len)
{
    return s.n == 0 || (s.p >= base && s.p + s.n <= base + len);
}

static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static void check_head(const http_head *h, const char *data, size_t len)
{
    if (h->length > len)
        broken("a head longer than its input", "");
    if (!inside(h->method, data, len) || !inside(h->target, data, len) || !inside(h->reason, data, len))
        broken("a request line span outside the head", "");
    if (h->nheaders > HTTP_MAX_HEADERS)
        broken("more headers than the table holds", "");
    for (size_t i = 0; i < h->nheaders; i++) {
        const http_header *x = &h->headers[i];
        if (!inside(x->name, data, len) || !inside(x->value, data, len))
            broken("a header span outside the head", "");
        if (x->name.n == 0)
            broken("a header without a name", "");
        for (size_t k = 0; k < x->name.n; k++)
            if (!is_tchar((unsigned char)x->name.p[k]))
                broken("a header name that is not a token", "");
        for (size_t k = 0; k < x->value.n; k++)
            if (x->value.p[k] == '\r' || x->value.p[k] == '\n' || x->value.p[k] == '\0')
                broken("a header value with CR, LF or NUL", "");
    }
    if (h->version_minor != 0 && h->version_minor != 1)
        broken("a version other than HTTP/1.0 or 1.1", "");
}

static void check_host(const http_target *t)
{
    size_t n = strlen(t->host);
    if (n == 0)
        broken("an empty host", "");
    bool v6 = t->host[0] == '[' || strchr(t->host, ':') != NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->host[i];
        if (c <= ' ' || c >= 0x7f || c == '/' || c == '@' || (c == ':' && !v6))
            broken("a host the person could misread", t->host);
    }
}

/* Feed body to a chunked decoder in pieces of step bytes: how many bytes
 * belong to the body (-1: refused), done whether it ended. */
static long chunked_end(const char *body, size_t len, size_t step, bool *done)
{
    http_chunked c;
    memset(&c, 0, sizeof c);
    *done = false;
    size_t used = 0;
    while (used < len && !*done) {
        size_t n = len - used < step ? len - used : step;
        const char *why = NULL;
        long r = http_chunked_feed(&c, body + used, n, done, &why);
        if (r < 0) {
            if (!why || !*why)
                broken("a chunked body refused without a reason", "");
            return -1;
        }
        if ((size_t)r > n || ((size_t)r < n && !*done))
            broken("the chunked decoder took more than it was given, or stopped short", "");
        used += (size_t)r;
    }
    return (long)used;
}

static void check_body(http_framing fr, const char *body, size_t len, size_t step)
{
    if (fr.kind != HTTP_BODY_CHUNKED)
        return;
    bool done_whole, done_cut;
    long whole = chunked_end(body, len, len ? len : 1, &done_whole);
    long cut = chunked_end(body, len, step, &done_cut);
    if (whole != cut || done_whole != done_cut)
        broken("a chunked body that ends elsewhere when cut differently", "");
}

static void check_forward(const http_head *h, const http_target *t, http_framing fr, bool close)
{
    buf_t out;
    buf_init(&out);
    http_forward_head(h, t, close, &out);
    size_t scanned = 0;
    long n = http_head_end(out.data, out.len, &scanned);
    if (n <= 0 || (size_t)n != out.len)
        broken("a forwarded head that does not end where it was written", "");
    /* Read back with the proxy's own parser, whose table holds
     * HTTP_MAX_HEADERS: the forwarded head may carry two more (Host and
     * Connection: close) than the request that filled it. */
    if (h->nheaders + 2 > HTTP_MAX_HEADERS) {
        buf_free(&out);
        return;
    }
    http_head f;
    const char *why = NULL;
    if (http_parse_request(out.data, out.len, &f, &why) < 0)
        broken("a forwarded head a server cannot read", why);
    if (f.method.n != h->method.n || memcmp(f.method.p, h->method.p, h->method.n) != 0)
        broken("a forwarded request with another method", "");
    if (f.target.n == 0 || f.target.p[0] != '/')
        broken("a forwarded request not in origin form", "");
    size_t hosts = 0;
    for (size_t i = 0; i < f.nheaders; i++) {
        http_span name = f.headers[i].name;
        if (http_span_is(name, "Host")) {
            hosts++;
            if (f.headers[i].value.n != t->authority.n ||
                memcmp(f.headers[i].value.p, t->authority.p, t->authority.n) != 0)
                broken("a forwarded Host other than the approved authority", "");
        } else if (http_span_is(name, "Connection")) {
            if (!close || !http_span_is(f.headers[i].value, "close"))
                broken("a hop-by-hop Connection header forwarded", "");
        } else if (http_span_is(name, "Keep-Alive") || http_span_is(name, "TE") || http_span_is(name, "Trailer") ||
                   http_span_is(name, "Upgrade") || (name.n >= 6 && http_span_is((http_span){name.p, 6}, "Proxy-"))) {
            broken("a hop-by-hop header forwarded", "");
        }
    }
    if (hosts != 1)
        broken("a forwarded request without exactly one Host", "");
    http_framing ff;
    if (http_request_framing(&f, &ff, &why) < 0)
        broken("a forwarded request whose framing the proxy itself refuses", why);
    if (ff.kind != fr.kind || (fr.kind == HTTP_BODY_LENGTH && ff.length != fr.length))
        broken("a forwarded request framed differently from what the client sent", "");
    buf_free(&out);
}

static void request(const char *data, size_t len, size_t n, size_t step)
{
    http_head h;
    const char *why = NULL;
    if (http_parse_request(data, n, &h, &why) < 0) {
        if (!why || !*why)
            broken("a request refused without a reason", "");
        return;
    }
    check_head(&h, data, n);
    http_target t;
    if (http_span_is(h.method, "CONNECT")) {
        if (http_parse_connect_target(h.target, &t, &why) == 0) {
            check_host(&t);
            if (t.port == 0)
                broken("a CONNECT to port 0", t.host);
        }
        return;
    }
    if (http_parse_absolute_target(h.target, &t, &why) < 0)
        return;
    check_host(&t);
    http_framing fr;
    if (http_request_framing(&h, &fr, &why) < 0)
        return;
    if (fr.kind == HTTP_BODY_CLOSE)
        broken("a request framed until close", "");
    bool close = h.version_minor == 0 || http_header_has_token(&h, "Connection", "close") ||
                 http_header_has_token(&h, "Proxy-Connection", "close");
    check_forward(&h, &t, fr, close);
    check_body(fr, data + n, len - n, step);
}

static void response(const char *data, size_t len, size_t n, size_t step, bool head_request)
{
    http_head h;
    const char *why = NULL;
    if (http_parse_response(data, n, &h, &why) < 0) {
        if (!why || !*why)
            broken("a response refused without a reason", "");
        return;
    }
    check_head(&h, data, n);
    if (h.status < 100 || h.status > 999)
        broken("a status outside 100-999", "");
    http_framing fr;
    if (http_response_framing(&h, head_request, &fr, &why) < 0)
        return;
    if (head_request && fr.kind != HTTP_BODY_NONE)
        broken("a body after HEAD", "");
    check_body(fr, data + n, len - n, step);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    /* Byte 0: bit 0 response or request, bit 1 the request was HEAD;
     * byte 1: the size of the pieces the input arrives in. */
    bool is_response = data[0] & 1, head_request = data[0] & 2;
    size_t step = (size_t)data[1] + 1;
    const char *in = (const char *)data + 2;
    size_t len = size - 2;

    /* The head's end, found once whole and once piece by piece. */
    size_t scanned = 0;
    long whole = http_head_end(in, len, &scanned);
    long cut = 0;
    scanned = 0;
    for (size_t got = step < len ? step : len;; got = got + step < len ? got + step : len) {
        cut = http_head_end(in, got, &scanned);
        if (cut != 0 || got == len)
            break;
    }
    if (whole != cut)
        broken("a head that ends elsewhere when its bytes arrive in pieces", "");
    if (whole <= 0)
        return 0;
    if ((size_t)whole > len)
        broken("a head longer than the input", "");
    if (is_response)
        response(in, len, (size_t)whole, step, head_request);
    else
        request(in, len, (size_t)whole, step);
    return 0;
}
