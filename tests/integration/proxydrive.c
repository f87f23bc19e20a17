/*
 * proxydrive - the network proxy's engine (src/net/proxy.c) alone in a libuv
 * loop, for tests/integration/test_proxy.py and tests/bench/bench_proxy.py.
 * The proxy is the server's; its decide hook is played here by whoever
 * drives this program, through JSON lines:
 *
 *   proxydrive [--max-per-session N] [--header-timeout MS] [--idle-timeout MS]
 *              [--max-header-bytes N] [--max-buffered N] [--connect-timeout MS]
 *              [--copy-tunnels 1] [--listen http|socks5:SESSION:FD]...
 *              [--connection http|socks5:SESSION:FD]...
 *
 * The listening sockets (and connections accepted elsewhere, as an init
 * that passes on each connection would) are made by the caller and
 * inherited (FD).
 * stdout, one event a line:
 *   {"event":"ready"}
 *   {"event":"decide","id":N,"session":S,"host":H,"port":P,"protocol":X[,"auto":V]}
 *   {"event":"cancelled","id":N}
 *   {"event":"log","session":S,"record":{...}}      (a connection's record)
 *   {"event":"open","session":S,"open":N}           (open_count)
 *   {"event":"pong","id":N,"open":{"S":N,...}}      (answer to ping)
 * stdin, one command a line:
 *   {"cmd":"decide","id":N,"verdict":"allow"|"explicit"|"deny"[,"reason":R]}
 *   {"cmd":"policy","host":H|"*","verdict":V[,"reason":R][,"defer":true]}
 *        answer requests for H (or any host) at once (defer: from the next
 *        loop iteration) instead of asking
 *   {"cmd":"listen","kind":"http"|"socks5","session":S,"fd":FD}
 *   {"cmd":"session_ended","session":S}
 *   {"cmd":"ping","id":N}
 *   {"cmd":"quiet"}      no more decide, log and open events (a benchmark's)
 *   {"cmd":"shutdown"}   (also at EOF): proxy_shutdown, the loop runs dry,
 *                        proxy_free, exit 0, so the sanitizers see every leak
 */
#include "config.h"

#include "net/proxy.h"
#include "base/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

typedef struct pending_entry {
    long id;
    proxy_pending *p;
    struct pending_entry *next;
} pending_entry;

typedef struct policy {
    char *host; /* or "*" */
    proxy_verdict verdict;
    char *reason;
    bool defer;
    struct policy *next;
} policy;

typedef struct deferred {
    uv_idle_t idle;
    proxy_pending *p;
    long id;
    proxy_verdict verdict;
    char *reason;
} deferred;

static uv_loop_t loop;
static proxy_t *px;
static uv_pipe_t in_pipe;
static buf_t in_buf;
static pending_entry *pendings;
static policy *policies;
static long next_id = 1;
static bool shutting_down;
static bool quiet;
static json_t *open_counts;

static void emit(json_t *o)
{
    const char *ev = json_string_value(json_object_get(o, "event"));
    if (quiet && ev && strcmp(ev, "pong") != 0) {
        json_decref(o);
        return;
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s)
        return;
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    free(s);
}

static int parse_verdict(const char *s, proxy_verdict *v)
{
    if (!s)
        return -1;
    if (!strcmp(s, "allow"))
        *v = PROXY_ALLOW;
    else if (!strcmp(s, "explicit"))
        *v = PROXY_ALLOW_EXPLICIT;
    else if (!strcmp(s, "deny"))
        *v = PROXY_DENY;
    else
        return -1;
    return 0;
}

static const char *verdict_text(proxy_verdict v)
{
    return v == PROXY_ALLOW ? "allow" : v == PROXY_ALLOW_EXPLICIT ? "explicit" : "deny";
}

static void forget(proxy_pending *p)
{
    for (pending_entry **e = &pendings; *e; e = &(*e)->next)
        if ((*e)->p == p) {
            pending_entry *x = *e;
            *e = x->next;
            free(x);
            return;
        }
}

static void on_deferred_closed(uv_handle_t *h)
{
    deferred *d = h->data;
    free(d->reason);
    free(d);
}

static void on_deferred(uv_idle_t *h)
{
    deferred *d = h->data;
    uv_idle_stop(h);
    if (d->p) {
        forget(d->p);
        proxy_decided(d->p, d->verdict, d->reason);
    }
    uv_close((uv_handle_t *)h, on_deferred_closed);
}

