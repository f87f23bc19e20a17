/*
 * proxy_http.h - the HTTP/1.x the network proxy reads: request and
 * response heads, the proxy's request targets (CONNECT's authority form
 * and the absolute form http://host[:port]/path), where a message body
 * ends (Content-Length, chunked, until close, none), and the origin-form
 * head forwarded upstream.  Pure functions over bytes; nothing here
 * allocates but http_forward_head's buffer.
 *
 * Strict on purpose: the proxy sits between a sandbox and servers that
 * may each be hostile, and a message the two ends could frame differently
 * (bare LF, folded headers, two lengths, Content-Length beside chunked)
 * would let one host's bytes be read as another host's response.  Such a
 * message is refused rather than guessed at.
 *
 * Included only in src/net/.
 */
#ifndef CORRAL_PROXY_HTTP_H
#define CORRAL_PROXY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"
#include "base/util.h"

#define HTTP_MAX_HEADERS 128

typedef struct http_span {
    const char *p;
    size_t n;
} http_span;

typedef struct http_header {
    http_span name, value; /* value without surrounding spaces */
} http_header;

typedef struct http_head {
    /* Request: method, target.  Response: status, reason. */
    http_span method, target;
    int status;
    http_span reason;
    int version_minor; /* HTTP/1.0 or HTTP/1.1 */
    http_header headers[HTTP_MAX_HEADERS];
    size_t nheaders;
    size_t length; /* of the head, the blank line included */
} http_head;

/*
 * The length of the head at the start of data (through the empty line),
 * 0 when it is not complete yet, or -1 when a line ends in a bare LF.
 * *scanned carries the search across calls as data grows (start at 0).
 */
long http_head_end(const char *data, size_t len, size_t *scanned);

/* Parse a complete head (data holds exactly head->length bytes or more).
 * 0, or -1 with *why. */
int http_parse_request(const char *data, size_t len, http_head *h, const char **why);
int http_parse_response(const char *data, size_t len, http_head *h, const char **why);

/* The first header called name (case-insensitive), or NULL. */
const http_span *http_header_get(const http_head *h, const char *name);
/* Whether any header called name lists token (comma-separated,
 * case-insensitive), as in Connection: keep-alive, close. */
bool http_header_has_token(const http_head *h, const char *name, const char *token);
bool http_span_is(http_span s, const char *text); /* case-insensitive equality */

/* A request target for the proxy. */
typedef struct http_target {
    char host[NETADDR_HOST_MAX + 1]; /* normalised (netaddr_normalize_host) */
    uint16_t port;
    http_span authority; /* as the client wrote it (the Host sent upstream) */
    http_span path;      /* origin-form: "/..." ("" when the URL had none: send "/") */
} http_target;

/* CONNECT's target: host:port or [v6]:port, the port required. */
int http_parse_connect_target(http_span target, http_target *t, const char **why);
/* GET http://host[:port]/path: scheme http only, no user info. */
int http_parse_absolute_target(http_span target, http_target *t, const char **why);

typedef enum http_body_kind {
    HTTP_BODY_NONE,    /* no body */
    HTTP_BODY_LENGTH,  /* exactly length bytes */
    HTTP_BODY_CHUNKED, /* chunked transfer coding, through its trailers */
    HTTP_BODY_CLOSE,   /* until the server closes (responses only) */
} http_body_kind;

typedef struct http_framing {
    http_body_kind kind;
    uint64_t length;
} http_framing;

/* Where a request's body ends (RFC 9112 section 6).  -1 with *why for a
 * request the proxy refuses to frame: Content-Length beside
 * Transfer-Encoding, lengths that differ, a coding other than chunked
 * last. */
int http_request_framing(const http_head *h, http_framing *f, const char **why);
/* Where a response's body ends: none after HEAD, for 1xx, 204 and 304;
 * chunked, a length, or until close. */
int http_response_framing(const http_head *h, bool head_request, http_framing *f, const char **why);

/* The chunked transfer coding's framing, fed the body's bytes as they
 * come: each call consumes bytes up to the end of the body. */
typedef struct http_chunked {
    int state;
    uint64_t remaining; /* of the current chunk's data */
    size_t line;        /* bytes of the current size, extension or trailer line */
    size_t trailers;    /* bytes of the trailer section */
    bool digits;        /* the size line has a digit */
} http_chunked;

/* How many bytes of data belong to the body (<= len; fewer only when the
 * body ended inside data, *done then set), or -1 with *why. */
long http_chunked_feed(http_chunked *c, const char *data, size_t len, bool *done, const char **why);

/* Append the head to send upstream for request h to t: the request line
 * in origin form with the client's HTTP version, Host: t->authority, and
 * every header but Host and the hop-by-hop ones (Connection and what it
 * names, Keep-Alive, Proxy-*, TE, Trailer, Upgrade); Connection: close
 * when close. */
void http_forward_head(const http_head *h, const http_target *t, bool close, buf_t *out);

#endif
