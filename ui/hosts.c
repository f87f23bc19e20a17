/*
 * hosts.c - see hosts.h.
 */
#include "config.h"

#include "tui_int.h"
#include "protocol/client.h"
#include "protocol/proto.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 30000
/* The longest a link may take from ssh's start to the session list. */
#define CONNECT_TIMEOUT_MS 20000
#define CONNECT_TIMEOUT_TEXT "20 s"
#define ERR_TEXT_MAX 4096
/* An ssh child still there this long after its link was closed is ended. */
#define REAP_GRACE_S 5.0

static ui_hosts_handlers handlers;

/* ---- ids, both ways --------------------------------------------------------- */

static bool server_id_ok(json_int_t n)
{
    return n > 0 && n < UI_HOST_STRIDE;
}

/* o[key], a server's id, as the screen's; false (and 0 put there) when
 * it is not one a server may send. */
static bool to_screen(json_t *o, const char *key, int base)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || !server_id_ok(json_integer_value(v))) {
        json_object_set_new(o, key, json_integer(0));
        return false;
    }
    json_object_set_new(o, key, json_integer(json_integer_value(v) + base));
    return true;
}

/* Another machine's SESSION or APPROVAL object: its ids and its client
 * ("box: codex", so that its rows group apart from this machine's).
 * False when its own id is not a valid one (the object is not used). */
static bool object_to_screen(const ui_host *h, json_t *o, bool approval)
{
    if (!json_is_object(o))
        return false;
    int base = h->index * UI_HOST_STRIDE;
    if (!to_screen(o, "id", base))
        return false;
    if (approval && json_integer_value(json_object_get(o, "session")) != 0)
        to_screen(o, "session", base);
    const char *client = json_string_value(json_object_get(o, "client"));
    char *grouped = xasprintf("%s: %s", h->name, client ? client : "?");
    json_object_set_new(o, "client", json_string(grouped));
    free(grouped);
    return true;
}

/* What one machine may put on the screen: a server keeps 64 sessions
 * (its store) and a handful of requests; one that lists thousands would
 * make every sort of the sidebar and every frame slow. */
#define REMOTE_SESSIONS_MAX 256
#define REMOTE_APPROVALS_MAX 256

/* How many of host's sessions (or requests) the screen has now. */
static size_t held_by(const ui_host *h, bool approval)
{
    const tui_t *t = h->t;
    size_t n = 0;
    if (approval) {
        for (size_t i = 0; i < t->appr.n; i++)
            n += hosts_index_of(t->appr.v[i].id) == h->index;
    } else {
        for (size_t i = 0; i < t->list.n; i++)
            n += hosts_index_of(t->list.v[i]->id) == h->index;
    }
    return n;
}

/* A new session or request of h, beyond what one machine may have, is
 * not taken (one the screen has already is: it is an update). */
static bool room_for(const ui_host *h, json_t *o, bool approval)
{
    int id = (int)json_integer_value(json_object_get(o, "id"));
    const tui_t *t = h->t;
    bool known = false;
    if (approval) {
        for (size_t i = 0; i < t->appr.n && !known; i++)
            known = t->appr.v[i].id == id;
    } else {
        known = ui_sessions_find(&t->list, id) != NULL;
    }
    return known || held_by(h, approval) < (approval ? REMOTE_APPROVALS_MAX : REMOTE_SESSIONS_MAX);
}

/* An array of SESSION or APPROVAL objects (or of ids): each as the
 * screen's; those that cannot be are left out, and so is what is beyond
 * what one machine may have. */
static void array_to_screen(const ui_host *h, json_t *a, bool approval)
{
    if (!json_is_array(a))
        return;
    size_t max = approval ? REMOTE_APPROVALS_MAX : REMOTE_SESSIONS_MAX;
    while (json_array_size(a) > max)
        json_array_remove(a, json_array_size(a) - 1);
    int base = h->index * UI_HOST_STRIDE;
    for (size_t i = json_array_size(a); i-- > 0;) {
        json_t *e = json_array_get(a, i);
        bool ok;
        if (json_is_integer(e)) {
            ok = server_id_ok(json_integer_value(e));
            if (ok)
                json_array_set_new(a, i, json_integer(json_integer_value(e) + base));
        } else {
            ok = object_to_screen(h, e, approval);
        }
        if (!ok)
            json_array_remove(a, i);
    }
}

