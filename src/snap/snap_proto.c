/*
 * snap_proto.c - the protocol commands of snapshots (docs/protocol.md):
 * commands (a session's commands and their records), diff (text as git
 * prints it, or the file list for the screen), revert (one command's
 * changes undone, or what that would do) and gc (maintenance of every
 * store now).  Every field is checked; the work runs in the workspace's
 * queue, behind the snapshots already asked for, so a diff asked for right
 * after a command sees its "after".
 */
#include "config.h"

#include "snap/snap_server_int.h"
#include "protocol/proto.h"

#include "snap/snap_gc.h"
#include "snap/snap_gitdir.h"
#include "snap/snap_patch.h"
#include "snap/snap_remote.h"
#include "snap/snap_storewire.h"
#include "base/util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Patch text in one reply, at most. */
#define DIFF_TEXT_MAX (32u << 20)

static void bad(conn_t *c, json_t *id, const proto_err *e)
{
    conn_reply_error(c, id, e->code, e->message);
}

/* The session's snapshot records, or NULL after an error reply. */
static snap_sess *sess_arg(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    int64_t sid;
    if (proto_get_int(req, "session", true, 0, INT32_MAX, &sid, &e) < 0) {
        bad(c, id, &e);
        return NULL;
    }
    snap_sess *x = snap_sess_find((int)sid);
    if (!x) {
        char msg[1100];
        if (server_find(conn_server(c), (int)sid) && snap_off_reason())
            snprintf(msg, sizeof msg, "session %lld has no snapshots: %s", (long long)sid, snap_off_reason());
        else if (server_find(conn_server(c), (int)sid))
            snprintf(msg, sizeof msg, "session %lld has no snapshots (snapshots are off: [snapshots] enabled)",
                     (long long)sid);
        else
            snprintf(msg, sizeof msg, "no session with id %lld", (long long)sid);
        conn_reply_error(c, id, PERR_NOT_FOUND, msg);
    }
    return x;
}

/* Field name: a command number of x, or "last".  NULL after an error reply. */
static snap_cmd *cmd_arg(conn_t *c, json_t *id, snap_sess *x, json_t *v, const char *name)
{
    char msg[300];
    if (!v || (json_is_string(v) && strcmp(json_string_value(v), "last") == 0)) {
        for (size_t i = x->n_cmds; i-- > 0;)
            if (x->cmds[i]->state != CMD_DROPPED && x->cmds[i]->n > 0)
                return x->cmds[i];
        snprintf(msg, sizeof msg, "session %d has no commands yet", x->id);
        conn_reply_error(c, id, PERR_NOT_FOUND, msg);
        return NULL;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX) {
        snprintf(msg, sizeof msg, "field '%s' must be a command number (1, 2, ...) or \"last\"", name);
        conn_reply_error(c, id, PERR_BAD_REQUEST, msg);
        return NULL;
    }
    int n = (int)json_integer_value(v);
    for (size_t i = 0; i < x->n_cmds; i++)
        if (x->cmds[i]->n == n && x->cmds[i]->state != CMD_DROPPED)
            return x->cmds[i];
    snprintf(msg, sizeof msg, "session %d has no command %d (corral diff %d --list lists them)", x->id, n, x->id);
    conn_reply_error(c, id, PERR_NOT_FOUND, msg);
    return NULL;
}

/* ---- commands ------------------------------------------------------------------ */

static void cmd_snap_commands(conn_t *c, json_t *id, json_t *req)
{
    snap_sess *x = sess_arg(c, id, req);
    if (!x)
        return;
    json_t *list = json_array();
    for (size_t i = 0; i < x->n_cmds; i++)
        if (x->cmds[i]->n > 0) /* an agent session's stretch is numbered at its end, if at all */
            json_array_append_new(list, snap_cmd_json(x->cmds[i]));
    json_t *r = proto_ok(id);
    json_object_set_new(r, "session", json_integer(x->id));
    json_object_set_new(r, "workspace", json_string(x->ws->path));
    json_object_set_new(r, "snapshots", snap_ws_json(x->ws));
    json_object_set_new(r, "commands", list);
    conn_send(c, r);
}

