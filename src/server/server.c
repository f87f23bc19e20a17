/*
 * server.c - the server's event loop: start-up (one server per socket,
 * enforced with a lock file), the admin socket and its connections (peer
 * uid checked with SO_PEERCRED, messages framed and capped by proto.c),
 * reaping, and shutdown on SIGTERM.  Sessions themselves (start, plan,
 * store, hooks) are in server_sessions.c.
 */
#include "config.h"

#include "server/server.h"
#include "server/server_int.h"
#include "snap/retention_server.h"
#include "snap/snap_reader.h"
#include "snap/snap_server.h"
#include "gate/escalation.h"
#include "gate/gate_network.h"
#include "gate/gate_server.h"
#include "base/paths.h"
#include "server/sesschan.h"
#include "server/shellhook.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHUTDOWN_GRACE_MS 5000
#define CONN_READ_MAX (64u * 1024u)

/* ---- logging -------------------------------------------------------------- */

void server_log(const char *fmt, ...)
{
    char when[32];
    iso_time(when, wall_sec());
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s corral[%d]: ", when, (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

/* ---- connections ---------------------------------------------------------- */

typedef struct write_req {
    uv_write_t req;
    char *data;
} write_req;

static void on_conn_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    conn_t *c = req->data;
    free(w->data);
    free(w);
    (void)status;
    if (!c->closing && uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) < (1u << 20)) {
        waiter_conn_drained(c);
        watch_conn_drained(c);
    }
    conn_unref(c);
}

void conn_send(conn_t *c, json_t *msg)
{
    size_t len;
    char *line = proto_dump(msg, &len);
    conn_send_line(c, line, len);
}

void conn_send_line(conn_t *c, char *line, size_t len)
{
    if (c->closing) {
        free(line);
        return;
    }
    write_req *w = xmalloc(sizeof *w);
    w->data = line;
    w->req.data = c;
    uv_buf_t b = uv_buf_init(line, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_conn_write) < 0) {
        free(line);
        free(w);
        return;
    }
    c->refs++;
}

void conn_reply_error(conn_t *c, json_t *id, const char *code, const char *message)
{
    conn_send(c, proto_error(id, code, message));
}

void server_broadcast(server_t *srv, json_t *ev)
{
    for (link_t *l = srv->conns.next; l != &srv->conns; l = l->next) {
        conn_t *c = link_entry(l, conn_t, node);
        if (c->subscribed && !c->closing)
            conn_send(c, json_incref(ev));
    }
    json_decref(ev);
}

bool server_someone_can_answer(server_t *srv)
{
    if (srv->conf.approval_timeout_ms)
        return true;
    for (link_t *l = srv->conns.next; l != &srv->conns; l = l->next) {
        conn_t *c = link_entry(l, conn_t, node);
        if (c->subscribed && !c->closing)
            return true;
    }
    return false;
}

static void conn_free(conn_t *c)
{
    gate_cache_free(&c->approved);
    proto_reader_free(&c->rd);
    free(c->client);
    free(c);
}

static void on_conn_closed(uv_handle_t *h)
{
    conn_unref(h->data);
}

void conn_unref(conn_t *c)
{
    if (--c->refs == 0)
        conn_free(c);
}

static void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    link_del(&c->node);
    waiter_conn_closed(c);
    gate_exec_conn_closed(c);
    watch_conn_closed(c);
    uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

static void handle_message(conn_t *c, const char *line, size_t len)
{
    proto_err e;
    json_t *id = NULL;
    json_t *req = proto_parse_request(line, len, &id, &e);
    if (!req) {
        conn_reply_error(c, id, e.code, e.message);
        json_decref(id);
        return;
    }
    dispatch(c, id, req);
    json_decref(id);
    json_decref(req);
}

static void on_conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static char rbuf[CONN_READ_MAX];
    *buf = uv_buf_init(rbuf, sizeof rbuf);
}

