/*
 * proxy_http.c - see proxy_http.h.  The grammar is RFC 9112's, read
 * strictly (see the header for why); each refusal says what was wrong so
 * that the 400 a client gets names it.
 */
#include "config.h"

#include "net/proxy_http.h"

#include <string.h>

/* RFC 9110 tchar: the characters of a method or a header name. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A byte a field value or reason phrase may hold: HTAB, SP, visible
 * ASCII, and obs-text (bytes >= 0x80, passed on as they are). */
static bool is_field_byte(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

bool http_span_is(http_span s, const char *text)
{
    size_t n = strlen(text);
    if (s.n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s.p[i]) != lower(text[i]))
            return false;
    return true;
}

long http_head_end(const char *data, size_t len, size_t *scanned)
{
    for (size_t i = *scanned; i < len; i++) {
        if (data[i] != '\n')
            continue;
        if (i == 0 || data[i - 1] != '\r')
            return -1;
        if (i >= 3 && data[i - 2] == '\n' && data[i - 3] == '\r')
            return (long)(i + 1);
        if (i == 1)
            return 2; /* a head that is only CRLF: the parser refuses it */
    }
    *scanned = len;
    return 0;
}

/* The end of the line starting at p (the offset of its CR), or -1. */
static long line_end(const char *data, size_t len, size_t p)
{
    for (size_t i = p; i + 1 < len; i++)
        if (data[i] == '\r')
            return data[i + 1] == '\n' ? (long)i : -1;
    return -1;
}

static int parse_version(const char *p, size_t n, int *minor)
{
    if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
        return -1;
    *minor = p[7] - '0';
    return 0;
}

/* The header lines from offset p through the empty line. */
static int parse_headers(const char *data, size_t len, size_t p, http_head *h, const char **why)
{
    h->nheaders = 0;
    for (;;) {
        long e = line_end(data, len, p);
        if (e < 0) {
            *why = "a header line does not end in CRLF";
            return -1;
        }
        size_t end = (size_t)e;
        if (end == p) {
            h->length = end + 2;
            return 0;
        }
        if (data[p] == ' ' || data[p] == '\t') {
            *why = "a folded header line (obsolete line folding is not accepted)";
            return -1;
        }
        size_t name_end = p;
        while (name_end < end && is_tchar((unsigned char)data[name_end]))
            name_end++;
        if (name_end == p || name_end == end || data[name_end] != ':') {
            *why = "a header line is not \"Name: value\" (or has a space before its colon)";
            return -1;
        }
        size_t v = name_end + 1, ve = end;
        for (size_t i = v; i < end; i++)
            if (!is_field_byte((unsigned char)data[i])) {
                *why = "a header value holds a control character";
                return -1;
            }
        while (v < ve && (data[v] == ' ' || data[v] == '\t'))
            v++;
        while (ve > v && (data[ve - 1] == ' ' || data[ve - 1] == '\t'))
            ve--;
        if (h->nheaders == HTTP_MAX_HEADERS) {
            *why = "more than 128 header lines";
            return -1;
        }
        h->headers[h->nheaders].name = (http_span){data + p, name_end - p};
        h->headers[h->nheaders].value = (http_span){data + v, ve - v};
        h->nheaders++;
        p = end + 2;
    }
}

int http_parse_request(const char *data, size_t len, http_head *h, const char **why)
{
    memset(h, 0, sizeof *h);
    long e = line_end(data, len, 0);
    if (e <= 0) {
        *why = "the request line is empty or does not end in CRLF";
        return -1;
    }
    size_t end = (size_t)e, p = 0;
    while (p < end && is_tchar((unsigned char)data[p]))
        p++;
    if (p == 0 || p == end || data[p] != ' ') {
        *why = "the request line does not start with a method and one space";
        return -1;
    }
    h->method = (http_span){data, p};
    size_t t = ++p;
    while (p < end && (unsigned char)data[p] > 0x20 && (unsigned char)data[p] < 0x7f)
        p++;
    if (p == t || p == end || data[p] != ' ') {
        *why = "the request target is missing, holds a control character or a byte outside ASCII, or is not "
               "followed by one space";
        return -1;
    }
    h->target = (http_span){data + t, p - t};
    p++;
    if (parse_version(data + p, end - p, &h->version_minor) < 0) {
        *why = "the request line does not end in HTTP/1.0 or HTTP/1.1";
        return -1;
    }
    return parse_headers(data, len, end + 2, h, why);
}