#define RULES_ERROR_MAX 4096

/* Another machine's rules files that did not load ("rules_error" of its
 * subscribe reply, or of its rules event): kept as that machine's, each
 * line made safe for the screen. */
static void keep_rules_error(ui_host *h, json_t *v)
{
    free(h->rules_error);
    h->rules_error = NULL;
    const char *s = json_string_value(v);
    if (!s || !*s)
        return;
    buf_t b;
    buf_init(&b);
    for (const char *p = s; *p && b.len < RULES_ERROR_MAX;) {
        size_t n = strcspn(p, "\n");
        char *line = sanitize_text(p, n, 1024);
        if (b.len)
            buf_putc(&b, '\n');
        buf_puts(&b, line);
        free(line);
        p += n + (p[n] == '\n');
    }
    h->rules_error = buf_steal(&b);
}

/* A reply of another machine, as the screen's. */
static void reply_to_screen(ui_host *h, json_t *r)
{
    if (h->index == 0 || !json_is_object(r))
        return;
    json_t *s = json_object_get(r, "session");
    if (json_is_object(s)) {
        if (!object_to_screen(h, s, false))
            json_object_del(r, "session");
    } else if (s) {
        to_screen(r, "session", h->index * UI_HOST_STRIDE);
    }
    if (json_object_get(r, "approval"))
        to_screen(r, "approval", h->index * UI_HOST_STRIDE);
    array_to_screen(h, json_object_get(r, "sessions"), false);
    array_to_screen(h, json_object_get(r, "approvals"), true);
    /* Its settings and rules files are that machine's, not this one's. */
    json_object_del(r, "config");
    if (json_object_get(r, "rules_error")) {
        keep_rules_error(h, json_object_get(r, "rules_error"));
        json_object_del(r, "rules_error");
    }
}

/* An event of another machine, as the screen's; false: not for the
 * screen (malformed, or about that machine's own settings). */
static bool event_to_screen(ui_host *h, json_t *ev)
{
    if (h->index == 0)
        return true;
    const char *name = json_string_value(json_object_get(ev, "event"));
    int base = h->index * UI_HOST_STRIDE;
    if (!name)
        return false;
    static const char *const by_session[] = {"term", "sync", "resized", "bell", "warning", "output",
                                             "session_removed"};
    if (strcmp(name, "sync") == 0 || strcmp(name, "resized") == 0) {
        /* A terminal size no server makes would be a model of any size
         * here (the protocol's resize takes 1..1000 each way). */
        json_int_t rows = json_integer_value(json_object_get(ev, "rows"));
        json_int_t cols = json_integer_value(json_object_get(ev, "cols"));
        if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
            return false;
    }
    for (size_t i = 0; i < sizeof by_session / sizeof *by_session; i++)
        if (strcmp(name, by_session[i]) == 0)
            return to_screen(ev, "session", base);
    if (strcmp(name, "session") == 0)
        return object_to_screen(h, json_object_get(ev, "session"), false) &&
               room_for(h, json_object_get(ev, "session"), false);
    if (strcmp(name, "approval") == 0)
        return object_to_screen(h, json_object_get(ev, "approval"), true) &&
               room_for(h, json_object_get(ev, "approval"), true);
    if (strcmp(name, "approval_done") == 0)
        return to_screen(ev, "approval", base);
    if (strcmp(name, "rules") == 0) { /* that machine's own: shown as its */
        keep_rules_error(h, json_object_get(ev, "rules_error"));
        handlers.changed(h->t, h);
    }
    return false; /* config, rules, snapshot: that machine's own */
}

/* A request's ids as host h's server knows them; false when one is not
 * of h (it is not sent). */