static void on_conn_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    conn_t *c = st->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    if (n == 0)
        return;
    proto_reader_feed(&c->rd, buf->base, (size_t)n);
    const char *line;
    size_t len;
    int r;
    c->refs++; /* a handler may close the connection */
    while (!c->closing && (r = proto_reader_next(&c->rd, &line, &len)) != 0) {
        if (r < 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "message longer than %u bytes; it was discarded", PROTO_MAX_MSG);
            conn_reply_error(c, NULL, PERR_TOO_LARGE, msg);
            continue;
        }
        if (len == 0)
            continue; /* blank lines are keep-alives */
        handle_message(c, line, len);
    }
    conn_unref(c);
}

static void on_connection(uv_stream_t *listener, int status)
{
    server_t *srv = listener->data;
    if (status < 0)
        return;
    conn_t *c = xcalloc(1, sizeof *c);
    c->srv = srv;
    c->refs = 1;
    link_init(&c->waiters);
    link_init(&c->watches);
    link_init(&c->gated);
    proto_reader_init(&c->rd, PROTO_MAX_MSG);
    uv_pipe_init(srv->loop, &c->pipe, 0);
    c->pipe.data = c;
    if (uv_accept(listener, (uv_stream_t *)&c->pipe) < 0) {
        uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
        return;
    }
    link_add(&srv->conns, &c->node);
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        server_log("refused a connection: cannot read its credentials: %s", strerror(errno));
        conn_close(c);
        return;
    }
    c->peer_pid = cred.pid;
    if (cred.uid != geteuid()) {
        char msg[160];
        snprintf(msg, sizeof msg, "connection refused: peer uid %u is not the server's uid %u",
                 (unsigned)cred.uid, (unsigned)geteuid());
        server_log("%s (pid %d)", msg, (int)cred.pid);
        conn_reply_error(c, NULL, PERR_FORBIDDEN, msg);
        conn_close(c);
        return;
    }
    if (srv->shutting_down) {
        conn_reply_error(c, NULL, PERR_SHUTTING_DOWN, "the server is shutting down");
        conn_close(c);
        return;
    }
    uv_read_start((uv_stream_t *)&c->pipe, on_conn_alloc, on_conn_read);
}

/* ---- signals and shutdown -------------------------------------------------- */

static void on_sigchld(uv_signal_t *h, int sig)
{
    (void)sig;
    server_t *srv = h->data;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
            session_t *s = &link_entry(l, server_session, node)->base;
            if (s->pid == pid) {
                session_reaped(s, status);
                pid = 0;
                break;
            }
        }
        if (pid && !snap_reader_reaped(pid, status))
            escalation_reaped(srv, pid, status);
    }
}

static void finish_shutdown(server_t *srv)
{
    if (srv->exit_status >= 0)
        return;
    srv->exit_status = 0;
    server_log("shutting down");
    uv_timer_stop(&srv->shutdown_timer);
    while (!link_empty(&srv->conns))
        conn_close(link_entry(srv->conns.next, conn_t, node));
    /* Close every session: recordings and logs are flushed and closed. */
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = &link_entry(l, server_session, node)->base;
        if (s->cast)
            cast_flush(s->cast);
        session_close(s);
    }
    if (!uv_is_closing((uv_handle_t *)&srv->listener))
        uv_close((uv_handle_t *)&srv->listener, NULL);
    uv_close((uv_handle_t *)&srv->sig_term, NULL);
    uv_close((uv_handle_t *)&srv->sig_int, NULL);
    uv_close((uv_handle_t *)&srv->sig_hup, NULL);
    uv_close((uv_handle_t *)&srv->sig_chld, NULL);
    uv_close((uv_handle_t *)&srv->shutdown_timer, NULL);
    uv_close((uv_handle_t *)&srv->notify_timer, NULL);
    sesschan_shutdown(srv);
    gate_network_shutdown(srv);
    gate_server_shutdown(srv);
    snap_server_shutdown(srv);
    retention_server_shutdown(srv);
}

void server_maybe_finish_shutdown(server_t *srv)
{
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = &link_entry(l, server_session, node)->base;
        if (!s->finished)
            return;
    }
    finish_shutdown(srv);
}