static void hook_decide(void *user, proxy_pending *p, const proxy_request *r)
{
    (void)user;
    long id = next_id++;
    policy *match = NULL; /* the latest for this host, else the latest for "*" */
    for (policy *q = policies; q && !match; q = q->next)
        if (!strcmp(q->host, r->host))
            match = q;
    for (policy *q = policies; q && !match; q = q->next)
        if (!strcmp(q->host, "*"))
            match = q;
    json_t *ev = json_pack("{s:s, s:I, s:i, s:s, s:i, s:s}", "event", "decide", "id", (json_int_t)id, "session",
                           r->session, "host", r->host, "port", (int)r->port, "protocol",
                           rule_net_proto_name(r->proto));
    if (match)
        json_object_set_new(ev, "auto", json_string(verdict_text(match->verdict)));
    emit(ev);
    pending_entry *e = xcalloc(1, sizeof *e);
    e->id = id;
    e->p = p;
    e->next = pendings;
    pendings = e;
    if (!match)
        return;
    if (match->defer) {
        deferred *d = xcalloc(1, sizeof *d);
        d->p = p;
        d->id = id;
        d->verdict = match->verdict;
        d->reason = match->reason ? xstrdup(match->reason) : NULL;
        uv_idle_init(&loop, &d->idle);
        d->idle.data = d;
        uv_idle_start(&d->idle, on_deferred);
        return;
    }
    forget(p);
    proxy_decided(p, match->verdict, match->reason);
}

/* A deferred answer to a request that was cancelled must not be given. */
static void drop_deferred(uv_handle_t *h, void *arg)
{
    if (h->type != UV_IDLE || uv_is_closing(h))
        return;
    deferred *d = h->data;
    if (d && d->p == arg)
        d->p = NULL;
}

static void hook_cancelled(void *user, proxy_pending *p)
{
    (void)user;
    for (pending_entry *e = pendings; e; e = e->next)
        if (e->p == p) {
            emit(json_pack("{s:s, s:I}", "event", "cancelled", "id", (json_int_t)e->id));
            break;
        }
    forget(p);
    uv_walk(&loop, drop_deferred, p);
}

static void hook_log(void *user, int session, json_t *record)
{
    (void)user;
    emit(json_pack("{s:s, s:i, s:o}", "event", "log", "session", session, "record", record));
}

static void hook_open_count(void *user, int session, int open)
{
    (void)user;
    char key[32];
    snprintf(key, sizeof key, "%d", session);
    json_object_set_new(open_counts, key, json_integer(open));
    emit(json_pack("{s:s, s:i, s:i}", "event", "open", "session", session, "open", open));
}

static int add_listener(const char *kind, int session, int fd, bool connection)
{
    char err[256];
    proxy_listener_kind k = !strcmp(kind, "socks5") ? PROXY_LISTEN_SOCKS5 : PROXY_LISTEN_HTTP;
    if (strcmp(kind, "socks5") && strcmp(kind, "http")) {
        fprintf(stderr, "proxydrive: listener kind '%s' is not http or socks5\n", kind);
        return -1;
    }
    int r = connection ? proxy_add_connection(px, session, fd, k, err, sizeof err)
                       : proxy_add_listener(px, session, 0, fd, k, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "proxydrive: %s\n", err);
        return -1;
    }
    return 0;
}

static void on_pipe_closed(uv_handle_t *h)
{
    (void)h;
}

static void begin_shutdown(void)
{
    if (shutting_down)
        return;
    shutting_down = true;
    proxy_shutdown(px);
    if (!uv_is_closing((uv_handle_t *)&in_pipe))
        uv_close((uv_handle_t *)&in_pipe, on_pipe_closed);
}

static void command(const char *line, size_t len)
{
    json_error_t jerr;
    json_t *m = json_loadb(line, len, 0, &jerr);
    const char *cmd = json_string_value(json_object_get(m, "cmd"));
    if (!cmd) {
        fprintf(stderr, "proxydrive: a command line is not JSON with \"cmd\": %.*s\n", (int)len, line);
        json_decref(m);
        return;
    }
    if (!strcmp(cmd, "decide")) {
        long id = (long)json_integer_value(json_object_get(m, "id"));
        proxy_verdict v;
        if (parse_verdict(json_string_value(json_object_get(m, "verdict")), &v) < 0) {
            fprintf(stderr, "proxydrive: decide %ld: verdict is not allow, explicit or deny\n", id);
        } else {
            for (pending_entry *e = pendings; e; e = e->next)
                if (e->id == id) {
                    proxy_pending *p = e->p;
                    forget(p);
                    proxy_decided(p, v, json_string_value(json_object_get(m, "reason")));
                    break;
                }
        }
    } else if (!strcmp(cmd, "policy")) {
        policy *q = xcalloc(1, sizeof *q);
        const char *host = json_string_value(json_object_get(m, "host"));
        const char *reason = json_string_value(json_object_get(m, "reason"));
        if (!host || parse_verdict(json_string_value(json_object_get(m, "verdict")), &q->verdict) < 0) {
            fprintf(stderr, "proxydrive: policy needs host and verdict\n");
            free(q);
        } else {
            q->host = xstrdup(host);
            q->reason = reason ? xstrdup(reason) : NULL;
            q->defer = json_is_true(json_object_get(m, "defer"));
            q->next = policies;
            policies = q;
        }
    } else if (!strcmp(cmd, "listen")) {
        const char *kind = json_string_value(json_object_get(m, "kind"));
        add_listener(kind ? kind : "?", (int)json_integer_value(json_object_get(m, "session")),
                     (int)json_integer_value(json_object_get(m, "fd")), false);
    } else if (!strcmp(cmd, "session_ended")) {
        proxy_session_ended(px, (int)json_integer_value(json_object_get(m, "session")));
    } else if (!strcmp(cmd, "ping")) {
        emit(json_pack("{s:s, s:O, s:O}", "event", "pong", "id", json_object_get(m, "id"), "open", open_counts));
    } else if (!strcmp(cmd, "quiet")) {
        quiet = true;
    } else if (!strcmp(cmd, "shutdown")) {
        begin_shutdown();
    } else {
        fprintf(stderr, "proxydrive: unknown command '%s'\n", cmd);
    }
    json_decref(m);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    buf_reserve(&in_buf, 4096);
    b->base = in_buf.data + in_buf.len;
    b->len = 4096;
}