static bool request_to_server(const ui_host *h, json_t *req)
{
    static const char *const keys[] = {"session", "approval"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(req, keys[i]);
        if (!v || json_is_string(v))
            continue; /* none, or a recorded session's name (records): the same there */
        int id = (int)json_integer_value(v);
        if (!json_is_integer(v) || hosts_index_of(id) != h->index)
            return false;
        json_object_set_new(req, keys[i], json_integer(hosts_server_id(id)));
    }
    json_t *a = json_object_get(req, "sessions");
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        int id = (int)json_integer_value(e);
        if (!json_is_integer(e) || hosts_index_of(id) != h->index)
            return false;
        json_array_set_new(a, i, json_integer(hosts_server_id(id)));
    }
    return true;
}

/* The host a request names, by its first id. */
static int request_host(json_t *req)
{
    json_t *v = json_object_get(req, "session");
    if (!json_is_integer(v))
        v = json_object_get(req, "approval");
    if (!json_is_integer(v))
        v = json_array_get(json_object_get(req, "sessions"), 0);
    return json_is_integer(v) ? hosts_index_of((int)json_integer_value(v)) : 0;
}

/* ---- requests ----------------------------------------------------------------- */

typedef struct routed {
    ui_host *h;
    uiconn_reply_fn fn;
    void *user;
    bool as_sent; /* records: its "sessions" are that machine's directory names, taken as they are (ended.c) */
} routed;

static void on_routed_reply(uiconn_t *c, json_t *reply, void *user)
{
    routed *r = user;
    if (!r->as_sent)
        reply_to_screen(r->h, reply);
    if (r->fn)
        r->fn(c, reply, r->user);
    free(r);
}

void hosts_request_on(tui_t *t, int index, json_t *req, uiconn_reply_fn fn, void *user)
{
    ui_host *h = index >= 0 && (size_t)index < t->hosts.n ? t->hosts.v[index] : NULL;
    if (!h || !h->conn || (index > 0 && h->state != HOST_UP) || !request_to_server(h, req)) {
        json_decref(req);
        if (fn)
            fn(h ? h->conn : NULL, NULL, user);
        return;
    }
    if (index == 0 || !fn) { /* this machine's ids are the screen's; or no reply is wanted */
        uiconn_request(h->conn, req, fn, user);
        return;
    }
    routed *r = xcalloc(1, sizeof *r);
    r->h = h;
    r->fn = fn;
    r->user = user;
    const char *cmd = json_string_value(json_object_get(req, "cmd"));
    r->as_sent = cmd && strcmp(cmd, "records") == 0;
    uiconn_request(h->conn, req, on_routed_reply, r);
}

void hosts_request(tui_t *t, json_t *req, uiconn_reply_fn fn, void *user)
{
    hosts_request_on(t, request_host(req), req, fn, user);
}

/* ---- what the connections bring ------------------------------------------------ */

static void on_event(uiconn_t *c, json_t *ev, void *user)
{
    (void)c;
    ui_host *h = user;
    if ((h->index == 0 || h->state == HOST_UP) && event_to_screen(h, ev))
        handlers.event(h->t, h, ev);
}

static void on_term(uiconn_t *c, int session, const char *data, size_t len, void *user)
{
    (void)c;
    ui_host *h = user;
    if (h->index > 0 && (h->state != HOST_UP || !server_id_ok(session)))
        return;
    handlers.term(h->t, h->index * UI_HOST_STRIDE + session, data, len);
}

static void schedule_retry(ui_host *h);
static void on_retry(uv_timer_t *timer);

/* Close h's link (if any): its connection, ssh's stderr, and ssh itself
 * (reaped later, without blocking). */
static void drop_link(ui_host *h)
{
    if (h->conn) {
        uiconn_destroy(h->conn);
        h->conn = NULL;
    }
    if (h->err_open) {
        uv_read_stop((uv_stream_t *)&h->err_pipe);
        uv_close((uv_handle_t *)&h->err_pipe, NULL);
        h->err_open = false;
    }
    if (h->ssh_pid > 0) {
        /* ssh leads a process group of its own (setsid): the ssh under
         * CORRAL_SSH_COMMAND's shell and a ProxyCommand go with it. */
        kill(-h->ssh_pid, SIGTERM);
        ui_hosts *hs = &h->t->hosts;
        if (hs->n_reap < sizeof hs->reap / sizeof *hs->reap) {
            hs->reap[hs->n_reap] = h->ssh_pid;
            hs->reap_since[hs->n_reap++] = ui_now();
        } else {
            kill(-h->ssh_pid, SIGKILL);
            waitpid(h->ssh_pid, NULL, 0);
        }
        h->ssh_pid = 0;
    }
}