/* ---- diff ------------------------------------------------------------------------- */

typedef struct diff_req {
    conn_t *conn;
    json_t *id;
    snap_cmd *from, *to;      /* command range (held), or NULL */
    bool since_start;
    char start[SNAP_OID_HEX], end[SNAP_OID_HEX];
    snap_format fmt;
    snap_patch_opts opts;
    /* worker results */
    char before[SNAP_OID_HEX], after[SNAP_OID_HEX];
    buf_t text;
    json_t *files;
    int rc;
    char err[700];
} diff_req;

static void diff_req_free(diff_req *d)
{
    snap_cmd_unref(d->from);
    snap_cmd_unref(d->to);
    buf_free(&d->text);
    json_decref(d->files);
    json_decref(d->id);
    conn_release(d->conn);
    free(d);
}

/* Worker: the two snapshots are known now (a command's "after" is set
 * once its end's job is done, which ran before this one); an "after" not
 * known yet is the snapshot this job takes (the store's process fills it
 * in, and says which it was). */
static json_t *diff_params(snap_job *j)
{
    diff_req *d = j->data;
    if (d->since_start) {
        snprintf(d->before, sizeof d->before, "%s", d->start);
        snprintf(d->after, sizeof d->after, "%s", d->end);
    } else {
        snprintf(d->before, sizeof d->before, "%s", d->from->before);
        snprintf(d->after, sizeof d->after, "%s", d->to->after);
    }
    if (!d->before[0]) {
        snprintf(d->err, sizeof d->err, "%s",
                 d->from && d->from->error ? d->from->error : "there is no snapshot from before it");
        d->rc = -1;
        return NULL;
    }
    return json_pack("{s:s, s:s, s:i, s:b, s:I}", "before", d->before, "after", d->after, "format", (int)d->fmt,
                     "ignore_space", d->opts.ignore_space, "max", (json_int_t)DIFF_TEXT_MAX);
}

static void diff_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    diff_req *d = j->data;
    if (!a) {
        snprintf(d->err, sizeof d->err, "%s", err);
        d->rc = -1;
        return;
    }
    d->rc = (int)json_integer_value(json_object_get(a, "rc"));
    if (json_object_get(a, "err"))
        ssw_str_copy(json_object_get(a, "err"), d->err, sizeof d->err);
    ssw_str_copy(json_object_get(a, "after"), d->after, sizeof d->after);
    if (json_is_object(json_object_get(a, "files")))
        d->files = json_incref(json_object_get(a, "files"));
    buf_append(&d->text, text, text_len);
}

static const snap_op diff_op = {"diff", diff_params, diff_answer};

/* What corral made inert after the command (its record has it, a fresh
 * diff of its snapshots cannot): first among the risk marks shown. */
static void add_quarantined(json_t *changes, const diff_req *d)
{
    if (!d->to || d->from != d->to || !d->to->changes)
        return;
    json_t *risk = json_object_get(changes, "risk");
    if (!json_is_array(risk))
        return;
    size_t i, at = 0;
    json_t *x;
    json_array_foreach(json_object_get(d->to->changes, "risk"), i, x)
        if (json_is_true(json_object_get(x, "quarantined")))
            json_array_insert(risk, at++, x);
}

static void diff_after(snap_job *j)
{
    diff_req *d = j->data;
    if (!conn_closing(d->conn)) {
        if (j->rc < 0 && !d->err[0]) {
            d->rc = -1;
            snprintf(d->err, sizeof d->err, "%s", j->err);
        }
        if (d->rc < 0) {
            conn_reply_error(d->conn, d->id, j->cancelled ? PERR_SHUTTING_DOWN : PERR_INTERNAL, d->err);
        } else {
            json_t *r = proto_ok(d->id);
            json_object_set_new(r, "before", json_string(d->before));
            json_object_set_new(r, "after", json_string(d->after));
            if (d->to) {
                json_object_set_new(r, "command", json_integer(d->to->n));
                json_object_set_new(r, "record", snap_cmd_json(d->to));
            }
            if (d->files) {
                json_object_set_new(r, "files", json_incref(json_object_get(d->files, "files")));
                json_object_set_new(r, "changes", json_incref(d->files));
                json_object_del(json_object_get(r, "changes"), "files");
                add_quarantined(json_object_get(r, "changes"), d);
            } else {
                const char *t = d->text.data ? d->text.data : "";
                if (utf8_valid_prefix(t, d->text.len) == d->text.len) {
                    json_object_set_new(r, "text", json_stringn(t, d->text.len));
                } else {
                    size_t n;
                    char *b64 = base64_encode(t, d->text.len, &n);
                    json_object_set_new(r, "text_b64", json_stringn(b64, n));
                    free(b64);
                }
            }
            conn_send(d->conn, r);
        }
    }
    diff_req_free(d);
}

