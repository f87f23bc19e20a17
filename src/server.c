/*
 * server.c - the server's event loop: start-up (one server per socket,
 * enforced with a lock file), the admin socket and its connections (peer
 * uid checked with SO_PEERCRED, messages framed and capped by proto.c),
 * session bookkeeping (store, reaping), and shutdown on SIGTERM.
 */
#include "config.h"

#include "server.h"
#include "server_int.h"
#include "approvals.h"
#include "paths.h"
#include "sbconf.h"
#include "sesschan.h"
#include "shellhook.h"
#include "uexec.h"
#include "util.h"

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

extern char **environ;

#define SHUTDOWN_GRACE_MS 5000
#define CONN_READ_MAX (64u * 1024u)

/* ---- lists -------------------------------------------------------------- */

void link_init(link_t *l)
{
    l->prev = l->next = l;
}

void link_add(link_t *head, link_t *node)
{
    node->next = head;
    node->prev = head->prev;
    head->prev->next = node;
    head->prev = node;
}

void link_del(link_t *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    link_init(node);
}

bool link_empty(const link_t *l)
{
    return l->next == l;
}

/* ---- logging -------------------------------------------------------------- */

static void slog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void slog(const char *fmt, ...)
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

/* ---- sessions ----------------------------------------------------------- */

session_extra *sx(session_t *s)
{
    return s->owner_data;
}

void server_touch_quiet(server_t *srv, session_t *s)
{
    s->last_used = ++srv->use_clock;
    s->last_used_wall = wall_sec();
}

void server_touch(server_t *srv, session_t *s)
{
    server_touch_quiet(srv, s);
    watch_session_changed(s);
}

session_t *server_find(server_t *srv, int id)
{
    return store_get(&srv->store, id);
}

static void on_session_output(session_t *s, const char *data, size_t len, void *user)
{
    (void)user;
    waiter_session_output(s, data, len);
}

/* Quiet this long, a running session shows as idle in lists. */
#define IDLE_AFTER_MS 10000

static void on_session_screen_output(session_t *s, const char *data, size_t len, void *user)
{
    server_t *srv = user;
    session_extra *x = sx(s);
    uint64_t now = uv_now(srv->loop);
    /* Idle to busy is an event; busy to idle is a matter of time, which
     * clients compute from output_age_seconds. */
    if (x->last_output_ms && now - x->last_output_ms >= IDLE_AFTER_MS)
        watch_session_changed(s);
    x->last_output_ms = now;
    watch_session_output(s, data, len);
}

static void on_session_title(session_t *s, void *user)
{
    (void)user;
    watch_session_changed(s);
}

static void on_session_bell(session_t *s, void *user)
{
    (void)user;
    watch_session_bell(s);
}

typedef struct kill_wait {
    link_t node;
    conn_t *conn;
    json_t *id;
} kill_wait;

static void maybe_finish_shutdown(server_t *srv);

static void on_session_finished(session_t *s, void *user)
{
    server_t *srv = user;
    session_extra *x = sx(s);
    sesschan_session_ended(srv, s);
    waiter_session_finished(s);
    watch_session_changed(s);
    while (!link_empty(&x->kill_waits)) {
        kill_wait *k = link_entry(x->kill_waits.next, kill_wait, node);
        link_del(&k->node);
        char state[64];
        session_state_text(s, state, sizeof state);
        json_t *r = proto_ok(k->id);
        json_object_set_new(r, "session", json_integer(s->id));
        json_object_set_new(r, "state", json_string(state));
        conn_send(k->conn, r);
        json_decref(k->id);
        conn_unref(k->conn);
        free(k);
    }
    /* A pruned session is out of the store: once no request waits on it
     * (a waiter in its post-write settle closes it itself), it goes. */
    if (!x->in_store && !x->waiter)
        session_close(s);
    if (srv->shutting_down)
        maybe_finish_shutdown(srv);
}

static void on_session_closed(session_t *s, void *user)
{
    (void)user;
    session_extra *x = sx(s);
    while (!link_empty(&x->kill_waits)) {
        kill_wait *k = link_entry(x->kill_waits.next, kill_wait, node);
        link_del(&k->node);
        json_decref(k->id);
        conn_unref(k->conn);
        free(k);
    }
    watch_session_freed(s);
    sesschan_session_ended(x->srv, s);
    approval_cache_free(&x->approved);
    link_del(&x->node);
    free(x);
    session_free(s);
}

static const session_hooks server_session_hooks = {
    .output = on_session_output,
    .screen_output = on_session_screen_output,
    .title = on_session_title,
    .bell = on_session_bell,
    .finished = on_session_finished,
    .closed = on_session_closed,
};