static void on_shutdown_timeout(uv_timer_t *t)
{
    server_t *srv = t->data;
    /* An init that did not end its tree in time: kill it outright. */
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = &link_entry(l, server_session, node)->base;
        if (s->state == SESSION_RUNNING && s->pid > 0) {
            server_log("session %d did not end in time; killing its init (pid %d)", s->id, (int)s->pid);
            kill(s->pid, SIGKILL);
        }
    }
    finish_shutdown(srv);
}

void server_begin_shutdown(server_t *srv)
{
    if (srv->shutting_down)
        return;
    srv->shutting_down = true;
    server_log("stopping every session");
    /* No new clients from here on. */
    uv_close((uv_handle_t *)&srv->listener, NULL);
    unlink(srv->socket_path);
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = &link_entry(l, server_session, node)->base;
        session_kill(s, "shutdown");
    }
    uv_timer_start(&srv->shutdown_timer, on_shutdown_timeout, SHUTDOWN_GRACE_MS, 0);
    server_maybe_finish_shutdown(srv);
}

static void on_stop_signal(uv_signal_t *h, int sig)
{
    server_t *srv = h->data;
    server_log("received %s", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
    server_begin_shutdown(srv);
}

/* ---- start-up ------------------------------------------------------------- */

static void ready_message(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ready_message(int fd, const char *fmt, ...)
{
    if (fd < 0)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    write_all(fd, line, (size_t)n);
}

/* Take the per-socket lock; -1 with err naming the running server. */
static int take_lock(server_t *srv, char *err, size_t errlen)
{
    int fd = open(srv->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", srv->lock_path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        int pid = atoi(buf);
        if (pid > 0)
            snprintf(err, errlen, "a server is already running on %s (pid %d)", srv->socket_path, pid);
        else
            snprintf(err, errlen, "a server is already running on %s", srv->socket_path);
        close(fd);
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
        snprintf(err, errlen, "cannot write %s: %s", srv->lock_path, strerror(errno));
        close(fd);
        return -1;
    }
    srv->lock_fd = fd;
    return 0;
}

static int listen_socket(server_t *srv, char *err, size_t errlen)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t plen = strlen(srv->socket_path);
    if (plen >= sizeof addr.sun_path) {
        snprintf(err, errlen,
                 "socket path %s is %zu bytes; the limit is %zu: set XDG_RUNTIME_DIR to a shorter directory",
                 srv->socket_path, plen, sizeof addr.sun_path - 1);
        return -1;
    }
    memcpy(addr.sun_path, srv->socket_path, plen + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a socket: %s", strerror(errno));
        return -1;
    }
    /* We hold the lock, so a socket file left here is stale. */
    unlink(srv->socket_path);
    mode_t old = umask(0077);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
    umask(old);
    if (rc < 0 || listen(fd, 128) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", srv->socket_path, strerror(errno));
        close(fd);
        return -1;
    }
    uv_pipe_init(srv->loop, &srv->listener, 0);
    srv->listener.data = srv;
    if (uv_pipe_open(&srv->listener, fd) < 0 ||
        uv_listen((uv_stream_t *)&srv->listener, 128, on_connection) < 0) {
        snprintf(err, errlen, "cannot listen on %s", srv->socket_path);
        return -1;
    }
    return 0;
}

static void init_signal(server_t *srv, uv_signal_t *h, int sig, uv_signal_cb cb)
{
    uv_signal_init(srv->loop, h);
    h->data = srv;
    uv_signal_start(h, cb, sig);
}

/* The exec policy (its settings, rules, approval queue and log) and the
 * sessions' tools. */
static void start_policy(server_t *srv)
{
    gate_server_start(srv);
    gate_network_start(srv);
    snap_server_start(srv);
    retention_server_start(srv);
    char err[512];
    /* Sessions' tools: corral itself (corral escalate, the hooks' checks)
     * and the shell hooks, next to the socket. */
    char exe[PATH_MAX];
    if (realpath("/proc/self/exe", exe))
        srv->exe = xstrdup(exe);
    else
        server_log("sessions get no corral escalate: cannot find corral's executable: %s", strerror(errno));
    char *sockdir = xstrdup(srv->socket_path);
    *strrchr(sockdir, '/') = '\0';
    srv->hook_dir = xasprintf("%s/shell", sockdir);
    free(sockdir);
    if (shellhook_install(srv->hook_dir, err, sizeof err) < 0) {
        server_log("sessions get no shell hook: %s", err);
        free(srv->hook_dir);
        srv->hook_dir = NULL;
    }
}

/* Start-up failed: say so (log and ready pipe), free what was made. */
static int start_failed(server_t *srv, int ready_fd, const char *err)
{
    server_log("%s", err);
    ready_message(ready_fd, "error %s", err);
    free(srv->socket_path);
    free(srv->lock_path);
    free(srv->state_dir);
    conf_free(&srv->conf);
    return 1;
}

int server_run(int ready_fd)
{
    server_t srv_storage, *srv = &srv_storage;
    memset(srv, 0, sizeof *srv);
    srv->lock_fd = -1;
    srv->exit_status = -1;
    link_init(&srv->sessions);
    link_init(&srv->conns);
    link_init(&srv->tickets);
    link_init(&srv->escalations);
    store_init(&srv->store);
    if (getenv("CORRAL_SEQUENTIAL_IDS"))
        srv->store.sequential_ids = true; /* deterministic ids for tests */
    signal(SIGPIPE, SIG_IGN);

    char err[1024];
    conf_defaults(&srv->conf);
    char *confdir = paths_config_dir();
    char *confpath = xasprintf("%s/config", confdir);
    free(confdir);
    int rc = conf_load(&srv->conf, confpath, err, sizeof err);
    free(confpath);
    if (rc < 0)
        return start_failed(srv, ready_fd, err);
    srv->socket_path = paths_socket(err, sizeof err);
    if (!srv->socket_path)
        return start_failed(srv, ready_fd, err);
    srv->lock_path = xasprintf("%.*s.lock", (int)(strlen(srv->socket_path) - 5), srv->socket_path);
    srv->state_dir = paths_state_dir();
    rc = mkdir_p(srv->state_dir, 0700);
    if (rc < 0) {
        snprintf(err, sizeof err, "cannot create %s: %s", srv->state_dir, strerror(-rc));
        return start_failed(srv, ready_fd, err);
    }
    if (take_lock(srv, err, sizeof err) < 0)
        return start_failed(srv, ready_fd, err);
    uv_loop_t loop;
    uv_loop_init(&loop);
    srv->loop = &loop;
    if (listen_socket(srv, err, sizeof err) < 0)
        return start_failed(srv, ready_fd, err); /* the process ends: the loop with it */
    init_signal(srv, &srv->sig_term, SIGTERM, on_stop_signal);
    init_signal(srv, &srv->sig_int, SIGINT, on_stop_signal);
    init_signal(srv, &srv->sig_hup, SIGHUP, on_stop_signal);
    init_signal(srv, &srv->sig_chld, SIGCHLD, on_sigchld);
    uv_timer_init(srv->loop, &srv->shutdown_timer);
    srv->shutdown_timer.data = srv;
    uv_timer_init(srv->loop, &srv->notify_timer);
    srv->notify_timer.data = srv;
    start_policy(srv);

    server_log("listening on %s", srv->socket_path);
    ready_message(ready_fd, "ok %d", (int)getpid());
    if (ready_fd >= 0)
        close(ready_fd);

    uv_run(srv->loop, UV_RUN_DEFAULT);

    uv_loop_close(srv->loop);
    unlink(srv->socket_path);
    unlink(srv->lock_path);
    /* The lock fd stays open until the process ends: `server --stop` waits
     * for the lock to know the server is gone. */
    store_free(&srv->store);
    free(srv->socket_path);
    free(srv->lock_path);
    free(srv->state_dir);
    free(srv->exe);
    free(srv->hook_dir);
    conf_free(&srv->conf);
    if (srv->proxy)
        proxy_free(srv->proxy);
    server_log("stopped");
    return srv->exit_status < 0 ? 0 : srv->exit_status;
}