int http_parse_response(const char *data, size_t len, http_head *h, const char **why)
{
    memset(h, 0, sizeof *h);
    long e = line_end(data, len, 0);
    if (e < 12) {
        *why = "the status line is too short or does not end in CRLF";
        return -1;
    }
    size_t end = (size_t)e;
    if (parse_version(data, 8, &h->version_minor) < 0 || data[8] != ' ') {
        *why = "the status line does not start with HTTP/1.0 or HTTP/1.1";
        return -1;
    }
    int status = 0;
    for (size_t i = 9; i < 12; i++) {
        if (data[i] < '0' || data[i] > '9') {
            *why = "the status code is not three digits";
            return -1;
        }
        status = status * 10 + (data[i] - '0');
    }
    if (status < 100) {
        *why = "the status code is below 100";
        return -1;
    }
    h->status = status;
    if (end > 12) {
        if (data[12] != ' ') {
            *why = "the status code is not followed by a space";
            return -1;
        }
        for (size_t i = 13; i < end; i++)
            if (!is_field_byte((unsigned char)data[i])) {
                *why = "the reason phrase holds a control character";
                return -1;
            }
        h->reason = (http_span){data + 13, end - 13};
    }
    return parse_headers(data, len, end + 2, h, why);
}

const http_span *http_header_get(const http_head *h, const char *name)
{
    for (size_t i = 0; i < h->nheaders; i++)
        if (http_span_is(h->headers[i].name, name))
            return &h->headers[i].value;
    return NULL;
}

/* Call fn on each comma-separated token of the value, trimmed; stops when
 * fn returns true and returns true then. */
static bool each_token(http_span v, bool (*fn)(http_span, void *), void *arg)
{
    size_t i = 0;
    while (i <= v.n) {
        size_t j = i;
        while (j < v.n && v.p[j] != ',')
            j++;
        size_t a = i, b = j;
        while (a < b && (v.p[a] == ' ' || v.p[a] == '\t'))
            a++;
        while (b > a && (v.p[b - 1] == ' ' || v.p[b - 1] == '\t'))
            b--;
        if (b > a && fn((http_span){v.p + a, b - a}, arg))
            return true;
        i = j + 1;
    }
    return false;
}

static bool token_is(http_span tok, void *arg)
{
    return http_span_is(tok, arg);
}

bool http_header_has_token(const http_head *h, const char *name, const char *token)
{
    for (size_t i = 0; i < h->nheaders; i++)
        if (http_span_is(h->headers[i].name, name) && each_token(h->headers[i].value, token_is, (void *)token))
            return true;
    return false;
}