/* Drop s from the store; a running one is killed, a finished one closed. */
static void unstore(server_t *srv, session_t *s, const char *reason)
{
    session_extra *x = sx(s);
    if (!x->in_store)
        return;
    store_remove(&srv->store, s->id);
    x->in_store = false;
    watch_session_removed(s);
    if (s->finished) {
        if (strcmp(reason, "pruned") == 0)
            eventlog_write(s->events, "pruned", NULL, false);
        if (!x->waiter)
            session_close(s);
    } else {
        session_kill(s, reason);
    }
}

/* Codex's prune: only when the store is full, at most one per insert. */
static void prune_if_needed(server_t *srv)
{
    size_t n = store_len(&srv->store);
    if (n < STORE_MAX)
        return;
    store_meta *meta = xcalloc(n, sizeof *meta);
    for (size_t i = 0; i < n; i++) {
        session_t *s = srv->store.entries[i].item;
        meta[i].id = s->id;
        meta[i].last_used = s->last_used;
        meta[i].exited = s->state == SESSION_EXITED;
        meta[i].pinned = s->pinned;
    }
    int pick = store_pick_prune(meta, n);
    if (pick >= 0) {
        session_t *victim = srv->store.entries[pick].item;
        slog("store full (%zu): pruning session %d (%s)", n, victim->id,
             victim->state == SESSION_EXITED ? "exited" : "running");
        unstore(srv, victim, "pruned");
    }
    free(meta);
}

/* The environment for a new session: the server's, minus corral's own
 * variables, plus what the session kind needs.  Unified-exec processes get
 * Codex's non-interactive settings (codex.md 1.7). */
/* What the server sets in every session's environment on top of the
 * sandbox's allowlist: the terminal type, and for agent processes the
 * Codex CLI's non-interactive settings (codex.md 1.7). */
static const char *const *session_set_env(session_kind kind, bool tty)
{
    static const char *const exec_env[] = {"NO_COLOR=1", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "LC_ALL=C.UTF-8",
                                           "COLORTERM=", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat",
                                           "TERM=dumb", NULL};
    static const char *const tty_env[] = {"TERM=xterm-256color", NULL};
    static const char *const pipe_env[] = {"TERM=dumb", NULL};
    return kind == SESSION_EXEC ? exec_env : tty ? tty_env : pipe_env;
}

sb_plan *server_plan(server_t *srv, const spawn_request *r, int id, bool tools, char *err, size_t errlen)
{
    sb_profile prof;
    if (sbconf_profile(&srv->conf, r->profile, &prof, err, errlen) < 0)
        return NULL;
    /* An interactive bash or zsh gets the shell hook (escalation path 3),
     * from where the command will see it. */
    char **hook_argv = NULL, **hook_env = NULL, **set_env = NULL;
    char *const *argv = r->argv;
    if (tools && srv->hook_dir && r->tty && r->kind == SESSION_USER) {
        const char *dir = prof.unconfined ? srv->hook_dir : SB_TOOLS_DIR "/shell";
        if (shellhook_apply(r->argv, dir, &hook_argv, &hook_env))
            argv = hook_argv;
    }
    const char *const *base_env = session_set_env(r->kind, r->tty);
    size_t nb = 0, nh = 0;
    while (base_env[nb])
        nb++;
    while (hook_env && hook_env[nh])
        nh++;
    set_env = xcalloc(nb + nh + 1, sizeof *set_env);
    for (size_t i = 0; i < nb; i++)
        set_env[i] = (char *)base_env[i];
    for (size_t i = 0; i < nh; i++)
        set_env[nb + i] = hook_env[i];
    for (char **p = r->read; p && *p; p++)
        sb_profile_add(&prof, *p, SB_READ);
    for (char **p = r->write; p && *p; p++)
        sb_profile_add(&prof, *p, SB_WRITE);
    for (char **p = r->deny; p && *p; p++)
        sb_profile_add(&prof, *p, SB_DENY);
    if (r->net >= 0)
        prof.net = (sb_net)r->net;
    sb_request req = {.argv = argv, .cwd = r->cwd, .workspace = r->cwd, .environ = environ,
                      .set_env = set_env, .session_id = id};
    if (tools) {
        req.corral_exe = srv->exe;
        req.shell_dir = srv->hook_dir;
    }
    sbconf_request_dirs(&req, r->cwd);
    sb_plan *plan = xcalloc(1, sizeof *plan);
    int rc = sb_plan_compile(&prof, &req, plan, err, errlen);
    sb_profile_free(&prof);
    free(set_env);
    shellhook_free(hook_argv, hook_env);
    if (rc < 0) {
        sb_plan_free(plan);
        free(plan);
        return NULL;
    }
    return plan;
}

