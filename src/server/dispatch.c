/*
 * dispatch.c - the protocol's commands (docs/protocol.md): each request is
 * validated field by field, answered with a precise error on bad input, and
 * otherwise turned into calls on the server and its sessions.
 */
#include "config.h"

#include "server/server_int.h"
#include "server/layouts.h"
#include "server/server_conf.h"
#include "server/spawn_args.h"
#include "base/paths.h"
#include "protocol/uexec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef server_command_fn cmd_fn;

static void bad(conn_t *c, json_t *id, const proto_err *e)
{
    conn_reply_error(c, id, e->code, e->message);
}

/* The session named by field "session" (or "session_id"), or NULL after
 * replying with the error. */
static session_t *session_arg(conn_t *c, json_t *id, json_t *req, const char *field)
{
    proto_err e;
    int64_t sid;
    if (proto_get_int(req, field, true, 0, INT32_MAX, &sid, &e) < 0) {
        bad(c, id, &e);
        return NULL;
    }
    session_t *s = server_find(conn_server(c), (int)sid);
    if (!s) {
        char msg[96];
        snprintf(msg, sizeof msg, "no session with id %lld", (long long)sid);
        conn_reply_error(c, id, PERR_NOT_FOUND, msg);
    }
    return s;
}

static session_t *start(conn_t *c, json_t *id, const launch_spec *r, char **warning)
{
    char err[2048];
    session_t *s = server_start_session(conn_server(c), r, conn_client(c), err, sizeof err, warning);
    if (!s)
        conn_reply_error(c, id, PERR_SPAWN, err);
    return s;
}