/* The last line ssh (or a login script there) wrote, visible, or NULL. */
static char *ssh_last_words(const ui_host *h)
{
    const char *s = h->err_text.data;
    size_t n = h->err_text.len;
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (!n)
        return NULL;
    size_t start = n;
    while (start && s[start - 1] != '\n')
        start--;
    return sanitize_text(s + start, n - start, 300);
}

static void went_down(ui_host *h, const char *why)
{
    bool was_up = h->state == HOST_UP;
    /* What ssh (or a login script there) said last is the reason people
     * can act on ("Permission denied (publickey)"); the connection's own
     * "closed" only when it said nothing. */
    char *words = ssh_last_words(h);
    snprintf(h->why, sizeof h->why, "%s", words ? words : why ? why : "the link ended");
    free(words);
    h->state = HOST_DOWN;
    if (was_up || !h->lost_at)
        h->lost_at = time(NULL);
    drop_link(h);
    schedule_retry(h);
    handlers.changed(h->t, h);
}

static void on_closed(uiconn_t *c, const char *why, void *user)
{
    (void)c;
    ui_host *h = user;
    if (!why || h->t->quitting)
        return;
    if (h->index == 0) {
        handlers.local_lost(h->t, why);
        return;
    }
    went_down(h, why);
}

static void on_err_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)handle;
    (void)suggested;
    static char ebuf[4096];
    *buf = uv_buf_init(ebuf, sizeof ebuf);
}

static void on_err_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    ui_host *h = st->data;
    if (n < 0) {
        uv_read_stop(st);
        return;
    }
    buf_append(&h->err_text, buf->base, (size_t)n);
    if (h->err_text.len > ERR_TEXT_MAX) { /* keep the latest */
        size_t drop = h->err_text.len - ERR_TEXT_MAX / 2;
        memmove(h->err_text.data, h->err_text.data + drop, h->err_text.len - drop);
        h->err_text.len -= drop;
    }
}

static void on_subscribed(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    ui_host *h = user;
    if (!reply)
        return; /* the link went: on_closed said so */
    if (json_object_get(reply, "error")) {
        char buf[256];
        const char *why = client_error_message(reply, buf, sizeof buf);
        if (h->index == 0)
            handlers.local_lost(h->t, "it refused to send its session list");
        else
            went_down(h, why);
        return;
    }
    uv_timer_stop(&h->retry); /* the answer's deadline */
    h->state = HOST_UP;
    h->ever_up = true;
    h->lost_at = 0;
    h->why[0] = 0;
    h->retry_ms = RETRY_FIRST_MS;
    reply_to_screen(h, reply);
    handlers.subscribed(h->t, h, reply);
    handlers.changed(h->t, h);
}

static void on_hello(uiconn_t *c, json_t *reply, void *user)
{
    ui_host *h = user;
    if (!reply)
        return;
    if (json_object_get(reply, "error")) {
        char buf[256];
        went_down(h, client_error_message(reply, buf, sizeof buf));
        return;
    }
    uiconn_request(c, json_pack("{s:s}", "cmd", "subscribe"), on_subscribed, h);
}