static void on_stdin(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    (void)s;
    (void)b;
    if (n < 0) {
        begin_shutdown();
        return;
    }
    in_buf.len += (size_t)n;
    char *nl;
    while (!shutting_down && (nl = memchr(in_buf.data, '\n', in_buf.len))) {
        size_t len = (size_t)(nl - in_buf.data);
        command(in_buf.data, len);
        buf_consume(&in_buf, len + 1);
    }
}

static int parse_listen_arg(const char *arg, bool connection)
{
    char kind[16];
    int session, fd;
    if (sscanf(arg, "%15[a-z0-9]:%d:%d", kind, &session, &fd) != 3) {
        fprintf(stderr, "proxydrive: --listen and --connection take KIND:SESSION:FD, not '%s'\n", arg);
        return -1;
    }
    return add_listener(kind, session, fd, connection);
}

int main(int argc, char **argv)
{
    proxy_limits lim = {0};
    uv_loop_init(&loop);
    open_counts = json_object();
    buf_init(&in_buf);
    proxy_hooks hooks = {.decide = hook_decide, .cancelled = hook_cancelled, .log = hook_log,
                         .open_count = hook_open_count};
    /* Limits first: the listeners need the proxy. */
    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long long v = strtoull(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--max-per-session"))
            lim.max_per_session = (size_t)v;
        else if (!strcmp(argv[i], "--header-timeout"))
            lim.header_timeout_ms = v;
        else if (!strcmp(argv[i], "--idle-timeout"))
            lim.idle_timeout_ms = v;
        else if (!strcmp(argv[i], "--max-header-bytes"))
            lim.max_header_bytes = (size_t)v;
        else if (!strcmp(argv[i], "--max-buffered"))
            lim.max_buffered = (size_t)v;
        else if (!strcmp(argv[i], "--connect-timeout"))
            lim.connect_timeout_ms = v;
        else if (!strcmp(argv[i], "--copy-tunnels"))
            lim.copy_tunnels = v != 0;
        else if (strcmp(argv[i], "--listen") != 0 && strcmp(argv[i], "--connection") != 0) {
            fprintf(stderr, "proxydrive: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    px = proxy_new(&loop, &hooks, NULL, &lim);
    for (int i = 1; i + 1 < argc; i += 2)
        if ((!strcmp(argv[i], "--listen") || !strcmp(argv[i], "--connection")) &&
            parse_listen_arg(argv[i + 1], !strcmp(argv[i], "--connection")) < 0)
            return 2;
    uv_pipe_init(&loop, &in_pipe, 0);
    if (uv_pipe_open(&in_pipe, 0) < 0 || uv_read_start((uv_stream_t *)&in_pipe, on_alloc, on_stdin) < 0) {
        fprintf(stderr, "proxydrive: stdin must be a pipe\n");
        return 2;
    }
    emit(json_pack("{s:s}", "event", "ready"));
    uv_run(&loop, UV_RUN_DEFAULT);
    proxy_free(px);
    uv_run(&loop, UV_RUN_DEFAULT);
    while (pendings)
        forget(pendings->p);
    while (policies) {
        policy *q = policies;
        policies = q->next;
        free(q->host);
        free(q->reason);
        free(q);
    }
    buf_free(&in_buf);
    json_decref(open_counts);
    int r = uv_loop_close(&loop);
    if (r != 0) {
        fprintf(stderr, "proxydrive: the loop still has handles at exit: %s\n", uv_strerror(r));
        return 1;
    }
    return 0;
}
