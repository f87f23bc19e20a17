/*
 * proxy.h - the server's network proxy for sandboxes in `proxy` mode
 * (docs/network.md): HTTP CONNECT (TLS passes through untouched),
 * absolute-form HTTP, and SOCKS5 CONNECT, spoken on the sandbox's own
 * sockets.  A sandbox's init listens on 127.0.0.1:3128 (HTTP) and :1080
 * (SOCKS5) inside its private network namespace and hands the listening
 * sockets to the server, which accepts on them here.
 *
 * The proxy knows nothing of rules or humans: for each request it asks
 * its decide hook (the gate, gate_network.c) about (host, protocol, port)
 * and waits.  Only after an allow does it resolve the name (so an
 * unapproved name never reaches DNS), refuses private, loopback,
 * link-local, metadata and other special addresses unless the decision
 * says a rule names that host explicitly, and connects to exactly the
 * address it checked (no second lookup).  Every connection is logged
 * through the log hook when it ends.
 *
 * libuv, in the server's loop; never blocks it (names are resolved on
 * libuv's thread pool).
 *
 * Included by src/net/, src/server/ and src/gate/.
 */
#ifndef CORRAL_PROXY_H
#define CORRAL_PROXY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "policy/rules.h"

typedef struct proxy proxy_t;
typedef struct proxy_pending proxy_pending;

/* What one client connection asks for. */
typedef struct proxy_request {
    int session;          /* the session whose listener it came through */
    const char *host;     /* as named, normalised (lower case, no brackets, no trailing dot) */
    uint16_t port;
    rule_net_proto proto; /* RULE_NET_HTTPS for CONNECT, RULE_NET_HTTP for absolute-form, RULE_NET_SOCKS5_TCP */
} proxy_request;

typedef enum proxy_verdict {
    PROXY_ALLOW,          /* connect, refusing special addresses */
    PROXY_ALLOW_EXPLICIT, /* a rule names this host: special addresses too (a local service) */
    PROXY_DENY,
} proxy_verdict;

typedef struct proxy_hooks {
    /* Decide r; answer later (or at once) with proxy_decided(p, ...),
     * exactly once, unless the proxy calls cancelled(p) first (the client
     * went away), after which p must not be used.  The strings of r live
     * until one of the two. */
    void (*decide)(void *user, proxy_pending *p, const proxy_request *r);
    void (*cancelled)(void *user, proxy_pending *p);
    /* A connection ended: its record (docs/formats.md "network"), stolen. */
    void (*log)(void *user, int session, json_t *record);
    /* The number of open connections of session changed (for lists). */
    void (*open_count)(void *user, int session, int open);
} proxy_hooks;

typedef struct proxy_limits {
    size_t max_per_session;      /* open client connections per session (default 256) */
    uint64_t header_timeout_ms;  /* for the whole request head (default 10 s) */
    uint64_t idle_timeout_ms;    /* no byte either way (default 10 min) */
    size_t max_header_bytes;     /* request head (default 16 KiB) */
    size_t max_buffered;         /* per direction before reading stops (default 1 MiB) */
    uint64_t connect_timeout_ms; /* resolving, and each address tried (default 10 s) */
    bool copy_tunnels;           /* tunnels through reads and writes, not splice(2) (a kernel's escape hatch) */
} proxy_limits;

typedef enum proxy_listener_kind { PROXY_LISTEN_HTTP, PROXY_LISTEN_SOCKS5 } proxy_listener_kind;

/* limits: NULL or zero fields for the defaults.  NULL when hooks has no
 * decide (a proxy that cannot ask allows nothing, so there is none). */
proxy_t *proxy_new(uv_loop_t *loop, const proxy_hooks *hooks, void *user, const proxy_limits *limits);
/* Accept connections for session on the listening socket fd (taken, also
 * on failure): a TCP socket, listening.  owner names who handed it over
 * (for proxy_close_listeners; 0 for the session's own sandbox).  0, or -1
 * with err. */
int proxy_add_listener(proxy_t *p, int session, unsigned owner, int fd, proxy_listener_kind kind, char *err,
                       size_t errlen);
/* Close session's listeners that owner handed over (its sandbox is gone);
 * the connections they accepted go on. */
void proxy_close_listeners(proxy_t *p, int session, unsigned owner);
/* Serve one connection that someone else accepted (fd taken, also on
 * failure), as if it had come through a listener of that kind: for an
 * init that accepts inside the sandbox and passes each connection on.
 * 0, or -1 with err. */
int proxy_add_connection(proxy_t *p, int session, int fd, proxy_listener_kind kind, char *err, size_t errlen);
/* The decision for a pending request.  reason (may be NULL) is the
 * record's "reason" (who decided, and how), and on a deny what the client
 * is told (the 403's one-line body, with X-Corral-Error: denied; SOCKS5
 * gets reply 0x02): name how to allow the host.  A second answer, or one after cancelled, is ignored
 * only while the connection still exists: do not give one. */
void proxy_decided(proxy_pending *p, proxy_verdict v, const char *reason);
/* Open client connections of session now. */
size_t proxy_open_count(const proxy_t *p, int session);
/* The session ended: its listeners and connections close. */
void proxy_session_ended(proxy_t *p, int session);
/* Close everything; proxy_free when the loop has run the closes (or
 * before: the proxy is then freed by the last of them). */
void proxy_shutdown(proxy_t *p);
void proxy_free(proxy_t *p);

#endif