/* Start h's link: ssh, the connection, hello; the rest follows. */
static void connect_remote(ui_host *h)
{
    h->state = HOST_CONNECTING;
    buf_free(&h->err_text);
    buf_init(&h->err_text);
    int fd = -1, errfd = -1;
    pid_t pid = 0;
    char err[512];
    if (remote_spawn_batch(h->remote, &fd, &errfd, &pid, err, sizeof err) < 0) {
        went_down(h, err);
        return;
    }
    h->ssh_pid = pid;
    uv_pipe_init(h->t->loop, &h->err_pipe, 0);
    h->err_pipe.data = h;
    if (uv_pipe_open(&h->err_pipe, errfd) == 0) {
        uv_read_start((uv_stream_t *)&h->err_pipe, on_err_alloc, on_err_read);
    } else {
        close(errfd);
    }
    h->err_open = true;
    h->conn = xcalloc(1, sizeof *h->conn);
    if (uiconn_open_fd(h->conn, h->t->loop, fd, on_event, on_term, on_closed, h, err, sizeof err) < 0) {
        /* fd is closed and the handle in h->conn is closing, which libuv
         * may still touch: the few bytes stay allocated. */
        h->conn = NULL;
        went_down(h, err);
        return;
    }
    uiconn_request(h->conn,
                   json_pack("{s:s, s:i, s:s}", "cmd", "hello", "protocol", PROTO_VERSION, "client", "user"),
                   on_hello, h);
    /* Nobody waits for ever on a link that never answers: it is then
     * down, and tried again, as one that failed. */
    uv_timer_start(&h->retry, on_retry, CONNECT_TIMEOUT_MS, 0);
    handlers.changed(h->t, h);
}

static void on_retry(uv_timer_t *timer)
{
    ui_host *h = timer->data;
    if (h->t->quitting)
        return;
    if (h->state == HOST_CONNECTING) { /* the timer was the answer's deadline */
        went_down(h, "no answer within " CONNECT_TIMEOUT_TEXT " (ssh or the server there hangs, or its list was "
                     "too large to take)");
        return;
    }
    connect_remote(h);
}

static void schedule_retry(ui_host *h)
{
    if (h->t->quitting)
        return;
    if (!h->retry_ms)
        h->retry_ms = RETRY_FIRST_MS;
    h->retry_at = ui_now() + h->retry_ms / 1000.0;
    uv_timer_start(&h->retry, on_retry, h->retry_ms, 0);
    h->retry_ms = h->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : h->retry_ms * 2;
}

/* ---- the hosts ------------------------------------------------------------------- */

static ui_host *new_host(tui_t *t)
{
    ui_host *h = xcalloc(1, sizeof *h);
    h->t = t;
    h->index = (int)t->hosts.n;
    buf_init(&h->err_text);
    uv_timer_init(t->loop, &h->retry);
    h->retry.data = h;
    t->hosts.v[t->hosts.n++] = h;
    return h;
}

int hosts_open_local(tui_t *t, const ui_hosts_handlers *hd, char *err, size_t errlen)
{
    handlers = *hd;
    ui_host *h = new_host(t);
    h->conn = xcalloc(1, sizeof *h->conn);
    if (uiconn_open(h->conn, t->loop, on_event, on_term, on_closed, h, err, errlen) < 0) {
        free(h->conn);
        h->conn = NULL;
        return -1;
    }
    h->state = HOST_CONNECTING;
    return 0;
}

ui_host *hosts_add_remote(tui_t *t, const char *name, remote_host *r, char *err, size_t errlen)
{
    for (size_t i = 1; i < t->hosts.n; i++) {
        const remote_host *o = t->hosts.v[i]->remote;
        if (strcmp(t->hosts.v[i]->name, name) == 0 ||
            (strcmp(o->host, r->host) == 0 && o->port == r->port &&
             strcmp(o->user ? o->user : "", r->user ? r->user : "") == 0)) {
            snprintf(err, errlen, "%s is on the screen already (as %s)", r->spec, t->hosts.v[i]->name);
            remote_host_free(r);
            free(r);
            return NULL;
        }
    }
    if (t->hosts.n >= UI_HOSTS_MAX) {
        snprintf(err, errlen, "at most %d machines fit one screen: %s is left out", UI_HOSTS_MAX - 1, r->spec);
        remote_host_free(r);
        free(r);
        return NULL;
    }
    ui_host *h = new_host(t);
    h->name = sanitize_text(name, strlen(name), 64);
    h->remote = r;
    h->retry_ms = RETRY_FIRST_MS;
    connect_remote(h);
    return h;
}

void hosts_start(tui_t *t)
{
    ui_host *h = t->hosts.v[0];
    uiconn_request(h->conn, json_pack("{s:s}", "cmd", "subscribe"), on_subscribed, h);
}