static int format_arg(const char *f, snap_format *out)
{
    static const struct {
        const char *name;
        snap_format fmt;
    } names[] = {{"patch", SNAP_FMT_PATCH}, {"name-status", SNAP_FMT_NAME_STATUS}, {"stat", SNAP_FMT_STAT},
                 {"files", SNAP_FMT_FILES}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(f, names[i].name) == 0)
            return *out = names[i].fmt, 0;
    return -1;
}

static bool oid_ok(const char *s)
{
    size_t n = 0;
    while (s[n] && hex_value((unsigned char)s[n]) >= 0)
        n++;
    return n == SNAP_OID_HEX - 1 && s[n] == '\0';
}

/* Whether workspace ws_path (a request's absolute path) has a store;
 * else false after a not_found reply.  Only a store that exists is used:
 * never one made for a request by snapshot ids. */
static bool store_exists(conn_t *c, json_t *id, const char *ws_path)
{
    const char *dir = snap_queue_dir();
    if (!dir) {
        conn_reply_error(c, id, PERR_NOT_FOUND,
                         snap_off_reason() ? snap_off_reason() : "snapshots are off ([snapshots] enabled = false)");
        return false;
    }
    char *store = snap_store_dir_for(dir, ws_path), *wsfile = xasprintf("%s/workspace", store);
    char *named = snap_read_small(wsfile, PATH_MAX + 2, NULL);
    bool found = named && strncmp(named, ws_path, strlen(ws_path)) == 0 &&
                 (named[strlen(ws_path)] == '\n' || named[strlen(ws_path)] == '\0');
    free(named);
    free(wsfile);
    free(store);
    if (!found) {
        char msg[PATH_MAX + 200];
        snprintf(msg, sizeof msg, "there is no snapshot store for %s (its snapshots were removed, or never taken)",
                 ws_path);
        conn_reply_error(c, id, PERR_NOT_FOUND, msg);
    }
    return found;
}

/* The fields of a request by snapshot ids: an absolute workspace and two
 * ids.  false after an error reply. */
static bool ids_args(conn_t *c, json_t *id, json_t *req, const char **ws_path, const char **before,
                     const char **after)
{
    proto_err e;
    if (proto_get_string(req, "workspace", true, ws_path, &e) < 0 ||
        proto_get_string(req, "before", true, before, &e) < 0 || proto_get_string(req, "after", true, after, &e) < 0) {
        bad(c, id, &e);
        return false;
    }
    if ((*ws_path)[0] != '/' || strlen(*ws_path) >= PATH_MAX) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'workspace' must be an absolute path");
        return false;
    }
    if (!oid_ok(*before) || !oid_ok(*after)) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "fields 'before' and 'after' must be snapshot ids (40 hex digits)");
        return false;
    }
    return store_exists(c, id, *ws_path);
}

static void diff_ids_after(snap_job *j)
{
    snap_ws *ws = j->ws;
    diff_after(j);
    /* A store no session uses closes again once its queue is empty. */
    if (ws->refs == 0)
        snap_ws_idle(ws);
}

/* diff {workspace, before, after}: two snapshots of a workspace's store by
 * their ids, as a command's record names them: the diff of a command of a
 * session the server no longer has (ended before it restarted, removed
 * from its list), for corral export. */