session_t *server_start_session(server_t *srv, const spawn_request *r, const char *client, char *err,
                                size_t errlen, char **warning)
{
    *warning = NULL;
    struct stat st;
    if (stat(r->cwd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "working directory '%s' does not exist or is not a directory", r->cwd);
        return NULL;
    }
    int id = store_reserve_id(&srv->store);
    if (id < 0) {
        snprintf(err, errlen, "no free session id");
        return NULL;
    }
    sb_plan *plan = server_plan(srv, r, id, srv->exe != NULL, err, errlen);
    if (!plan) {
        store_release_id(&srv->store, id);
        return NULL;
    }
    int chan_server = -1, chan_child = -1;
    if (srv->exe) {
        chan_child = sesschan_create(srv, &chan_server, err, errlen);
        if (chan_child < 0) {
            sb_plan_free(plan);
            free(plan);
            store_release_id(&srv->store, id);
            return NULL;
        }
    }
    session_spec spec = {
        .plan = plan, .name = r->name, .client = client, .kind = r->kind, .tty = r->tty, .pinned = r->pinned,
        .rows = r->rows, .cols = r->cols,
        .lifetime_ms = r->kind == SESSION_EXEC ? srv->conf.exec_lifetime_ms : srv->conf.session_lifetime_ms,
        .scrollback = srv->conf.scrollback, .chan_fd = chan_child,
    };
    session_extra *x = xcalloc(1, sizeof *x);
    link_init(&x->node);
    link_init(&x->kill_waits);
    link_init(&x->watchers);
    link_init(&x->approved);
    x->srv = srv;
    x->policy = r->policy ? *r->policy : srv->policy;
    session_t *s = session_start(srv->loop, id, &spec, srv->state_dir, &server_session_hooks, srv, err, errlen);
    sb_plan_free(plan);
    free(plan);
    if (chan_child >= 0)
        close(chan_child);
    if (!s) {
        if (chan_server >= 0)
            close(chan_server);
        store_release_id(&srv->store, id);
        free(x);
        return NULL;
    }
    s->owner_data = x;
    x->s = s;
    if (chan_server >= 0)
        sesschan_attach(srv, s, chan_server);
    link_add(&srv->sessions, &x->node);
    server_touch(srv, s);
    prune_if_needed(srv);
    store_add(&srv->store, id, s);
    x->in_store = true;
    /* Codex counts the processes it stores, which are the running ones:
     * it drops a process once its exit is reported.  corral keeps exited
     * entries for review, so it counts the running ones. */
    size_t live = 0;
    for (size_t i = 0; i < store_len(&srv->store); i++)
        live += ((session_t *)srv->store.entries[i].item)->state == SESSION_RUNNING;
    if (live >= STORE_WARN)
        *warning = xasprintf("The maximum number of unified exec processes you can keep open is %d and you "
                             "currently have %zu processes open. Reuse older processes or close them to "
                             "prevent automatic pruning of old processes",
                             STORE_WARN, live);
    return s;
}

json_t *server_session_json(server_t *srv, session_t *s)
{
    char created[32], used[32], state[64];
    iso_time(created, s->created);
    iso_time(used, s->last_used_wall);
    session_state_text(s, state, sizeof state);
    json_t *argv = json_array();
    for (char **p = s->argv; *p; p++) {
        size_t n;
        char *fixed = uexec_lossy_utf8(*p, strlen(*p), &n);
        json_array_append_new(argv, json_stringn(fixed, n));
        free(fixed);
    }
    size_t cwdn;
    char *cwd = uexec_lossy_utf8(s->cwd, strlen(s->cwd), &cwdn);
    json_t *o = json_pack("{s:i, s:s, s:o, s:s%, s:s, s:s, s:s, s:b, s:b, s:s, s:s, s:s, s:f, s:i, s:i, s:i}",
                          "id", s->id, "name", s->name, "command", argv, "cwd", cwd, cwdn, "client",
                          s->client, "profile", s->profile, "kind", s->kind == SESSION_EXEC ? "exec" : "user",
                          "tty", s->tty, "pinned", s->pinned, "state",
                          s->state == SESSION_RUNNING ? "running" : "exited", "status", state, "created",
                          created, "age_seconds", wall_sec() - s->created, "pid", (int)s->pid, "cols",
                          s->cols, "rows", s->rows);
    free(cwd);
    json_object_set_new(o, "last_used", json_string(used));
    if (s->state == SESSION_EXITED) {
        json_object_set_new(o, "exit_code", json_integer(s->exit_code));
        if (s->exit_signal)
            json_object_set_new(o, "signal", json_integer(s->exit_signal));
    }
    json_object_set_new(o, "use", json_integer((json_int_t)s->last_used));
    session_extra *x = sx(s);
    double quiet = x->last_output_ms ? (double)(uv_now(srv->loop) - x->last_output_ms) / 1000.0
                                     : wall_sec() - s->created;
    json_object_set_new(o, "output_age_seconds", json_real(quiet));
    const char *title = vt_title(s->vt);
    if (title && *title)
        json_object_set_new(o, "title", json_string(title));
    return o;
}