void hosts_tick(tui_t *t)
{
    ui_hosts *hs = &t->hosts;
    double now = ui_now();
    for (size_t i = hs->n_reap; i-- > 0;) {
        pid_t pid = hs->reap[i];
        pid_t r = waitpid(pid, NULL, WNOHANG);
        if (r == 0 && now - hs->reap_since[i] < REAP_GRACE_S)
            continue;
        if (r == 0) {
            kill(-pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        hs->reap[i] = hs->reap[--hs->n_reap];
        hs->reap_since[i] = hs->reap_since[hs->n_reap];
    }
}

void hosts_close_all(tui_t *t)
{
    ui_hosts *hs = &t->hosts;
    for (size_t i = 0; i < hs->n; i++) {
        ui_host *h = hs->v[i];
        uv_timer_stop(&h->retry);
        uv_close((uv_handle_t *)&h->retry, NULL);
        drop_link(h);
    }
    /* The links are closed: ssh ends; wait for it here (the screen is
     * gone), and end what of its group is still there. */
    for (size_t i = 0; i < hs->n_reap; i++) {
        remote_reap(hs->reap[i]);
        kill(-hs->reap[i], SIGKILL);
    }
    hs->n_reap = 0;
}

void hosts_free(tui_t *t)
{
    ui_hosts *hs = &t->hosts;
    for (size_t i = 0; i < hs->n; i++) {
        ui_host *h = hs->v[i];
        if (h->remote) {
            remote_host_free(h->remote);
            free(h->remote);
        }
        free(h->name);
        free(h->rules_error);
        buf_free(&h->err_text);
        free(h);
    }
    hs->n = 0;
}

/* ---- for the screen ----------------------------------------------------------------- */

ui_host *hosts_of(const tui_t *t, int id)
{
    int k = hosts_index_of(id);
    return id > 0 && (size_t)k < t->hosts.n ? t->hosts.v[k] : NULL;
}

const char *hosts_rules_error(const tui_t *t, const char **machine)
{
    *machine = NULL;
    if (t->appr.rules_error)
        return t->appr.rules_error;
    for (size_t i = 1; i < t->hosts.n; i++)
        if (t->hosts.v[i]->rules_error && t->hosts.v[i]->state == HOST_UP) {
            *machine = t->hosts.v[i]->name;
            return t->hosts.v[i]->rules_error;
        }
    return NULL;
}

void hosts_live(const tui_t *t, int *here, int *elsewhere)
{
    *here = *elsewhere = 0;
    for (size_t i = 0; i < t->list.n; i++)
        if (t->list.v[i]->running)
            ++*(hosts_remote_id(t->list.v[i]->id) ? elsewhere : here);
}

bool hosts_unreachable(const tui_t *t, int id)
{
    const ui_host *h = hosts_of(t, id);
    return h && h->index > 0 && h->state != HOST_UP;
}

void hosts_id_text(const tui_t *t, int id, char *out, size_t n)
{
    const ui_host *h = hosts_of(t, id);
    if (h && h->index > 0)
        snprintf(out, n, "%s:%d", h->name, hosts_server_id(id));
    else
        snprintf(out, n, "%d", id);
}

const char *hosts_id(const tui_t *t, int id)
{
    static char ring[8][96];
    static unsigned next;
    char *out = ring[next++ % 8];
    hosts_id_text(t, id, out, sizeof ring[0]);
    return out;
}

void hosts_down_text(const ui_host *h, char *out, size_t n)
{
    char when[32] = "";
    if (h->lost_at) {
        struct tm tm;
        localtime_r(&h->lost_at, &tm);
        strftime(when, sizeof when, " at %H:%M:%S", &tm);
    }
    double wait = h->retry_at - ui_now();
    if (h->state == HOST_CONNECTING)
        snprintf(out, n, "%s: connecting (ssh %s)%s%s", h->name, h->remote->spec, h->why[0] ? "; last time: " : "",
                 h->why);
    else
        snprintf(out, n, "%s: link %s%s (%s); trying again in %.0f s", h->name, h->ever_up ? "lost" : "failed", when,
                 h->why[0] ? h->why : "no answer", wait > 0 ? wait : 0);
}
