/*
 * proxy_int.h - the network proxy's insides, shared by proxy.c (listeners,
 * connections, decisions, resolving, connecting, tunnels, refusals and
 * records) and proxy_forward.c (absolute-form HTTP exchanges on a kept-
 * alive client connection).  Nothing outside these two includes it.
 *
 * Included only in src/net/.
 */
#ifndef CORRAL_PROXY_INT_H
#define CORRAL_PROXY_INT_H

#include "net/proxy.h"
#include "net/proxy_http.h"
#include "net/proxy_pump.h"
#include "base/util.h"

#include <netinet/in.h>

/* The two sides of a connection, and the direction bytes go. */
enum { SIDE_CLIENT = 0, SIDE_UPSTREAM = 1 };

typedef enum conn_mode {
    MODE_HTTP,    /* an HTTP listener's connection before its first request is known */
    MODE_CONNECT, /* HTTP CONNECT: a tunnel once connected */
    MODE_FORWARD, /* absolute-form HTTP requests, one exchange after another */
    MODE_SOCKS,   /* SOCKS5: a tunnel once connected */
} conn_mode;

typedef enum conn_phase {
    PH_HEAD,       /* reading a request head (or SOCKS messages) */
    PH_DECIDING,   /* the decide hook has the request */
    PH_RESOLVING,  /* uv_getaddrinfo on the thread pool */
    PH_CONNECTING, /* trying the checked addresses in order */
    PH_RELAY,      /* tunnel bytes, or a forwarded exchange */
    PH_DRAINING,   /* all was said (a refusal, the last response): reading until the client closes */
    PH_CLOSING,
} conn_phase;

#define PROXY_MAX_ADDRS 16

struct proxy_pending {
    struct pconn *c;
};

/* One exchange of absolute-form HTTP (proxy_forward.c's state). */
typedef struct fwd_state {
    enum { REQ_BODY, REQ_DONE } req;
    enum { RESP_HEAD, RESP_BODY, RESP_DONE } resp;
    http_framing req_framing, resp_framing;
    http_chunked req_chunked, resp_chunked;
    uint64_t req_left, resp_left;
    bool head_request;   /* HEAD: the response has no body */
    bool client_close;   /* the client connection ends after this exchange */
    bool upstream_close; /* the upstream connection is not kept for another request */
    bool upstream_idle;  /* connected with no exchange on it: kept for the same host and port */
    char up_host[NETADDR_HOST_MAX + 1]; /* what the upstream connection is to */
    uint16_t up_port;
    buf_t head;          /* the head to forward, sent once connected */
    size_t resp_scanned; /* http_head_end's progress on the response head */
} fwd_state;

/* What a connection (or one exchange of it) did, for its record. */
typedef struct conn_record {
    bool active;     /* something to log */
    bool has_target; /* host, port and protocol are known */
    uint64_t start_ms;
    bool decided;
    proxy_verdict verdict;
    char *reason;  /* the decider's, on a deny */
    char *message; /* what the client was told on a refusal */
    const char *error; /* the X-Corral-Error code of a refusal */
    char address[64];  /* where it connected */
    uint64_t to_server, to_client;
    char method[16]; /* HTTP */
    int status;      /* absolute-form HTTP: the final response's status */
} conn_record;

typedef struct pconn {
    proxy_t *px;
    struct pconn *prev, *next;
    int session;
    proxy_listener_kind kind;
    conn_mode mode;
    conn_phase phase;
    bool counted;     /* in the session's open connections */
    bool over_limit;  /* beyond the limit: answered 503 / SOCKS 0x01 once its request is read */
    unsigned handles; /* open libuv handles (client, timer, upstream) */
    bool gai_active;  /* a lookup on the thread pool will call back */

    uv_tcp_t client, upstream;
    pump_t *pump; /* a tunnel's bytes, moved by the kernel (else through client and upstream) */
    bool upstream_open; /* the upstream handle is initialised and not closed */
    bool upstream_connected;
    bool resolve_after_close; /* a new upstream connection waits for the old handle */
    uv_timer_t timer;
    uint64_t phase_start, last_active;
    bool head_started; /* the request head's clock runs (else an idle kept-alive wait) */
    uv_connect_t connect_req;
    uv_getaddrinfo_t gai;
    uv_shutdown_t shutdown_req[2];
    bool shutdown_sent[2], shutdown_done[2];
    bool eof[2];
    int first_eof; /* -1, SIDE_CLIENT or SIDE_UPSTREAM */
    bool reading[2], want_read[2], throttled[2], alloc_block[2];
    const char *drain_reason;

    buf_t in;    /* client bytes not handled yet */
    buf_t up_in; /* upstream bytes not handled yet (absolute-form HTTP) */
    size_t head_scanned;
    bool socks_greeted;

    proxy_pending pending;
    char host[NETADDR_HOST_MAX + 1];
    uint16_t port;
    rule_net_proto proto;
    proxy_verdict verdict;
    /* The last target allowed on this client connection: an answer of
     * "once" is for the connection, so its next request to the same
     * (host, port, protocol), keep-alive HTTP, is not asked again. */
    char allowed_host[NETADDR_HOST_MAX + 1];
    uint16_t allowed_port;
    rule_net_proto allowed_proto;
    proxy_verdict allowed_verdict;
    struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
    int naddrs, next_addr;
    int last_connect_error;
    struct sockaddr_storage connected_addr; /* of the upstream connection */

    fwd_state fwd;
    conn_record rec;
} pconn;

/* proxy.c, for proxy_forward.c */
void pconn_decide(pconn *c, const char *host, uint16_t port, rule_net_proto proto);
void pconn_resolve(pconn *c);
bool pconn_address_allowed(pconn *c, const struct sockaddr *sa);
void pconn_send(pconn *c, int to, const char *p, size_t n);
void pconn_update_reading(pconn *c);
void pconn_set_phase(pconn *c, conn_phase ph);
void pconn_client_input(pconn *c);
void pconn_refuse_http(pconn *c, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void pconn_finish(pconn *c, const char *reason);
void pconn_close(pconn *c, const char *reason);
void pconn_abort(pconn *c, const char *reason);
void pconn_close_upstream(pconn *c);
void pconn_emit_record(pconn *c, const char *close_reason);

/* proxy_forward.c, for proxy.c */
/* A complete request head that is not CONNECT is at the start of c->in:
 * checked, turned into the head to forward, and decided. */
void fwd_request_head(pconn *c, const http_head *h);
/* The decision allowed it: reuse the upstream connection or make one. */
void fwd_allowed(pconn *c);
/* The upstream connection is up: send the head, then the body. */
void fwd_connected(pconn *c);
/* Bytes arrived in c->in (during an exchange) or c->up_in. */
void fwd_client_input(pconn *c);
void fwd_upstream_input(pconn *c);
/* The client or the server closed, or the server's connection failed. */
void fwd_client_eof(pconn *c);
void fwd_upstream_gone(pconn *c, bool failed);
void fwd_free(pconn *c);

#endif
