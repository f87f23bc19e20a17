/* Unit tests for what the network proxy reads (src/net/proxy_http.c,
 * src/net/proxy_socks.c): request and response heads, CONNECT and absolute-
 * form targets, where bodies end (lengths, chunked, until close), the head
 * forwarded upstream, and SOCKS5's greeting, request and replies; with
 * the malformed inputs each must refuse (a message two ends could frame
 * differently lets one host's bytes pass for another's).  And the engine's
 * own checks on the sockets it is given (src/net/proxy.c). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/proxy.h"
#include "net/proxy_http.h"
#include "net/proxy_socks.h"

static http_span S(const char *s)
{
    return (http_span){s, strlen(s)};
}

/* ---- heads ------------------------------------------------------------------------- */

static void head_end_is_found_across_reads(void **state)
{
    (void)state;
    const char *req = "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\nBODY";
    size_t full = strlen(req) - 4, scanned = 0;
    for (size_t n = 0; n < full; n++)
        assert_int_equal(http_head_end(req, n, &scanned), 0);
    assert_int_equal(http_head_end(req, full, &scanned), (long)full);
    assert_int_equal(http_head_end(req, strlen(req), &(size_t){0}), (long)full);
    scanned = 0;
    assert_int_equal(http_head_end("GET / HTTP/1.1\nHost: a\r\n\r\n", 26, &scanned), -1);
    scanned = 0;
    assert_int_equal(http_head_end("GET / HTTP/1.1\r\nHost: a\n\r\n", 26, &scanned), -1);
}

static void a_connect_request_parses(void **state)
{
    (void)state;
    const char *req = "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
                      "Proxy-Connection: Keep-Alive\r\nUser-Agent:  curl/7.88  \r\n\r\n";
    http_head h;
    const char *why = NULL;
    assert_int_equal(http_parse_request(req, strlen(req), &h, &why), 0);
    assert_true(http_span_is(h.method, "CONNECT"));
    assert_true(http_span_is(h.target, "api.example.com:443"));
    assert_int_equal(h.version_minor, 1);
    assert_int_equal(h.nheaders, 3);
    assert_int_equal(h.length, strlen(req));
    const http_span *ua = http_header_get(&h, "user-agent");
    assert_non_null(ua);
    assert_true(http_span_is(*ua, "curl/7.88")); /* spaces around the value are not part of it */
    assert_true(http_header_has_token(&h, "proxy-connection", "keep-alive"));
    assert_false(http_header_has_token(&h, "Connection", "close"));

    http_target t;
    assert_int_equal(http_parse_connect_target(h.target, &t, &why), 0);
    assert_string_equal(t.host, "api.example.com");
    assert_int_equal(t.port, 443);
}

static void bad_request(const char *req, const char *why_part)
{
    http_head h;
    const char *why = NULL;
    if (http_parse_request(req, strlen(req), &h, &why) == 0)
        fail_msg("accepted: %s", req);
    if (!strstr(why, why_part))
        fail_msg("%s: want a reason with \"%s\", got \"%s\"", req, why_part, why);
}