void server_kill_and_wait(server_t *srv, conn_t *c, json_t *id, session_t *s)
{
    (void)srv;
    kill_wait *k = xcalloc(1, sizeof *k);
    k->conn = c;
    c->refs++;
    k->id = id ? json_incref(id) : NULL;
    link_add(&sx(s)->kill_waits, &k->node);
    session_kill(s, "user");
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

static void conn_free(conn_t *c)
{
    approval_cache_free(&c->approved);
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
    gate_conn_closed(c);
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
    link_init(&c->approved);
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
        slog("refused a connection: cannot read its credentials: %s", strerror(errno));
        conn_close(c);
        return;
    }
    c->peer_pid = cred.pid;
    if (cred.uid != geteuid()) {
        char msg[160];
        snprintf(msg, sizeof msg, "connection refused: peer uid %u is not the server's uid %u",
                 (unsigned)cred.uid, (unsigned)geteuid());
        slog("%s (pid %d)", msg, (int)cred.pid);
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
            session_t *s = link_entry(l, session_extra, node)->s;
            if (s->pid == pid) {
                session_reaped(s, status);
                pid = 0;
                break;
            }
        }
        if (pid)
            sesschan_reaped(srv, pid, status);
    }
}

static void finish_shutdown(server_t *srv)
{
    if (srv->exit_status >= 0)
        return;
    srv->exit_status = 0;
    slog("shutting down");
    uv_timer_stop(&srv->shutdown_timer);
    while (!link_empty(&srv->conns))
        conn_close(link_entry(srv->conns.next, conn_t, node));
    /* Close every session: recordings and logs are flushed and closed. */
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = link_entry(l, session_extra, node)->s;
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
    approvals_shutdown(srv);
}

static void maybe_finish_shutdown(server_t *srv)
{
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = link_entry(l, session_extra, node)->s;
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
        session_t *s = link_entry(l, session_extra, node)->s;
        if (s->state == SESSION_RUNNING && s->pid > 0) {
            slog("session %d did not end in time; killing its init (pid %d)", s->id, (int)s->pid);
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
    slog("stopping every session");
    /* No new clients from here on. */
    uv_close((uv_handle_t *)&srv->listener, NULL);
    unlink(srv->socket_path);
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_t *s = link_entry(l, session_extra, node)->s;
        session_kill(s, "shutdown");
    }
    uv_timer_start(&srv->shutdown_timer, on_shutdown_timeout, SHUTDOWN_GRACE_MS, 0);
    maybe_finish_shutdown(srv);
}