static int parse_port(const char *p, size_t n, uint16_t *port)
{
    if (n == 0 || n > 5)
        return -1;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    if (v == 0 || v > 65535)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

/* host[:port] or [v6][:port]; default_port 0: the port is required. */
static int parse_authority(http_span a, uint16_t default_port, http_target *t, const char **why)
{
    const char *host = a.p;
    size_t hostlen;
    const char *rest;
    if (a.n && a.p[0] == '[') {
        const char *close = memchr(a.p, ']', a.n);
        if (!close) {
            *why = "an IPv6 address in the target has no closing bracket";
            return -1;
        }
        hostlen = (size_t)(close - a.p) + 1;
        rest = close + 1;
        if (rest < a.p + a.n && *rest != ':') {
            *why = "something other than :port follows the bracketed address";
            return -1;
        }
    } else {
        const char *colon = NULL;
        for (size_t i = 0; i < a.n; i++)
            if (a.p[i] == ':') {
                if (colon) {
                    *why = "an IPv6 address in the target must be in brackets";
                    return -1;
                }
                colon = a.p + i;
            }
        hostlen = colon ? (size_t)(colon - a.p) : a.n;
        rest = a.p + hostlen;
    }
    size_t restlen = (size_t)(a.p + a.n - rest);
    if (restlen == 0 || (restlen == 1 && default_port)) {
        if (!default_port) {
            *why = "the target has no port (host:port is required)";
            return -1;
        }
        t->port = default_port;
    } else if (parse_port(rest + 1, restlen - 1, &t->port) < 0) {
        *why = "the port is not a number from 1 to 65535";
        return -1;
    }
    if (netaddr_normalize_host(host, hostlen, t->host, sizeof t->host, why) < 0)
        return -1;
    t->authority = a;
    return 0;
}

int http_parse_connect_target(http_span target, http_target *t, const char **why)
{
    memset(t, 0, sizeof *t);
    if (memchr(target.p, '/', target.n) || memchr(target.p, '@', target.n)) {
        *why = "CONNECT takes host:port, not a URL";
        return -1;
    }
    return parse_authority(target, 0, t, why);
}

int http_parse_absolute_target(http_span target, http_target *t, const char **why)
{
    memset(t, 0, sizeof *t);
    static const char http[] = "http://";
    if (target.n >= 8 && http_span_is((http_span){target.p, 8}, "https://")) {
        *why = "an https:// URL goes through CONNECT (set HTTPS_PROXY, not a plain request to the proxy)";
        return -1;
    }
    if (target.n < sizeof http - 1 || !http_span_is((http_span){target.p, sizeof http - 1}, http)) {
        *why = target.n && target.p[0] == '/' ? "a proxy request names the whole URL (GET http://host/path), not "
                                                "only its path"
                                              : "only http:// URLs are forwarded";
        return -1;
    }
    size_t a = sizeof http - 1, p = a;
    while (p < target.n && target.p[p] != '/' && target.p[p] != '?' && target.p[p] != '#')
        p++;
    if (memchr(target.p + a, '@', p - a)) {
        *why = "user information (user@) in the URL is not accepted";
        return -1;
    }
    for (size_t i = p; i < target.n; i++)
        if (target.p[i] == '#') {
            *why = "a fragment (#...) is never sent in a request";
            return -1;
        }
    if (p == a) {
        *why = "the URL has no host";
        return -1;
    }
    if (parse_authority((http_span){target.p + a, p - a}, 80, t, why) < 0)
        return -1;
    t->path = (http_span){target.p + p, target.n - p};
    return 0;
}

/* Content-Length: digits only, every one the same.  1 found, 0 none. */
static int content_length(const http_head *h, uint64_t *out, const char **why)
{
    int found = 0;
    for (size_t i = 0; i < h->nheaders; i++) {
        if (!http_span_is(h->headers[i].name, "Content-Length"))
            continue;
        http_span v = h->headers[i].value;
        uint64_t n = 0;
        if (v.n == 0 || v.n > 18) {
            *why = "Content-Length is empty or too large";
            return -1;
        }
        for (size_t j = 0; j < v.n; j++) {
            if (v.p[j] < '0' || v.p[j] > '9') {
                *why = "Content-Length is not a number";
                return -1;
            }
            n = n * 10 + (uint64_t)(v.p[j] - '0');
        }
        if (found && n != *out) {
            *why = "two different Content-Length values";
            return -1;
        }
        *out = n;
        found = 1;
    }
    return found;
}

typedef struct te_scan {
    size_t count;
    bool chunked_last, chunked_before;
} te_scan;

static bool te_token(http_span tok, void *arg)
{
    te_scan *s = arg;
    if (s->chunked_last)
        s->chunked_before = true;
    s->chunked_last = http_span_is(tok, "chunked");
    s->count++;
    return false;
}

/* Transfer-Encoding: 0 none, 1 chunked last (and only there), 2 other. */
static int transfer_encoding(const http_head *h)
{
    te_scan s = {0};
    for (size_t i = 0; i < h->nheaders; i++)
        if (http_span_is(h->headers[i].name, "Transfer-Encoding")) {
            s.count++; /* an empty one counts as present */
            each_token(h->headers[i].value, te_token, &s);
        }
    if (s.count == 0)
        return 0;
    return s.chunked_last && !s.chunked_before ? 1 : 2;
}

int http_request_framing(const http_head *h, http_framing *f, const char **why)
{
    uint64_t n = 0;
    int cl = content_length(h, &n, why);
    if (cl < 0)
        return -1;
    int te = transfer_encoding(h);
    f->length = 0;
    if (te && cl) {
        *why = "both Content-Length and Transfer-Encoding";
        return -1;
    }
    if (te == 2) {
        *why = "a Transfer-Encoding that does not end in chunked";
        return -1;
    }
    if (te == 1) {
        f->kind = HTTP_BODY_CHUNKED;
    } else if (cl && n > 0) {
        f->kind = HTTP_BODY_LENGTH;
        f->length = n;
    } else {
        f->kind = HTTP_BODY_NONE;
    }
    return 0;
}

int http_response_framing(const http_head *h, bool head_request, http_framing *f, const char **why)
{
    f->length = 0;
    if (head_request || h->status / 100 == 1 || h->status == 204 || h->status == 304) {
        f->kind = HTTP_BODY_NONE;
        return 0;
    }
    uint64_t n = 0;
    int cl = content_length(h, &n, why);
    if (cl < 0)
        return -1;
    int te = transfer_encoding(h);
    if (te && cl) {
        *why = "the response has both Content-Length and Transfer-Encoding";
        return -1;
    }
    if (te == 1) {
        f->kind = HTTP_BODY_CHUNKED;
    } else if (te == 2) {
        f->kind = HTTP_BODY_CLOSE;
    } else if (cl) {
        f->kind = n ? HTTP_BODY_LENGTH : HTTP_BODY_NONE;
        f->length = n;
    } else {
        f->kind = HTTP_BODY_CLOSE;
    }
    return 0;
}

enum {
    CH_SIZE,
    CH_EXT,
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER_START,
    CH_TRAILER,
    CH_TRAILER_LF,
    CH_END_LF,
};

#define CHUNK_LINE_MAX 4096
#define CHUNK_TRAILERS_MAX (16 * 1024)

long http_chunked_feed(http_chunked *c, const char *data, size_t len, bool *done, const char **why)
{
    *done = false;
    size_t i = 0;
    while (i < len) {
        unsigned char ch = (unsigned char)data[i];
        switch (c->state) {
        case CH_SIZE: {
            int d = hex_value(ch);
            if (d >= 0) {
                if (c->remaining > (UINT64_MAX >> 8)) {
                    *why = "a chunk size is too large";
                    return -1;
                }
                c->remaining = c->remaining * 16 + (uint64_t)d;
                c->digits = true;
            } else if (c->digits && (ch == ';' || ch == ' ' || ch == '\t')) {
                c->state = CH_EXT;
            } else if (c->digits && ch == '\r') {
                c->state = CH_SIZE_LF;
            } else if (c->digits && ch == '\n') {
                *why = "a chunk size line does not end in CRLF";
                return -1;
            } else {
                *why = "a chunk size line is not hexadecimal digits";
                return -1;
            }
            if (++c->line > CHUNK_LINE_MAX) {
                *why = "a chunk size line is too long";
                return -1;
            }
            i++;
            break;
        }
        case CH_EXT:
            if (ch == '\r')
                c->state = CH_SIZE_LF;
            else if (!is_field_byte(ch)) {
                *why = "a chunk extension holds a control character";
                return -1;
            }
            if (++c->line > CHUNK_LINE_MAX) {
                *why = "a chunk extension is too long";
                return -1;
            }
            i++;
            break;
        case CH_SIZE_LF:
            if (ch != '\n') {
                *why = "a chunk size line does not end in CRLF";
                return -1;
            }
            c->line = 0;
            c->digits = false;
            c->state = c->remaining ? CH_DATA : CH_TRAILER_START;
            i++;
            break;
        case CH_DATA: {
            size_t take = len - i;
            if ((uint64_t)take > c->remaining)
                take = (size_t)c->remaining;
            c->remaining -= take;
            i += take;
            if (c->remaining == 0)
                c->state = CH_DATA_CR;
            break;
        }
        case CH_DATA_CR:
        case CH_DATA_LF:
            if (ch != (c->state == CH_DATA_CR ? '\r' : '\n')) {
                *why = "a chunk's data is not followed by CRLF";
                return -1;
            }
            c->state = c->state == CH_DATA_CR ? CH_DATA_LF : CH_SIZE;
            i++;
            break;
        case CH_TRAILER_START:
        case CH_TRAILER:
            if (ch == '\r') {
                c->state = c->state == CH_TRAILER_START ? CH_END_LF : CH_TRAILER_LF;
            } else if (ch == '\n') {
                *why = "a trailer line does not end in CRLF";
                return -1;
            } else if (!is_field_byte(ch) || (c->state == CH_TRAILER_START && (ch == ' ' || ch == '\t'))) {
                *why = "a trailer line holds a control character or is folded";
                return -1;
            } else {
                c->state = CH_TRAILER;
            }
            if (++c->trailers > CHUNK_TRAILERS_MAX) {
                *why = "the trailers are too long";
                return -1;
            }
            i++;
            break;
        case CH_TRAILER_LF:
        case CH_END_LF:
            if (ch != '\n') {
                *why = "a trailer line does not end in CRLF";
                return -1;
            }
            i++;
            if (c->state == CH_END_LF) {
                *done = true;
                return (long)i;
            }
            c->state = CH_TRAILER_START;
            break;
        default:
            *why = "the chunked body already ended";
            return -1;
        }
    }
    return (long)i;
}

/* Headers a proxy never passes on (RFC 9110 section 7.6.1), and those a
 * client cannot have removed by naming them in Connection: the ones that
 * frame the message and the host the proxy decided on. */
static bool hop_by_hop(http_span name)
{
    static const char *const names[] = {"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization",
                                        "Proxy-Authenticate", "TE", "Trailer", "Upgrade", "Host"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (http_span_is(name, names[i]))
            return true;
    return name.n >= 6 && http_span_is((http_span){name.p, 6}, "Proxy-");
}

static bool never_removable(http_span name)
{
    return http_span_is(name, "Content-Length") || http_span_is(name, "Transfer-Encoding") ||
           http_span_is(name, "Host");
}

static bool same_token(http_span tok, void *arg)
{
    http_span *name = arg;
    if (tok.n != name->n)
        return false;
    for (size_t i = 0; i < tok.n; i++)
        if (lower(tok.p[i]) != lower(name->p[i]))
            return false;
    return true;
}

static bool named_in_connection(const http_head *h, http_span name)
{
    if (never_removable(name))
        return false;
    for (size_t i = 0; i < h->nheaders; i++)
        if (http_span_is(h->headers[i].name, "Connection") && each_token(h->headers[i].value, same_token, &name))
            return true;
    return false;
}

void http_forward_head(const http_head *h, const http_target *t, bool close, buf_t *out)
{
    buf_append(out, h->method.p, h->method.n);
    buf_putc(out, ' ');
    if (t->path.n == 0 || t->path.p[0] != '/')
        buf_putc(out, '/');
    buf_append(out, t->path.p, t->path.n);
    buf_printf(out, " HTTP/1.%d\r\nHost: ", h->version_minor);
    buf_append(out, t->authority.p, t->authority.n);
    buf_puts(out, "\r\n");
    for (size_t i = 0; i < h->nheaders; i++) {
        const http_header *x = &h->headers[i];
        if (hop_by_hop(x->name) || named_in_connection(h, x->name))
            continue;
        buf_append(out, x->name.p, x->name.n);
        buf_puts(out, ": ");
        buf_append(out, x->value.p, x->value.n);
        buf_puts(out, "\r\n");
    }
    if (close)
        buf_puts(out, "Connection: close\r\n");
    buf_puts(out, "\r\n");
}