static void malformed_request_heads_are_refused(void **state)
{
    (void)state;
    bad_request("\r\n\r\n", "empty");
    bad_request("CONNECT a:443\r\n\r\n", "space");
    bad_request("CONNECT a:443 HTTP/2.0\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
    bad_request("CONNECT a:443 http/1.1\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
    bad_request("CONNECT a:443 HTTP/1.1 \r\n\r\n", "HTTP/1.0 or HTTP/1.1");
    bad_request("CONNECT  a:443 HTTP/1.1\r\n\r\n", "target");
    bad_request("CONNECT a:443\x01 HTTP/1.1\r\n\r\n", "target");
    bad_request("CONNECT a\xc3\xa9:443 HTTP/1.1\r\n\r\n", "target");
    bad_request(" CONNECT a:443 HTTP/1.1\r\n\r\n", "method");
    bad_request("GE(T http://a/ HTTP/1.1\r\n\r\n", "method");
    bad_request("GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", "colon");
    bad_request("GET http://a/ HTTP/1.1\r\nHost\r\n\r\n", "Name: value");
    bad_request("GET http://a/ HTTP/1.1\r\n: a\r\n\r\n", "Name: value");
    bad_request("GET http://a/ HTTP/1.1\r\nX-A: 1\r\n continued\r\n\r\n", "folded");
    bad_request("GET http://a/ HTTP/1.1\r\nX-A: 1\x7f\r\n\r\n", "control");
    bad_request("GET http://a/ HTTP/1.1\r\nX-A: 1\r2\r\n\r\n", "CRLF");
    bad_request("GET http://a/ HTTP/1.1\r\nX-A: 1\r\n", "CRLF");

    char big[128 * 8 + 64] = "GET http://a/ HTTP/1.1\r\n";
    for (int i = 0; i < 129; i++)
        strcat(big, "A: b\r\n");
    strcat(big, "\r\n");
    bad_request(big, "128");
}

static void response_heads(void **state)
{
    (void)state;
    http_head h;
    const char *why = NULL;
    const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    assert_int_equal(http_parse_response(r, strlen(r), &h, &why), 0);
    assert_int_equal(h.status, 200);
    assert_true(http_span_is(h.reason, "OK"));
    r = "HTTP/1.0 204\r\n\r\n"; /* no reason phrase at all */
    assert_int_equal(http_parse_response(r, strlen(r), &h, &why), 0);
    assert_int_equal(h.status, 204);
    assert_int_equal(h.version_minor, 0);
    r = "HTTP/1.1 404 Not  Found \xc3\xa9\r\n\r\n"; /* obs-text is passed on */
    assert_int_equal(http_parse_response(r, strlen(r), &h, &why), 0);

    static const char *const bad[] = {
        "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n", "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 099 X\r\n\r\n", "HTTP/1.1 200 O\x01K\r\n\r\n", "HTTP/1.1 200 OK\r\nA : b\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (http_parse_response(bad[i], strlen(bad[i]), &h, &why) == 0)
            fail_msg("accepted: %s", bad[i]);
}

/* ---- targets ----------------------------------------------------------------------- */

static void connect_targets(void **state)
{
    (void)state;
    http_target t;
    const char *why = NULL;
    assert_int_equal(http_parse_connect_target(S("EXAMPLE.com.:8443"), &t, &why), 0);
    assert_string_equal(t.host, "example.com");
    assert_int_equal(t.port, 8443);
    assert_int_equal(http_parse_connect_target(S("[::1]:443"), &t, &why), 0);
    assert_string_equal(t.host, "::1");
    assert_int_equal(http_parse_connect_target(S("[::ffff:127.0.0.1]:22"), &t, &why), 0);
    assert_string_equal(t.host, "::ffff:127.0.0.1");
    assert_int_equal(http_parse_connect_target(S("127.1:22"), &t, &why), 0);
    assert_string_equal(t.host, "127.0.0.1");
    assert_int_equal(http_parse_connect_target(S("0:22"), &t, &why), 0);
    assert_string_equal(t.host, "0.0.0.0");

    static const struct {
        const char *target, *why;
    } bad[] = {
        {"example.com", "no port"},      {"example.com:", "port"},    {"example.com:0", "port"},
        {"example.com:65536", "port"},   {"example.com:44x", "port"}, {"example.com:-1", "port"},
        {":443", "empty"},               {"::1:443", "brackets"},     {"[::1]x:443", "bracketed"},
        {"[::1:443", "closing bracket"}, {"http://a:80", "not a URL"}, {"a@b:443", "not a URL"},
        {"a b:443", "space"},            {"[1.2.3.4]:80", "IPv6"},    {"a..b:443", "empty label"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (http_parse_connect_target(S(bad[i].target), &t, &why) == 0)
            fail_msg("accepted: %s", bad[i].target);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: want a reason with \"%s\", got \"%s\"", bad[i].target, bad[i].why, why);
    }
}

static void absolute_targets(void **state)
{
    (void)state;
    http_target t;
    const char *why = NULL;
    assert_int_equal(http_parse_absolute_target(S("http://Example.com/a/b?c=d"), &t, &why), 0);
    assert_string_equal(t.host, "example.com");
    assert_int_equal(t.port, 80);
    assert_true(http_span_is(t.path, "/a/b?c=d"));
    assert_true(http_span_is(t.authority, "Example.com"));
    assert_int_equal(http_parse_absolute_target(S("HTTP://example.com:8080"), &t, &why), 0);
    assert_int_equal(t.port, 8080);
    assert_int_equal(t.path.n, 0);
    assert_int_equal(http_parse_absolute_target(S("http://example.com:?x"), &t, &why), 0);
    assert_int_equal(t.port, 80);
    assert_true(http_span_is(t.path, "?x"));
    assert_int_equal(http_parse_absolute_target(S("http://[2001:db8::1]:81/"), &t, &why), 0);
    assert_string_equal(t.host, "2001:db8::1");
    assert_int_equal(t.port, 81);

    static const struct {
        const char *target, *why;
    } bad[] = {
        {"https://example.com/", "CONNECT"},
        {"/index.html", "whole URL"},
        {"ftp://example.com/", "only http://"},
        {"http:/example.com/", "only http://"},
        {"http://user@evil.test/", "user information"},
        {"http://allowed.test@evil.test/", "user information"},
        {"http://allowed.test:80@evil.test/", "user information"},
        {"http:///path", "no host"},
        {"http://a.test/#frag", "fragment"},
        {"http://a.test:99999/", "port"},
        {"http://a\\b/", "letters, digits"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (http_parse_absolute_target(S(bad[i].target), &t, &why) == 0)
            fail_msg("accepted: %s", bad[i].target);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: want a reason with \"%s\", got \"%s\"", bad[i].target, bad[i].why, why);
    }
}

/* ---- framing ----------------------------------------------------------------------- */

static int req_framing(const char *headers, http_framing *f, const char **why)
{
    char req[1024];
    snprintf(req, sizeof req, "POST http://a/ HTTP/1.1\r\n%s\r\n", headers);
    http_head h;
    assert_int_equal(http_parse_request(req, strlen(req), &h, why), 0);
    return http_request_framing(&h, f, why);
}

static void request_bodies_are_framed(void **state)
{
    (void)state;
    http_framing f;
    const char *why = NULL;
    assert_int_equal(req_framing("", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(req_framing("Content-Length: 0\r\n", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(req_framing("Content-Length: 12\r\n", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_LENGTH);
    assert_int_equal(f.length, 12);
    assert_int_equal(req_framing("Content-Length: 12\r\ncontent-length: 12\r\n", &f, &why), 0);
    assert_int_equal(f.length, 12);
    assert_int_equal(req_framing("Transfer-Encoding: chunked\r\n", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_CHUNKED);
    assert_int_equal(req_framing("Transfer-Encoding: gzip, Chunked\r\n", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_CHUNKED);
    assert_int_equal(req_framing("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", &f, &why), 0);
    assert_int_equal(f.kind, HTTP_BODY_CHUNKED);

    static const struct {
        const char *headers, *why;
    } bad[] = {
        {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "both"},
        {"Content-Length: 5\r\nContent-Length: 6\r\n", "different"},
        {"Content-Length: 5, 5\r\n", "not a number"},
        {"Content-Length: +5\r\n", "not a number"},
        {"Content-Length: -1\r\n", "not a number"},
        {"Content-Length: 0x10\r\n", "not a number"},
        {"Content-Length:\r\n", "empty"},
        {"Content-Length: 1234567890123456789\r\n", "too large"},
        {"Transfer-Encoding: gzip\r\n", "does not end in chunked"},
        {"Transfer-Encoding: chunked, gzip\r\n", "does not end in chunked"},
        {"Transfer-Encoding: chunked, chunked\r\n", "does not end in chunked"},
        {"Transfer-Encoding: xchunked\r\n", "does not end in chunked"},
        {"Transfer-Encoding:\r\n", "does not end in chunked"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (req_framing(bad[i].headers, &f, &why) == 0)
            fail_msg("framed: %s", bad[i].headers);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: want a reason with \"%s\", got \"%s\"", bad[i].headers, bad[i].why, why);
    }
}

static int resp_framing(const char *status_and_headers, bool head, http_framing *f)
{
    char r[512];
    snprintf(r, sizeof r, "HTTP/1.1 %s\r\n", status_and_headers);
    http_head h;
    const char *why = NULL;
    assert_int_equal(http_parse_response(r, strlen(r), &h, &why), 0);
    return http_response_framing(&h, head, f, &why);
}

static void response_bodies_are_framed(void **state)
{
    (void)state;
    http_framing f;
    assert_int_equal(resp_framing("200 OK\r\nContent-Length: 7\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_LENGTH);
    assert_int_equal(f.length, 7);
    assert_int_equal(resp_framing("200 OK\r\nContent-Length: 7\r\n", true, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE); /* after HEAD */
    assert_int_equal(resp_framing("204 No Content\r\nContent-Length: 7\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(resp_framing("304 Not Modified\r\nTransfer-Encoding: chunked\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(resp_framing("100 Continue\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(resp_framing("200 OK\r\nTransfer-Encoding: chunked\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_CHUNKED);
    assert_int_equal(resp_framing("200 OK\r\nTransfer-Encoding: gzip\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_CLOSE);
    assert_int_equal(resp_framing("200 OK\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_CLOSE);
    assert_int_equal(resp_framing("200 OK\r\nContent-Length: 0\r\n", false, &f), 0);
    assert_int_equal(f.kind, HTTP_BODY_NONE);
    assert_int_equal(resp_framing("200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n", false, &f), -1);
    assert_int_equal(resp_framing("200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n", false, &f), -1);
}

/* Feed body in pieces of `step`; returns the bytes taken and whether it ended. */
static long feed(const char *body, size_t len, size_t step, bool *done, const char **why)
{
    http_chunked c = {0};
    size_t taken = 0;
    *done = false;
    while (taken < len && !*done) {
        size_t n = len - taken < step ? len - taken : step;
        long r = http_chunked_feed(&c, body + taken, n, done, why);
        if (r < 0)
            return -1;
        assert_true((size_t)r == n || *done);
        taken += (size_t)r;
    }
    return (long)taken;
}

static void chunked_bodies_end_where_they_end(void **state)
{
    (void)state;
    static const char *const good[] = {
        "0\r\n\r\n",
        "5\r\nhello\r\n0\r\n\r\n",
        "5;name=value\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n",
        "5 ; ext\r\nhello\r\n0\r\n\r\n",
        "A\r\n0123456789\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n",
        "00000003\r\nabc\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%sNEXT REQUEST", good[i]);
        for (size_t step = 1; step <= strlen(buf); step += step < 8 ? 1 : 17) {
            bool done;
            const char *why = NULL;
            long n = feed(buf, strlen(buf), step, &done, &why);
            if (n != (long)strlen(good[i]) || !done)
                fail_msg("%s (step %zu): took %ld, done %d, %s", good[i], step, n, done, why ? why : "");
        }
    }
    static const struct {
        const char *body, *why;
    } bad[] = {
        {"zz\r\n", "hexadecimal"},
        {"\r\n", "hexadecimal"},
        {";x\r\n", "hexadecimal"},
        {"5\nhello\r\n", "CRLF"},
        {"5\r\nhelloX\r\n", "CRLF"},
        {"5\r\nhello\r0\r\n\r\n", "CRLF"},
        {"10000000000000000\r\n", "too large"},
        {"5;a\x01\r\nhello\r\n", "control"},
        {"0\r\nX: 1\r\n folded\r\n\r\n", "folded"},
        {"0\r\nX: 1\n\r\n", "CRLF"},
        {"0\r\n\r\r", "CRLF"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bool done;
        const char *why = NULL;
        if (feed(bad[i].body, strlen(bad[i].body), 1, &done, &why) >= 0)
            fail_msg("accepted: %s", bad[i].body);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: want a reason with \"%s\", got \"%s\"", bad[i].body, bad[i].why, why);
    }
    /* A long extension line is refused rather than buffered without end. */
    char *long_ext = malloc(8192);
    memset(long_ext, 'x', 8191);
    memcpy(long_ext, "1;", 2);
    long_ext[8191] = '\0';
    bool done;
    const char *why = NULL;
    assert_int_equal(feed(long_ext, strlen(long_ext), 512, &done, &why), -1);
    assert_non_null(strstr(why, "too long"));
    free(long_ext);
}

/* ---- the head sent upstream ------------------------------------------------------ */

static char *forwarded(const char *req, bool close)
{
    http_head h;
    http_target t;
    const char *why = NULL;
    assert_int_equal(http_parse_request(req, strlen(req), &h, &why), 0);
    assert_int_equal(http_parse_absolute_target(h.target, &t, &why), 0);
    buf_t out;
    buf_init(&out);
    http_forward_head(&h, &t, close, &out);
    return buf_steal(&out);
}

static void the_head_goes_upstream_in_origin_form(void **state)
{
    (void)state;
    char *s = forwarded("GET http://Example.com:8080/a?b HTTP/1.1\r\nHost: evil.test\r\nAccept: */*\r\n"
                        "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
                        "Connection: keep-alive, X-Secret, Content-Length, Transfer-Encoding\r\nX-Secret: 1\r\n"
                        "Keep-Alive: 5\r\nTE: trailers\r\nUpgrade: websocket\r\nTransfer-Encoding: chunked\r\n\r\n",
                        false);
    assert_string_equal(s, "GET /a?b HTTP/1.1\r\nHost: Example.com:8080\r\nAccept: */*\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n");
    free(s);
    s = forwarded("HEAD http://a.test HTTP/1.0\r\n\r\n", true);
    assert_string_equal(s, "HEAD / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
    free(s);
    s = forwarded("GET http://a.test?q=1 HTTP/1.1\r\nX-Proxy-Thing: stays\r\n\r\n", false);
    assert_string_equal(s, "GET /?q=1 HTTP/1.1\r\nHost: a.test\r\nX-Proxy-Thing: stays\r\n\r\n");
    free(s);
}

/* ---- SOCKS5 ------------------------------------------------------------------------ */

static void socks_greetings(void **state)
{
    (void)state;
    bool no_auth = false;
    const char *why = NULL;
    const uint8_t ok[] = {5, 2, 2, 0};
    for (size_t n = 0; n < sizeof ok; n++)
        assert_int_equal(socks5_parse_greeting(ok, n, &no_auth, &why), 0);
    assert_int_equal(socks5_parse_greeting(ok, sizeof ok, &no_auth, &why), 4);
    assert_true(no_auth);
    const uint8_t password_only[] = {5, 1, 2};
    assert_int_equal(socks5_parse_greeting(password_only, 3, &no_auth, &why), 3);
    assert_false(no_auth);
    const uint8_t v4[] = {4, 1, 0, 80, 127, 0, 0, 1, 0};
    assert_int_equal(socks5_parse_greeting(v4, sizeof v4, &no_auth, &why), -1);
    assert_non_null(strstr(why, "SOCKS4"));
    const uint8_t none[] = {5, 0};
    assert_int_equal(socks5_parse_greeting(none, 2, &no_auth, &why), -1);
    const uint8_t http[] = "GET / HTTP/1.1\r\n";
    assert_int_equal(socks5_parse_greeting(http, sizeof http - 1, &no_auth, &why), -1);
}

static void socks_requests(void **state)
{
    (void)state;
    socks5_request r;
    uint8_t code = 0xee;
    const char *why = NULL;
    const uint8_t v4[] = {5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb};
    for (size_t n = 0; n < sizeof v4; n++)
        assert_int_equal(socks5_parse_request(v4, n, &r, &code, &why), 0);
    assert_int_equal(socks5_parse_request(v4, sizeof v4, &r, &code, &why), (int)sizeof v4);
    assert_int_equal(r.command, SOCKS5_CMD_CONNECT);
    assert_string_equal(r.host, "93.184.216.34");
    assert_int_equal(r.port, 443);

    const uint8_t v6[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 22};
    assert_int_equal(socks5_parse_request(v6, sizeof v6, &r, &code, &why), (int)sizeof v6);
    assert_string_equal(r.host, "::ffff:127.0.0.1");
    assert_int_equal(r.port, 22);

    uint8_t name[64] = {5, 1, 0, 3, 12};
    memcpy(name + 5, "API.Example.", 12);
    name[17] = 0;
    name[18] = 80;
    for (size_t n = 0; n < 19; n++)
        assert_int_equal(socks5_parse_request(name, n, &r, &code, &why), 0);
    assert_int_equal(socks5_parse_request(name, 19, &r, &code, &why), 19);
    assert_string_equal(r.host, "api.example");
    assert_int_equal(r.port, 80);
    /* a name the resolver would read as an address is that address */
    uint8_t numeric[] = {5, 1, 0, 3, 5, '1', '2', '7', '.', '1', 0, 80};
    assert_int_equal(socks5_parse_request(numeric, sizeof numeric, &r, &code, &why), (int)sizeof numeric);
    assert_string_equal(r.host, "127.0.0.1");

    const uint8_t bind[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(socks5_parse_request(bind, sizeof bind, &r, &code, &why), (int)sizeof bind);
    assert_int_equal(r.command, SOCKS5_CMD_BIND);
    const uint8_t udp[] = {5, 3, 0, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(socks5_parse_request(udp, sizeof udp, &r, &code, &why), (int)sizeof udp);
    assert_int_equal(r.command, SOCKS5_CMD_UDP_ASSOCIATE);

    static const struct {
        uint8_t msg[16];
        size_t len;
        uint8_t code;
    } bad[] = {
        {{5, 9, 0, 1, 1, 2, 3, 4, 0, 80}, 10, SOCKS5_COMMAND_NOT_SUPPORTED},
        {{5, 1, 0, 7, 1, 2, 3, 4, 0, 80}, 10, SOCKS5_ADDRESS_NOT_SUPPORTED},
        {{4, 1, 0, 1, 1, 2, 3, 4, 0, 80}, 10, SOCKS5_GENERAL_FAILURE},
        {{5, 1, 1, 1, 1, 2, 3, 4, 0, 80}, 10, SOCKS5_GENERAL_FAILURE},
        {{5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80}, 10, SOCKS5_HOST_UNREACHABLE},
        {{5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80}, 10, SOCKS5_HOST_UNREACHABLE},
        {{5, 1, 0, 3, 0, 0, 80}, 7, SOCKS5_HOST_UNREACHABLE},
        {{5, 1, 0, 1, 1, 2, 3, 4, 0, 0}, 10, SOCKS5_HOST_UNREACHABLE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        code = 0xee;
        if (socks5_parse_request(bad[i].msg, bad[i].len, &r, &code, &why) != -1)
            fail_msg("request %zu accepted", i);
        if (code != bad[i].code)
            fail_msg("request %zu: reply %#x, want %#x", i, code, bad[i].code);
    }

    uint8_t reply[SOCKS5_REPLY_LEN];
    socks5_reply(SOCKS5_NOT_ALLOWED, reply);
    const uint8_t want[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(reply, want, sizeof want);
}

/* ---- the engine's checks on what it is given ---------------------------------------- */

static void decide_nothing(void *user, proxy_pending *p, const proxy_request *r)
{
    (void)user;
    (void)r;
    proxy_decided(p, PROXY_DENY, NULL);
}

static void sockets_the_proxy_refuses(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    proxy_hooks none = {0};
    assert_null(proxy_new(&loop, &none, NULL, NULL)); /* a proxy that cannot decide is no proxy */
    proxy_hooks hooks = {.decide = decide_nothing};
    proxy_t *p = proxy_new(&loop, &hooks, NULL, NULL);
    assert_non_null(p);
    char err[256];

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(proxy_add_listener(p, 1, 0, fds[0], PROXY_LISTEN_HTTP, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a socket"));
    assert_int_equal(close(fds[1]), 0);
    assert_int_equal(close(fds[0]), -1); /* taken, also on failure */

    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(proxy_add_listener(p, 1, 0, u, PROXY_LISTEN_HTTP, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a TCP socket"));

    int t = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(proxy_add_listener(p, 1, 0, t, PROXY_LISTEN_SOCKS5, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a listening socket"));

    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 4), 0);
    assert_int_equal(proxy_add_connection(p, 1, dup(l), PROXY_LISTEN_HTTP, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a listening socket, not a connection"));
    assert_int_equal(proxy_add_listener(p, 1, 0, l, PROXY_LISTEN_HTTP, err, sizeof err), 0);
    assert_int_equal(proxy_open_count(p, 1), 0);

    proxy_shutdown(p);
    assert_int_equal(proxy_add_listener(p, 1, 0, socket(AF_INET, SOCK_STREAM, 0), PROXY_LISTEN_HTTP, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "shut down"));
    uv_run(&loop, UV_RUN_DEFAULT);
    proxy_free(p);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_end_is_found_across_reads),
        cmocka_unit_test(a_connect_request_parses),
        cmocka_unit_test(malformed_request_heads_are_refused),
        cmocka_unit_test(response_heads),
        cmocka_unit_test(connect_targets),
        cmocka_unit_test(absolute_targets),
        cmocka_unit_test(request_bodies_are_framed),
        cmocka_unit_test(response_bodies_are_framed),
        cmocka_unit_test(chunked_bodies_end_where_they_end),
        cmocka_unit_test(the_head_goes_upstream_in_origin_form),
        cmocka_unit_test(socks_greetings),
        cmocka_unit_test(socks_requests),
        cmocka_unit_test(sockets_the_proxy_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