static void cmd_hello(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    int64_t version;
    const char *client = NULL;
    if (proto_get_int(req, "protocol", true, 0, 1000000, &version, &e) < 0 ||
        proto_get_string(req, "client", false, &client, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (version != PROTO_VERSION) {
        char msg[160];
        snprintf(msg, sizeof msg, "this server speaks protocol %d, the client %lld: restart the server "
                 "(corral server --stop) after upgrading corral", PROTO_VERSION, (long long)version);
        conn_reply_error(c, id, PERR_VERSION, msg);
        return;
    }
    char *name = sanitize_text(client ? client : "user", strlen(client ? client : "user"), 64);
    conn_set_client(c, name);
    free(name);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "protocol", json_integer(PROTO_VERSION));
    json_object_set_new(r, "server", json_string(PACKAGE_STRING));
    json_object_set_new(r, "pid", json_integer(getpid()));
    conn_send(c, r);
}

static void cmd_ls(conn_t *c, json_t *id, json_t *req)
{
    (void)req;
    conn_send(c, watch_list_reply(conn_server(c), id));
}

static void cmd_subscribe(conn_t *c, json_t *id, json_t *req)
{
    (void)req;
    watch_subscribe(c, id);
}

static void cmd_watch(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    int64_t history = conn_server(c)->conf.scrollback;
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    int64_t frame_ms = 0;
    if (proto_get_int(req, "history", false, 0, 1000000, &history, &e) < 0 ||
        proto_get_int(req, "frame_ms", false, 10, 1000, &frame_ms, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    watch_start(c, id, s, (int)history, (int)frame_ms);
}

static void cmd_unwatch(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    int64_t sid;
    /* Not session_arg: unwatching a session that has just gone is fine. */
    if (proto_get_int(req, "session", true, 0, INT32_MAX, &sid, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    watch_stop(c, id, (int)sid);
}

/* Keystrokes from a client that shows the session (the TUI): written at
 * once, no wait for output (that comes through the watch). */
static void cmd_input(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    const char *text = NULL, *b64 = NULL;
    bool quiet = false;
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    if (proto_get_string(req, "data", false, &text, &e) < 0 ||
        proto_get_string(req, "data_b64", false, &b64, &e) < 0 || proto_get_bool(req, "quiet", false, &quiet, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (!text == !b64) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "give exactly one of 'data' and 'data_b64'");
        return;
    }
    size_t len;
    char *bytes = text ? xstrdup(text) : base64_decode(b64, strlen(b64), &len);
    if (!bytes) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'data_b64' is not valid base64");
        return;
    }
    if (text)
        len = strlen(text);
    int r = session_write(s, bytes, len);
    free(bytes);
    if (r == -EPIPE) {
        conn_reply_error(c, id, PERR_STDIN_CLOSED, s->tty ? "the session's terminal is closed (it has exited)"
                                                          : "stdin is closed for this session");
        return;
    }
    if (r < 0) {
        conn_reply_error(c, id, PERR_BUSY, "the session is not reading its input (16 MiB are waiting)");
        return;
    }
    /* Used, but quietly: keystrokes need not tell every list client. */
    server_touch_quiet(conn_server(c), s);
    if (quiet)
        return; /* nothing to say but ok; errors are said all the same */
    json_t *ok = proto_ok(id);
    json_object_set_new(ok, "session", json_integer(s->id));
    conn_send(c, ok);
}

static void cmd_new(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    spawn_args a;
    bool pin = false, tty = true;
    if (spawn_args_read(c, id, req, "cwd", &a) < 0)
        return;
    if (proto_get_argv(req, "argv", false, &a.r.argv, &e) < 0 || proto_get_bool(req, "pin", false, &pin, &e) < 0 ||
        proto_get_bool(req, "tty", false, &tty, &e) < 0) {
        spawn_args_free(&a);
        bad(c, id, &e);
        return;
    }
    if (!a.r.argv) {
        a.r.argv = xcalloc(2, sizeof *a.r.argv);
        a.r.argv[0] = xstrdup(paths_user_shell());
    }
    a.r.tty = tty;
    a.r.pinned = pin;
    char *warning = NULL;
    session_t *s = start(c, id, &a.r, &warning);
    spawn_args_free(&a);
    if (!s)
        return;
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", server_session_json(conn_server(c), s));
    if (warning)
        json_object_set_new(r, "warning", json_string(warning));
    free(warning);
    conn_send(c, r);
}

static void cmd_write_stdin(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    const char *chars = "";
    int64_t yield = -1, max_tokens = UEXEC_DEFAULT_MAX_TOKENS;
    bool raw = false;
    session_t *s = session_arg(c, id, req, "session_id");
    if (!s)
        return;
    if (proto_get_string(req, "chars", false, &chars, &e) < 0 ||
        proto_get_int(req, "yield_time_ms", false, INT32_MIN, INT32_MAX, &yield, &e) < 0 ||
        proto_get_int(req, "max_output_tokens", false, 0, INT32_MAX, &max_tokens, &e) < 0 ||
        proto_get_bool(req, "raw", false, &raw, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (srv_session(s)->waiter) {
        conn_reply_error(c, id, PERR_BUSY, "another request is already waiting on this session; try again when it returns");
        return;
    }
    server_touch(conn_server(c), s);
    size_t n = strlen(chars);
    uint32_t settle = 0;
    if (n > 0) {
        if (!s->tty) {
            conn_reply_error(c, id, PERR_STDIN_CLOSED, UEXEC_STDIN_CLOSED_MSG);
            return;
        }
        /* Writing to a process that has exited is not an error: the reply
         * reports the exit (Codex does the same). */
        if (s->state == SESSION_RUNNING && session_write(s, chars, n) == 0)
            settle = UEXEC_POST_WRITE_SETTLE_MS;
    }
    uint32_t y = uexec_write_yield(yield, n == 0, conn_server(c)->conf.background_timeout_ms);
    waiter_start(c, id, s, y, settle, max_tokens, false, raw);
}

static void cmd_screen(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    bool history = false;
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    if (proto_get_bool(req, "history", false, &history, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    int first = history ? -vt_scrollback_len(s->vt) : 0;
    size_t len;
    char *text = vt_text(s->vt, first, vt_rows(s->vt) - 1, &len);
    int row, col;
    vt_cursor(s->vt, &row, &col);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "text", json_stringn(text, len));
    json_object_set_new(r, "rows", json_integer(vt_rows(s->vt)));
    json_object_set_new(r, "cols", json_integer(vt_cols(s->vt)));
    json_object_set_new(r, "cursor", json_pack("[i, i]", row, col));
    free(text);
    conn_send(c, r);
}

static void cmd_kill(conn_t *c, json_t *id, json_t *req)
{
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    if (s->finished && s->reaped) { /* else it answers once nothing of it is left */
        char state[64];
        session_state_text(s, state, sizeof state);
        json_t *r = proto_ok(id);
        json_object_set_new(r, "session", json_integer(s->id));
        json_object_set_new(r, "state", json_string(state));
        conn_send(c, r);
        return;
    }
    server_kill_and_wait(conn_server(c), c, id, s);
}

static void cmd_pin(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    bool pinned = true;
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    if (proto_get_bool(req, "pinned", false, &pinned, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    s->pinned = pinned;
    watch_session_changed(s);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", json_integer(s->id));
    json_object_set_new(r, "pinned", json_boolean(pinned));
    conn_send(c, r);
}

/* The sessions an rm names, checked before any goes: all or nothing. */
#define RM_MAX_IDS 1024

static int rm_named(conn_t *c, json_t *id, json_t *ids, session_t ***out, size_t *n)
{
    if (!json_is_array(ids) || json_array_size(ids) == 0 || json_array_size(ids) > RM_MAX_IDS) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'sessions' must be an array of 1 to 1024 session ids");
        return -1;
    }
    session_t **v = xcalloc(json_array_size(ids), sizeof *v);
    size_t k;
    json_t *e;
    *n = 0;
    json_array_foreach(ids, k, e) {
        char msg[200];
        json_int_t sid = json_integer_value(e);
        session_t *s = json_is_integer(e) && sid >= 0 && sid <= INT32_MAX ? server_find(conn_server(c), (int)sid) : NULL;
        if (!json_is_integer(e) || sid < 0 || sid > INT32_MAX) {
            snprintf(msg, sizeof msg, "field 'sessions' element %zu must be a session id (a number, see ls)", k);
            conn_reply_error(c, id, PERR_BAD_REQUEST, msg);
        } else if (!s) {
            snprintf(msg, sizeof msg, "no session with id %lld; nothing was removed", (long long)sid);
            conn_reply_error(c, id, PERR_NOT_FOUND, msg);
        } else if (s->state == SESSION_RUNNING) {
            snprintf(msg, sizeof msg, "session %d is still running: end it first (corral kill %d), then remove it; "
                     "nothing was removed", s->id, s->id);
            conn_reply_error(c, id, PERR_RUNNING, msg);
        } else {
            bool dup = false;
            for (size_t j = 0; j < *n && !dup; j++)
                dup = v[j] == s;
            if (!dup)
                v[(*n)++] = s;
            continue;
        }
        free(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* rm {sessions: [ID...]} or {exited: true}: exited sessions leave the
 * store; their directories (log, recording) stay on disk. */
static void cmd_rm(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    bool exited = false;
    json_t *ids = json_object_get(req, "sessions");
    if (json_is_null(ids))
        ids = NULL;
    if (proto_get_bool(req, "exited", false, &exited, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (!ids == !exited) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, ids ? "give either 'sessions' or 'exited', not both"
                                                      : "give 'sessions' (an array of session ids) or 'exited': true");
        return;
    }
    session_t **v = NULL;
    size_t n = 0;
    if (ids && rm_named(c, id, ids, &v, &n) < 0)
        return;
    if (exited) {
        /* Every exited one but the pinned: a pin says keep it. */
        size_t stored = store_len(&conn_server(c)->store);
        v = xcalloc(stored ? stored : 1, sizeof *v);
        for (size_t i = 0; i < stored; i++) {
            session_t *s = conn_server(c)->store.entries[i].item;
            if (s->state != SESSION_RUNNING && !s->pinned)
                v[n++] = s;
        }
    }
    json_t *removed = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(removed, json_integer(v[i]->id));
        server_remove_session(conn_server(c), v[i]);
    }
    free(v);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "removed", removed);
    conn_send(c, r);
}

static bool stored_session(int id, void *user)
{
    return server_find(user, id) != NULL;
}

/* layout {set: LAYOUT}: what this client's supervisor screen looks like,
 * kept for its next attach; without set, what was kept. */
static void cmd_layout(conn_t *c, json_t *id, json_t *req)
{
    json_t *set = json_object_get(req, "set");
    if (set && !json_is_null(set)) {
        proto_err e;
        json_t *clean = layouts_clean(set, stored_session, conn_server(c), &e);
        if (!clean) {
            bad(c, id, &e);
            return;
        }
        layouts_set(conn_client(c), clean);
    }
    json_t *kept = layouts_get(conn_client(c));
    json_t *r = proto_ok(id);
    json_object_set_new(r, "layout", kept ? json_deep_copy(kept) : json_object());
    conn_send(c, r);
}

static void cmd_resize(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    int64_t rows, cols;
    session_t *s = session_arg(c, id, req, "session");
    if (!s)
        return;
    if (proto_get_int(req, "rows", true, 1, 1000, &rows, &e) < 0 ||
        proto_get_int(req, "cols", true, 1, 1000, &cols, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (s->state != SESSION_RUNNING) {
        char msg[160];
        snprintf(msg, sizeof msg, "session %d has exited: its terminal is not resized (its last screen stays as it "
                 "was)", s->id);
        conn_reply_error(c, id, PERR_EXITED, msg);
        return;
    }
    session_resize(s, (int)rows, (int)cols);
    watch_size_asked(c, s, (int)rows, (int)cols);
    watch_session_resized(s);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", json_integer(s->id));
    conn_send(c, r);
}

static void cmd_shutdown(conn_t *c, json_t *id, json_t *req)
{
    (void)req;
    json_t *r = proto_ok(id);
    json_object_set_new(r, "pid", json_integer(getpid()));
    conn_send(c, r);
    server_begin_shutdown(conn_server(c));
}

/* reload: read the config file again (server_conf.c). */
static void cmd_reload(conn_t *c, json_t *id, json_t *req)
{
    (void)req;
    json_t *r = proto_ok(id);
    json_t *fields = server_conf_reload(conn_server(c));
    json_object_update(r, fields);
    json_decref(fields);
    conn_send(c, r);
}

static const struct {
    const char *name;
    cmd_fn fn;
} commands[] = {
    {"hello", cmd_hello}, {"ls", cmd_ls}, {"new", cmd_new},
    {"write_stdin", cmd_write_stdin}, {"screen", cmd_screen}, {"kill", cmd_kill},
    {"pin", cmd_pin}, {"resize", cmd_resize}, {"shutdown", cmd_shutdown},
    {"subscribe", cmd_subscribe}, {"watch", cmd_watch}, {"unwatch", cmd_unwatch}, {"input", cmd_input},
    {"rm", cmd_rm}, {"layout", cmd_layout}, {"reload", cmd_reload},
};

/* The command called name: the core's, then each module's (module.h). */
static cmd_fn find_command(server_t *srv, const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn;
    for (const server_module *const *m = srv->modules; *m; m++)
        for (const server_command *k = (*m)->commands; k && k->name; k++)
            if (strcmp(k->name, name) == 0)
                return k->fn;
    return NULL;
}

void dispatch(conn_t *c, json_t *id, json_t *req)
{
    const char *name = json_string_value(json_object_get(req, "cmd"));
    cmd_fn fn = find_command(conn_server(c), name);
    if (fn) {
        if (!conn_client(c) && fn != cmd_hello) {
            conn_reply_error(c, id, PERR_NEED_HELLO, "send {\"cmd\":\"hello\",\"protocol\":1} first");
            return;
        }
        fn(c, id, req);
        return;
    }
    char msg[200];
    char *safe = sanitize_text(name, strlen(name), 64);
    snprintf(msg, sizeof msg, "unknown command '%s'", safe);
    free(safe);
    conn_reply_error(c, id, PERR_UNKNOWN_CMD, msg);
}
