/*
 * server.c - the server's event loop: start-up (one server per socket,
 * enforced with a lock file), the admin socket and its connections (peer
 * uid checked with SO_PEERCRED, messages framed and capped by proto.c),
 * reaping, shutdown on SIGTERM, the config read again on SIGHUP.  Sessions themselves (start, plan,
 * store, hooks) are in server_sessions.c, a connection in conn.c.  The
 * modules it runs (module.h) come in a table from the caller: this file
 * calls none of them by name.
 */
#include "config.h"

#include "server/server.h"
#include "server/server_int.h"
#include "base/paths.h"
#include "net/proxy.h"
#include "server/server_conf.h"
#include "server/shellhook.h"
#include "protocol/uexec.h"
#include "sandbox/plan.h"
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

/* ---- connections ---------------------------------------------------------- */

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

static void on_connection(uv_stream_t *listener, int status)
{
    server_t *srv = listener->data;
    if (status < 0)
        return;
    conn_t *c = conn_new(srv, srv->loop, handle_message);
    if (uv_accept(listener, conn_stream(c)) < 0) {
        conn_close(c);
        return;
    }
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno((uv_handle_t *)conn_stream(c), &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        server_log("refused a connection: cannot read its credentials: %s", strerror(errno));
        conn_close(c);
        return;
    }
    conn_set_peer_pid(c, cred.pid);
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
    conn_start(c);
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
        if (pid && prebuilt_reaped(&srv->prebuilts, pid))
            pid = 0;
        for (const server_module *const *m = srv->modules; pid && *m; m++)
            if ((*m)->reaped && (*m)->reaped(srv, pid, status))
                pid = 0;
    }
}

static void finish_shutdown(server_t *srv)
{
    if (srv->exit_status >= 0)
        return;
    srv->exit_status = 0;
    server_log("shutting down");
    uv_timer_stop(&srv->shutdown_timer);
    conn_close_all();
    prebuilt_pool_close(&srv->prebuilts);
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
    uv_close((uv_handle_t *)&srv->frame_timer, NULL);
    for (const server_module *const *m = srv->modules; *m; m++)
        if ((*m)->shutdown)
            (*m)->shutdown(srv);
    conn_observers_clear();
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
    server_log("received %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    server_begin_shutdown(srv);
}

/* SIGHUP reads the config file again, as daemons do (corral reload asks
 * the same over the socket). */
static void on_sighup(uv_signal_t *h, int sig)
{
    (void)sig;
    server_t *srv = h->data;
    server_log("received SIGHUP: reading the config file again");
    json_decref(server_conf_reload(srv));
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

/* The modules, in their order, and the sessions' tools. */
static void start_modules(server_t *srv)
{
    for (const server_module *const *m = srv->modules; *m; m++) {
        if ((*m)->conns.closed || (*m)->conns.drained)
            conn_observe(&(*m)->conns);
        if ((*m)->start)
            (*m)->start(srv);
    }
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

/* The approval policy of a request that names none: the configuration's
 * (checked when it was loaded). */
/* Start-up failed: say so (log and ready pipe), free what was made. */
static int start_failed(server_t *srv, int ready_fd, const char *err)
{
    server_log("%s", err);
    ready_message(ready_fd, "error %s", err);
    free(srv->socket_path);
    free(srv->lock_path);
    free(srv->state_dir);
    conf_free(&srv->conf);
    server_conf_free(srv);
    return 1;
}

int server_run(int ready_fd, const server_module *const *modules)
{
    server_t srv_storage, *srv = &srv_storage;
    memset(srv, 0, sizeof *srv);
    srv->lock_fd = -1;
    srv->exit_status = -1;
    srv->modules = modules;
    link_init(&srv->sessions);
    store_init(&srv->store);
    if (getenv("CORRAL_SEQUENTIAL_IDS"))
        srv->store.sequential_ids = true; /* deterministic ids for tests */
    signal(SIGPIPE, SIG_IGN);
    sb_plan_keep_listings();
    /* Every session sees SHELL (a sandbox passes the server's on): started
     * from cron, systemd or ssh with a bare environment the server has none,
     * and programs that pick a shell from it guess otherwise (Claude Code
     * tries zsh first).  As tmux does for its panes: the user's shell. */
    const char *shell = paths_user_shell(), *env_shell = getenv("SHELL");
    if (!env_shell || strcmp(env_shell, shell) != 0)
        setenv("SHELL", shell, 1);

    char err[1024];
    int rc = server_conf_load(srv, err, sizeof err);
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
    init_signal(srv, &srv->sig_hup, SIGHUP, on_sighup);
    init_signal(srv, &srv->sig_chld, SIGCHLD, on_sigchld);
    uv_timer_init(srv->loop, &srv->shutdown_timer);
    srv->shutdown_timer.data = srv;
    uv_timer_init(srv->loop, &srv->notify_timer);
    srv->notify_timer.data = srv;
    uv_timer_init(srv->loop, &srv->frame_timer);
    srv->frame_timer.data = srv;
    prebuilt_pool_init(&srv->prebuilts, srv->loop, srv->conf.sandbox_keep_warm_ms);
    start_modules(srv);

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
    server_conf_free(srv);
    attach_free_all(&srv->attached);
    if (srv->proxy)
        proxy_free(srv->proxy);
    server_log("stopped");
    return srv->exit_status < 0 ? 0 : srv->exit_status;
}