static void on_stop_signal(uv_signal_t *h, int sig)
{
    server_t *srv = h->data;
    slog("received %s", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
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

/* The exec policy: settings, rules, and the durable approvals log. */
static void start_policy(server_t *srv)
{
    srv->policy.approval = APPROVAL_ON_REQUEST;
    if (srv->conf.approval_policy)
        approval_policy_parse(srv->conf.approval_policy, &srv->policy.approval);
    srv->policy.granular_sandbox_approval = srv->conf.granular_sandbox_approval;
    srv->policy.granular_rules = srv->conf.granular_rules;
    approvals_load_rules(srv);
    if (srv->rules_error)
        slog("rules not loaded: %s", srv->rules_error);
    char err[512];
    /* Sessions' tools: corral itself (corral escalate, the hooks' checks)
     * and the shell hooks, next to the socket. */
    char exe[PATH_MAX];
    if (realpath("/proc/self/exe", exe))
        srv->exe = xstrdup(exe);
    else
        slog("sessions get no corral escalate: cannot find corral's executable: %s", strerror(errno));
    char *sockdir = xstrdup(srv->socket_path);
    *strrchr(sockdir, '/') = '\0';
    srv->hook_dir = xasprintf("%s/shell", sockdir);
    free(sockdir);
    if (shellhook_install(srv->hook_dir, err, sizeof err) < 0) {
        slog("sessions get no shell hook: %s", err);
        free(srv->hook_dir);
        srv->hook_dir = NULL;
    }
    char *path = xasprintf("%s/approvals.jsonl", srv->state_dir);
    srv->approval_log = eventlog_open(path, err, sizeof err);
    if (!srv->approval_log)
        slog("approvals are not logged: %s", err);
    free(path);
}

int server_run(int ready_fd)
{
    server_t srv_storage, *srv = &srv_storage;
    memset(srv, 0, sizeof *srv);
    srv->lock_fd = -1;
    srv->exit_status = -1;
    link_init(&srv->sessions);
    link_init(&srv->conns);
    link_init(&srv->approvals);
    link_init(&srv->chan_reqs);
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
    if (rc < 0) {
        slog("%s", err);
        ready_message(ready_fd, "error %s", err);
        return 1;
    }
    srv->socket_path = paths_socket(err, sizeof err);
    if (!srv->socket_path) {
        slog("%s", err);
        ready_message(ready_fd, "error %s", err);
        return 1;
    }
    srv->lock_path = xasprintf("%.*s.lock", (int)(strlen(srv->socket_path) - 5), srv->socket_path);
    srv->state_dir = paths_state_dir();
    rc = mkdir_p(srv->state_dir, 0700);
    if (rc < 0) {
        snprintf(err, sizeof err, "cannot create %s: %s", srv->state_dir, strerror(-rc));
        slog("%s", err);
        ready_message(ready_fd, "error %s", err);
        return 1;
    }
    if (take_lock(srv, err, sizeof err) < 0) {
        slog("%s", err);
        ready_message(ready_fd, "error %s", err);
        return 1;
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    srv->loop = &loop;
    if (listen_socket(srv, err, sizeof err) < 0) {
        slog("%s", err);
        ready_message(ready_fd, "error %s", err);
        return 1;
    }
    init_signal(srv, &srv->sig_term, SIGTERM, on_stop_signal);
    init_signal(srv, &srv->sig_int, SIGINT, on_stop_signal);
    init_signal(srv, &srv->sig_hup, SIGHUP, on_stop_signal);
    init_signal(srv, &srv->sig_chld, SIGCHLD, on_sigchld);
    uv_timer_init(srv->loop, &srv->shutdown_timer);
    srv->shutdown_timer.data = srv;
    uv_timer_init(srv->loop, &srv->notify_timer);
    srv->notify_timer.data = srv;
    start_policy(srv);

    slog("listening on %s", srv->socket_path);
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
    slog("stopped");
    return srv->exit_status < 0 ? 0 : srv->exit_status;
}

/* ---- background start ------------------------------------------------------- */

int server_spawn_daemon(char *err, size_t errlen, int *pid_out)
{
    char *state = paths_state_dir();
    int rc = mkdir_p(state, 0700);
    char *logpath = xasprintf("%s/server.log", state);
    free(state);
    if (rc < 0) {
        snprintf(err, errlen, "cannot create the state directory: %s", strerror(-rc));
        free(logpath);
        return -1;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        free(logpath);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        free(logpath);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        setsid();
        /* A second fork: the server is no session leader and the client
         * does not have to reap it. */
        pid_t again = fork();
        if (again != 0)
            _exit(again < 0 ? 1 : 0);
        int devnull = open("/dev/null", O_RDWR);
        int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(logfd >= 0 ? logfd : devnull, 1);
        dup2(logfd >= 0 ? logfd : devnull, 2);
        if (chdir("/") < 0)
            _exit(1);
        char fdarg[16];
        int wfd = fcntl(p[1], F_DUPFD, 3); /* without CLOEXEC, for the exec */
        snprintf(fdarg, sizeof fdarg, "%d", wfd);
        char *args[] = {"corral", "server", "--foreground", "--ready-fd", fdarg, NULL};
        execv("/proc/self/exe", args);
        dprintf(wfd, "error cannot exec /proc/self/exe: %s\n", strerror(errno));
        _exit(1);
    }
    close(p[1]);
    int st;
    waitpid(pid, &st, 0);
    char buf[1200];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(p[0], buf + got, sizeof buf - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got >= sizeof buf - 1)
            break;
    }
    close(p[0]);
    buf[got] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    if (strncmp(buf, "ok ", 3) == 0) {
        if (pid_out)
            *pid_out = atoi(buf + 3);
        free(logpath);
        return 0;
    }
    if (strncmp(buf, "error ", 6) == 0) {
        /* Two clients may start a server at once: the loser is fine. */
        if (strstr(buf, "already running")) {
            free(logpath);
            return 0;
        }
        snprintf(err, errlen, "%s", buf + 6);
    } else {
        snprintf(err, errlen, "the server exited during start-up; see %s", logpath);
    }
    free(logpath);
    return -1;
}