static void diff_ids(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    const char *ws_path, *before, *after, *format = "patch";
    bool ignore_space = false;
    if (proto_get_string(req, "format", false, &format, &e) < 0 ||
        proto_get_bool(req, "ignore_space", false, &ignore_space, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (!ids_args(c, id, req, &ws_path, &before, &after))
        return;
    diff_req *d = xcalloc(1, sizeof *d);
    buf_init(&d->text);
    if (format_arg(format, &d->fmt) < 0) {
        free(d);
        conn_reply_error(c, id, PERR_BAD_REQUEST,
                         "field 'format' must be \"patch\", \"name-status\", \"stat\" or \"files\"");
        return;
    }
    d->opts.ignore_space = ignore_space;
    d->since_start = true; /* from start to end: the two ids */
    snprintf(d->start, sizeof d->start, "%s", before);
    snprintf(d->end, sizeof d->end, "%s", after);
    d->conn = conn_ref(c);
    d->id = json_incref(id);
    snap_job_submit(snap_job_new(snap_ws_get(ws_path), false, &diff_op, diff_ids_after, d));
}

static void cmd_snap_diff(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    const char *format = "patch";
    bool since_start = false, ignore_space = false;
    if (!json_object_get(req, "session") && json_object_get(req, "workspace")) {
        diff_ids(c, id, req);
        return;
    }
    snap_sess *x = sess_arg(c, id, req);
    if (!x)
        return;
    if (proto_get_string(req, "format", false, &format, &e) < 0 ||
        proto_get_bool(req, "since_start", false, &since_start, &e) < 0 ||
        proto_get_bool(req, "ignore_space", false, &ignore_space, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    diff_req *d = xcalloc(1, sizeof *d);
    buf_init(&d->text);
    if (format_arg(format, &d->fmt) < 0) {
        free(d);
        conn_reply_error(c, id, PERR_BAD_REQUEST,
                         "field 'format' must be \"patch\", \"name-status\", \"stat\" or \"files\"");
        return;
    }
    d->opts.ignore_space = ignore_space;
    json_t *between = json_object_get(req, "between");
    json_t *command = json_object_get(req, "command");
    if ((between != NULL) + (command != NULL) + since_start > 1) {
        free(d);
        conn_reply_error(c, id, PERR_BAD_REQUEST, "give at most one of 'command', 'between' and 'since_start'");
        return;
    }
    if (since_start) {
        if (!x->start_commit[0]) {
            free(d);
            conn_reply_error(c, id, PERR_NOT_FOUND,
                             x->ws->message[0] ? x->ws->message : "the session's first snapshot is not taken yet");
            return;
        }
        d->since_start = true;
        snprintf(d->start, sizeof d->start, "%s", x->start_commit);
        if (x->ended && !x->open)
            snprintf(d->end, sizeof d->end, "%s", x->end_commit);
    } else if (between) {
        if (!json_is_array(between) || json_array_size(between) != 2) {
            free(d);
            conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'between' must be [I, J]: two command numbers");
            return;
        }
        d->from = cmd_arg(c, id, x, json_array_get(between, 0), "between");
        d->to = d->from ? cmd_arg(c, id, x, json_array_get(between, 1), "between") : NULL;
        if (d->from && d->to && d->from->n > d->to->n) {
            conn_reply_error(c, id, PERR_BAD_REQUEST, "'between' goes from the earlier command to the later");
            d->to = NULL;
        }
        if (!d->to) {
            free(d);
            return;
        }
    } else {
        d->from = d->to = cmd_arg(c, id, x, command, "command");
        if (!d->to) {
            free(d);
            return;
        }
    }
    if (d->from)
        d->from->refs++;
    if (d->to)
        d->to->refs++;
    d->conn = conn_ref(c);
    d->id = json_incref(id);
    snap_job_submit(snap_observe(x, &diff_op, diff_after, d));
}

/* ---- revert --------------------------------------------------------------------- */

typedef struct revert_req {
    conn_t *conn;
    json_t *id;
    int session;        /* 0: a command of a session the server no longer has */
    snap_cmd *target;   /* held; NULL for a revert by snapshot ids */
    int n;              /* the command's number, for the messages and the reply */
    char before[SNAP_OID_HEX], after[SNAP_OID_HEX]; /* by ids: its record's snapshots */
    snap_cmd *self;     /* the revert as a command (not dry-run; a session the server has) */
    bool dry_run;
    size_t conflicts;   /* files changed again since the command: nothing was done */
    json_t *plan_json;
    int rc;
    char err[700];
} revert_req;

static void revert_req_free(revert_req *r)
{
    snap_cmd_unref(r->target);
    snap_cmd_unref(r->self);
    json_decref(r->plan_json);
    json_decref(r->id);
    conn_release(r->conn);
    free(r);
}

static void revert_reply(revert_req *r, bool reverted)
{
    if (conn_closing(r->conn))
        return;
    if (r->rc < 0 && !r->plan_json) {
        conn_reply_error(r->conn, r->id, PERR_INTERNAL, r->err);
        return;
    }
    json_t *o = proto_ok(r->id);
    if (r->session)
        json_object_set_new(o, "session", json_integer(r->session));
    if (r->n)
        json_object_set_new(o, "command", json_integer(r->n));
    json_object_set_new(o, "dry_run", json_boolean(r->dry_run));
    json_object_set_new(o, "reverted", json_boolean(reverted));
    if (r->plan_json)
        json_object_update(o, r->plan_json);
    if (r->self)
        json_object_set_new(o, "revert_command", json_integer(r->self->n));
    if (r->err[0])
        json_object_set_new(o, "message", json_string(r->err));
    conn_send(r->conn, o);
}

/* Worker: plan against "now" (the revert's own "before", or the snapshot
 * this job takes, which the store's process fills in), and carry it out
 * unless it is a dry run. */
static json_t *revert_params(snap_job *j)
{
    revert_req *r = j->data;
    if (r->target) {
        snprintf(r->before, sizeof r->before, "%s", r->target->before);
        snprintf(r->after, sizeof r->after, "%s", r->target->after);
    }
    if (!r->before[0] || !r->after[0]) {
        const char *why = r->target ? r->target->error : NULL;
        snprintf(r->err, sizeof r->err, "command %d has no snapshots to revert from%s%s", r->n, why ? ": " : "",
                 why ? why : "");
        r->rc = -1;
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:b, s:i}", "before", r->before, "after", r->after, "now",
                     r->self ? r->self->before : "", "dry_run", r->dry_run, "n", r->n);
}

static void revert_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    (void)text;
    (void)text_len;
    revert_req *r = j->data;
    if (!a) {
        snprintf(r->err, sizeof r->err, "%s", err);
        r->rc = -1;
        return;
    }
    r->rc = (int)json_integer_value(json_object_get(a, "rc"));
    r->conflicts = (size_t)json_integer_value(json_object_get(a, "conflicts"));
    if (json_object_get(a, "err"))
        ssw_str_copy(json_object_get(a, "err"), r->err, sizeof r->err);
    if (json_is_object(json_object_get(a, "plan")))
        r->plan_json = json_incref(json_object_get(a, "plan"));
}

static const snap_op revert_op = {"revert", revert_params, revert_answer};

static void revert_done(snap_job *j)
{
    revert_req *r = j->data;
    int r_session = r->session;
    bool reverted = !r->dry_run && r->rc == 0 && r->conflicts == 0;
    if (j->rc < 0 && !r->err[0])
        snprintf(r->err, sizeof r->err, "%s", j->err);
    if (j->rc < 0)
        r->rc = -1;
    revert_reply(r, reverted);
    snap_sess *x = r->session ? snap_sess_find(r->session) : NULL;
    if (r->self && x)
        snap_revert_cmd_end(x, r->self);
    revert_req_free(r);
    /* By ids, no session holds the store: it closes again once its queue
     * is empty, as after a diff by ids. */
    if (!r_session && j->ws->refs == 0)
        snap_ws_idle(j->ws);
}

static void revert_go(void *user, snap_cmd *c, bool stopping)
{
    revert_req *r = user;
    (void)c;
    snap_sess *x = snap_sess_find(r->session);
    if (stopping || !x) {
        r->rc = -1;
        snprintf(r->err, sizeof r->err, "the server is stopping: nothing was reverted");
        revert_reply(r, false);
        if (x && r->self)
            snap_revert_cmd_end(x, r->self);
        revert_req_free(r);
        return;
    }
    snap_job_submit(snap_job_new(x->ws, false, &revert_op, revert_done, r));
}

/* revert {workspace, before, after}: the command of a session the server
 * no longer has (ended before it restarted, removed from its list), by the
 * snapshot ids of its record, as diff by ids.  The same plan and the same
 * checks as a revert by command: "now" is a snapshot this job takes first,
 * in the workspace's queue behind every other, so a file changed since the
 * command is a conflict and nothing is done.  There is no session to
 * record it as a command of; the workspace's next boundary walks, so the
 * next command's "before" includes what it wrote. */
static void revert_ids(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    const char *ws_path, *before, *after;
    bool dry_run = false;
    int64_t n = 0;
    if (proto_get_bool(req, "dry_run", false, &dry_run, &e) < 0 ||
        proto_get_int(req, "command", false, 1, INT32_MAX, &n, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    if (!ids_args(c, id, req, &ws_path, &before, &after))
        return;
    revert_req *r = xcalloc(1, sizeof *r);
    r->conn = conn_ref(c);
    r->id = json_incref(id);
    r->n = (int)n;
    snprintf(r->before, sizeof r->before, "%s", before);
    snprintf(r->after, sizeof r->after, "%s", after);
    r->dry_run = dry_run;
    snap_job *j = snap_job_new(snap_ws_get(ws_path), true, &revert_op, revert_done, r);
    j->force = true; /* "now" is what is on disk, whatever the watch says */
    snap_job_submit(j);
}

static void cmd_snap_revert(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    bool dry_run = false;
    if (!json_object_get(req, "session") && json_object_get(req, "workspace")) {
        revert_ids(c, id, req);
        return;
    }
    snap_sess *x = sess_arg(c, id, req);
    if (!x)
        return;
    if (proto_get_bool(req, "dry_run", false, &dry_run, &e) < 0) {
        bad(c, id, &e);
        return;
    }
    json_t *cmd = json_object_get(req, "command");
    if (!cmd) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, "field 'command' is required: the command number (or \"last\")");
        return;
    }
    snap_cmd *target = cmd_arg(c, id, x, cmd, "command");
    if (!target)
        return;
    /* Ending is fine: its "after" is queued before this request's job. */
    if (target->state != CMD_DONE && target->state != CMD_ENDING) {
        char msg[200];
        snprintf(msg, sizeof msg, "command %d of session %d has not ended yet: revert it once it has", target->n,
                 x->id);
        conn_reply_error(c, id, PERR_RUNNING, msg);
        return;
    }
    revert_req *r = xcalloc(1, sizeof *r);
    r->conn = conn_ref(c);
    r->id = json_incref(id);
    r->session = x->id;
    r->target = target;
    r->n = target->n;
    target->refs++;
    r->dry_run = dry_run;
    if (dry_run) {
        snap_job_submit(snap_observe(x, &revert_op, revert_done, r));
        return;
    }
    char line[64];
    snprintf(line, sizeof line, "corral revert %d %d", x->id, target->n);
    r->self = snap_revert_cmd_begin(x, line, conn_client(c), revert_go, r);
    r->self->refs++;
}

/* ---- gc ----------------------------------------------------------------------------- */

typedef struct gc_req {
    json_t *stores;
    int pending;
    snap_gc_gone *gone;
    size_t n_gone;
    snap_gc_done_fn done;
    void *user;
} gc_req;

typedef struct gc_one {
    gc_req *req;
    char **live;
    size_t n_live;
    bool force;
    int forgotten;
    snap_gc_result res;
    int rc;
} gc_one;

static json_t *gc_params(snap_job *j)
{
    gc_one *g = j->data;
    json_t *gone = json_array();
    for (size_t i = 0; i < g->req->n_gone; i++)
        json_array_append_new(gone, json_pack("[i, f, f]", g->req->gone[i].id, g->req->gone[i].start_lo,
                                              g->req->gone[i].start_hi));
    j->measure = true;
    return json_pack("{s:o, s:o, s:b}", "gone", gone, "live", ssw_strings(g->live, g->n_live), "force", g->force);
}

static void gc_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    (void)j;
    (void)text;
    (void)text_len;
    gc_one *g = j->data;
    if (!a) {
        snprintf(g->res.error, sizeof g->res.error, "%s", err);
        g->rc = -1;
        return;
    }
    g->forgotten = (int)json_integer_value(json_object_get(a, "forgotten"));
    g->rc = (int)json_integer_value(json_object_get(a, "rc"));
    g->res.bytes_before = (uint64_t)json_integer_value(json_object_get(a, "bytes_before"));
    g->res.bytes_after = (uint64_t)json_integer_value(json_object_get(a, "bytes_after"));
    g->res.sessions_dropped = (int)json_integer_value(json_object_get(a, "sessions_dropped"));
    g->res.repacked = json_is_true(json_object_get(a, "repacked"));
    ssw_str_copy(json_object_get(a, "error"), g->res.error, sizeof g->res.error);
}

static const snap_op gc_op = {"gc", gc_params, gc_answer};

static void gc_finish(gc_req *q)
{
    q->done(q->stores, NULL, q->user);
    json_decref(q->stores);
    free(q->gone);
    free(q);
}

static void gc_done(snap_job *j)
{
    gc_one *g = j->data;
    gc_req *q = g->req;
    json_t *o = json_pack("{s:s, s:I, s:I, s:i, s:b}", "workspace", j->ws->path, "bytes_before",
                          (json_int_t)g->res.bytes_before, "bytes_after", (json_int_t)g->res.bytes_after,
                          "sessions_dropped", g->res.sessions_dropped + g->forgotten, "repacked", g->res.repacked);
    const char *err = j->rc < 0 ? j->err : g->res.error;
    if (err[0])
        json_object_set_new(o, "error", json_string(err));
    json_array_append_new(q->stores, o);
    for (size_t i = 0; i < g->n_live; i++)
        free(g->live[i]);
    free(g->live);
    free(g);
    /* A store no session uses closes again once its queue is empty. */
    if (j->ws->refs == 0)
        snap_ws_idle(j->ws);
    if (--q->pending == 0)
        gc_finish(q);
}

void snap_gc_all(const snap_gc_gone *gone, size_t n_gone, bool force, snap_gc_done_fn done, void *user)
{
    const char *dir = snap_queue_dir();
    if (!dir) {
        done(NULL, snap_off_reason() ? snap_off_reason() : "snapshots are off ([snapshots] enabled = false)", user);
        return;
    }
    /* Every store on disk, not only the ones this server opened. */
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s/workspace", dir, e->d_name);
        char *ws = snap_read_small(path, PATH_MAX + 2, NULL);
        if (ws) {
            ws[strcspn(ws, "\n")] = '\0';
            if (ws[0] == '/')
                snap_ws_get(ws);
        }
        free(ws);
    }
    if (d)
        closedir(d);
    gc_req *q = xcalloc(1, sizeof *q);
    q->stores = json_array();
    q->done = done;
    q->user = user;
    if (n_gone) {
        q->gone = xcalloc(n_gone, sizeof *q->gone);
        memcpy(q->gone, gone, n_gone * sizeof *gone);
        q->n_gone = n_gone;
    }
    q->pending = 1; /* until every job is queued */
    for (link_t *l = snap_ws_all()->next; l != snap_ws_all(); l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        if (ws->state == WS_REFUSED)
            continue;
        gc_one *g = xcalloc(1, sizeof *g);
        g->req = q;
        g->force = force;
        g->live = snap_live_keys(ws, &g->n_live); /* running sessions keep everything */
        q->pending++;
        snap_job_submit(snap_job_new(ws, false, &gc_op, gc_done, g));
    }
    if (--q->pending == 0)
        gc_finish(q);
}

static const server_command snap_commands[] = {
    {"commands", cmd_snap_commands}, {"diff", cmd_snap_diff}, {"revert", cmd_snap_revert}, {NULL, NULL}};

const server_module snap_commands_module = {
    .name = "snap_commands",
    .commands = snap_commands,
};
