/*
 * snap_server.c - see snap_server.h: sessions and their commands in the
 * snapshot queue of their workspace, boundaries, attribution, and each
 * command's record in its session's events.jsonl.
 */
#include "config.h"

#include "snap/snap_server_int.h"

#include "server/cmdmark.h"
#include "server/log.h"
#include "server/waiter.h"
#include "server/watch.h"
#include "base/paths.h"
#include "config/sbconf.h"
#include "base/quote.h"
#include "protocol/uexec.h"
#include "snap/snap_hold.h"
#include "snap/snap_reader.h"
#include "snap/snap_remote.h"
#include "snap/snap_storewire.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A command waits this long for its "before" snapshot, then runs anyway
 * (marked late): the first snapshot of a large workspace goes on in the
 * background. */
#define LATE_MS 5000
/* Commands recorded per session: a process that sends marks in a loop
 * must not grow the server without bound. */
#define MAX_CMDS 20000
/* An agent session's commands running at once, at most: a start mark past
 * it is answered without a command. */
#define MAX_AGENT_OPEN 64
/* An agent command's line, at most, in bytes (the cut is marked). */
#define AGENT_LINE_MAX 4096
/* Maintenance of every open store this often (retention, repack). */
#define MAINTAIN_MS (6u * 3600 * 1000)

/* Every command's identity by serial, for "shared with" in records
 * written after the other command's session is gone. */
typedef struct reg_entry {
    long serial;
    int session, n;
} reg_entry;

static struct {
    server_t *srv;
    bool on;
    link_t sessions; /* snap_sess.node */
    long serial;
    uv_timer_t maintain;
    reg_entry *reg;
    size_t n_reg;
} S;

static reg_entry *reg_find(long serial)
{
    size_t lo = 0, hi = S.n_reg;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (S.reg[mid].serial < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < S.n_reg && S.reg[lo].serial == serial ? &S.reg[lo] : NULL;
}

/* What the registry knows of c (its session and number) now. */
static void reg_update(const snap_cmd *c)
{
    reg_entry *e = reg_find(c->serial);
    if (!e) {
        S.reg = xrealloc(S.reg, (S.n_reg + 1) * sizeof *S.reg);
        e = &S.reg[S.n_reg++];
        e->serial = c->serial;
    }
    e->session = c->session;
    e->n = c->state == CMD_DROPPED ? 0 : c->n;
}

server_t *snap_server(void)
{
    return S.srv;
}

const char *snap_off_reason(void)
{
    return snap_remote_load_failure();
}

/* ---- commands ---------------------------------------------------------------- */

static snap_cmd *cmd_new(snap_ws *ws, const char *line)
{
    snap_cmd *c = xcalloc(1, sizeof *c);
    c->serial = ++S.serial;
    c->refs = 1;
    c->line = xstrdup(line);
    c->started = wall_sec();
    c->ws = ws;
    link_init(&c->active_node);
    return c;
}

static void timer_closed(uv_handle_t *h)
{
    snap_cmd *c = h->data;
    free(h);
    snap_cmd_unref(c);
}

void snap_cmd_unref(snap_cmd *c)
{
    if (!c || --c->refs > 0)
        return;
    link_del(&c->active_node);
    free(c->line);
    free(c->cwd);
    free(c->by);
    free(c->error);
    free(c->events_path);
    free(c->shared);
    json_decref(c->changes);
    free(c);
}

/* Call the command's go once (the snapshot is there, or late, or the
 * server stops), and drop the late timer. */
static void fire_go(snap_cmd *c, bool stopping)
{
    if (c->late_timer) {
        uv_timer_stop(c->late_timer);
        uv_close((uv_handle_t *)c->late_timer, timer_closed); /* its ref goes with it */
        c->late_timer = NULL;
    }
    snap_go_fn go = c->go;
    c->go = NULL;
    if (go)
        go(c->go_user, c, stopping);
}

static void on_late(uv_timer_t *t)
{
    snap_cmd *c = t->data;
    c->late = true;
    fire_go(c, false);
}

static void add_shared(snap_cmd *c, long serial)
{
    for (size_t i = 0; i < c->n_shared; i++)
        if (c->shared[i] == serial)
            return;
    c->shared = xrealloc(c->shared, (c->n_shared + 1) * sizeof *c->shared);
    c->shared[c->n_shared++] = serial;
}

/* The display of an exec's command: the line of "SHELL -c LINE", else
 * the argv shell-quoted. */
static char *exec_line(char *const *argv)
{
    if (argv && argv[0] && argv[1] && argv[2] && !argv[3] &&
        (strcmp(argv[1], "-c") == 0 || strcmp(argv[1], "-lc") == 0)) {
        /* As it is, but valid UTF-8: the record is JSON. */
        size_t n;
        return uexec_lossy_utf8(argv[2], strlen(argv[2]), &n);
    }
    return quote_argv_display(argv);
}

/* ---- sessions ---------------------------------------------------------------------- */

snap_sess *snap_sess_find(int id)
{
    for (link_t *l = S.sessions.next; S.on && l != &S.sessions; l = l->next) {
        snap_sess *x = link_entry(l, snap_sess, node);
        if (x->id == id)
            return x;
    }
    return NULL;
}

static void sess_add_cmd(snap_sess *x, snap_cmd *c)
{
    c->refs++;
    x->cmds = xrealloc(x->cmds, (x->n_cmds + 1) * sizeof *x->cmds);
    x->cmds[x->n_cmds++] = c;
    c->session = x->id;
    free(c->events_path);
    c->events_path = x->events_path ? xstrdup(x->events_path) : NULL;
    reg_update(c);
}

static void sess_drop_cmd(snap_sess *x, snap_cmd *c)
{
    reg_update(c);
    for (size_t i = 0; i < x->n_cmds; i++) {
        if (x->cmds[i] == c) {
            memmove(&x->cmds[i], &x->cmds[i + 1], (x->n_cmds - i - 1) * sizeof *x->cmds);
            x->n_cmds--;
            snap_cmd_unref(c);
            return;
        }
    }
}

/* ---- marks: a command's start and end in its session's files ------------------------------ */

static void mark_start(snap_cmd *c)
{
    snap_sess *x = c->session ? snap_sess_find(c->session) : NULL;
    if (c->marked || c->state == CMD_DROPPED || c->n <= 0 || !x || !x->s)
        return;
    c->marked = true;
    c->mark_started = wall_sec();
    cmdmark_start(x->s, c->n, c->line, c->cwd, c->by);
}

static void mark_end(snap_cmd *c, bool has_exit, int exit_code)
{
    snap_sess *x = c->session ? snap_sess_find(c->session) : NULL;
    if (!c->marked || c->mark_ended || !x || !x->s)
        return;
    c->mark_ended = true;
    cmdmark_end(x->s, c->n, has_exit, exit_code, c->mark_started);
}

/* ---- boundaries ---------------------------------------------------------------------- */

typedef struct boundary {
    snap_cmd *start, *end;      /* held */
    int session;                /* whose snapshot it is (0: an exec not started yet) */
    char key[64];               /* anchor the snapshot as refs/snap/s/KEY/SEQ */
    int seq;
    bool session_start, session_end;
    double created, ended;      /* the session's, for the store's sessions file */
    char before[SNAP_OID_HEX];  /* end: the command's "before" (copied when known) */
    json_t *changes;            /* end: computed on the worker */
    char err[600];
    char **live;                /* keys of this workspace's live sessions (maintenance) */
    size_t n_live;
    bool gc_due;                /* a big snapshot left many loose objects */
} boundary;

static void boundary_free(boundary *b)
{
    snap_cmd_unref(b->start);
    snap_cmd_unref(b->end);
    json_decref(b->changes);
    for (size_t i = 0; i < b->n_live; i++)
        free(b->live[i]);
    free(b->live);
    free(b);
}

/* Worker: the boundary's work on the store (snap_ops.c), done once its
 * snapshot is taken, which gives the commit it keeps. */
static json_t *boundary_params(snap_job *j)
{
    boundary *b = j->data;
    bool end_known = b->end && b->end->before[0];
    if (b->end && !end_known)
        snprintf(b->err, sizeof b->err, "%s", b->end->error ? b->end->error : "no snapshot was taken before it");
    json_t *p = json_pack("{s:s, s:i, s:b, s:f, s:b, s:f, s:o}", "key", b->key, "seq", b->seq, "session_start",
                          b->session_start, "created", b->created, "session_end", b->session_end, "ended", b->ended,
                          "live", ssw_strings(b->live, b->n_live));
    if (end_known) {
        /* Its "before" was set on the loop when the job that took it
         * finished, before this job was queued to the pool. */
        char stamp[64];
        snprintf(stamp, sizeof stamp, "s%d-c%d", b->end->session, b->end->n);
        json_object_set_new(p, "end", json_pack("{s:s, s:s}", "before", b->end->before, "stamp", stamp));
    }
    return p;
}

static void boundary_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    (void)text;
    (void)text_len;
    boundary *b = j->data;
    if (!a) {
        snprintf(b->err, sizeof b->err, "%s", err);
        return;
    }
    if (json_object_get(a, "err"))
        ssw_str_copy(json_object_get(a, "err"), b->err, sizeof b->err);
    if (json_is_object(json_object_get(a, "changes")))
        b->changes = json_incref(json_object_get(a, "changes"));
    b->gc_due = json_is_true(json_object_get(a, "gc_due"));
    if (json_is_true(json_object_get(a, "measure")))
        j->measure = true;
}

static const snap_op boundary_op = {"boundary", boundary_params, boundary_answer};

/* Commands that ran at the same time, in an interval whose snapshot shows
 * changed files, share them. */
static void advance(snap_ws *ws, const char *tree)
{
    if (ws->applied[0] && strcmp(ws->applied, tree) != 0) {
        for (link_t *a = ws->active.next; a != &ws->active; a = a->next)
            for (link_t *b = ws->active.next; b != &ws->active; b = b->next)
                if (a != b)
                    add_shared(link_entry(a, snap_cmd, active_node), link_entry(b, snap_cmd, active_node)->serial);
    }
    snprintf(ws->applied, sizeof ws->applied, "%s", tree);
}

/* Keeping a snapshot taken before its session existed (an exec's
 * "before"): a job that only anchors it, no snapshot of its own (one
 * taken now would be a boundary where there is none).  It runs while the
 * command does, not in the way of its end. */
typedef struct anchor_req {
    char key[64], commit[SNAP_OID_HEX];
    int seq;
    double created;
} anchor_req;

static json_t *anchor_params(snap_job *j)
{
    anchor_req *a = j->data;
    return json_pack("{s:s, s:i, s:s, s:f}", "key", a->key, "seq", a->seq, "commit", a->commit, "created",
                     a->created);
}

static void anchor_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    (void)j;
    (void)text;
    (void)text_len;
    char why[600];
    snprintf(why, sizeof why, "%s", err ? err : "");
    if (a && json_object_get(a, "err"))
        ssw_str_copy(json_object_get(a, "err"), why, sizeof why);
    if (why[0])
        server_log("%s", why);
}

static const snap_op anchor_op = {"anchor", anchor_params, anchor_answer};

static void anchor_after(snap_job *j)
{
    free(j->data);
}

static void anchor_later(snap_sess *x, const char *commit)
{
    anchor_req *a = xcalloc(1, sizeof *a);
    snprintf(a->key, sizeof a->key, "%s", x->key);
    snprintf(a->commit, sizeof a->commit, "%s", commit);
    a->seq = ++x->seq;
    a->created = x->created;
    snap_job_submit(snap_job_new(x->ws, false, &anchor_op, anchor_after, a));
}

static boundary *boundary_new(snap_sess *x);
static void submit(snap_ws *ws, boundary *b);

static void write_record(snap_cmd *c)
{
    if (!c->events_path)
        return;
    char err[600];
    eventlog_t *el = eventlog_open(c->events_path, err, sizeof err);
    if (!el) {
        server_log("the record of command %d of session %d is lost: %s", c->n, c->session, err);
        return;
    }
    json_t *fields = snap_cmd_json(c);
    json_object_del(fields, "state");
    eventlog_write(el, "changes", fields, false);
    eventlog_close(el);
    /* At shutdown sessions are freed before the store forgets them: no
     * session is looked up then (nobody watches any more anyway). */
    session_t *s = server_shutting_down(S.srv) ? NULL : server_find(S.srv, c->session);
    if (s)
        watch_session_changed(s);
}

static void start_applied(snap_cmd *c, snap_job *j)
{
    if (c->state == CMD_DROPPED)
        return;
    if (j->cancelled || snap_queue_stopping()) {
        fire_go(c, true);
        return;
    }
    if (j->rc == 0) {
        snprintf(c->before, sizeof c->before, "%s", j->taken.commit);
        snap_sess *x = c->session ? snap_sess_find(c->session) : NULL;
        if (x && !x->start_commit[0]) {
            /* An exec that started late: its session exists by now. */
            snprintf(x->start_commit, sizeof x->start_commit, "%s", c->before);
            anchor_later(x, c->before);
        }
        if (c->state == CMD_WAITING) {
            c->state = CMD_RUNNING;
            link_add(&c->ws->active, &c->active_node);
        }
    } else if (!c->error) {
        c->error = xstrdup(j->err);
    }
    if (c->state == CMD_WAITING)
        c->state = CMD_RUNNING;
    fire_go(c, false);
}

/* Did the changes of a command change anything (or leave something out)? */
static bool changed_anything(const json_t *changes)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(changes, "counts"), k, v)
        if (json_integer_value(v) > 0)
            return true;
    return json_array_size(json_object_get(changes, "not_captured")) > 0;
}

static void end_applied(snap_cmd *c, snap_job *j, boundary *b)
{
    link_del(&c->active_node);
    if (c->state == CMD_DROPPED) {
        snap_hold_record_written(c);
        return;
    }
    c->state = CMD_DONE;
    if (j->rc == 0)
        snprintf(c->after, sizeof c->after, "%s", j->taken.commit);
    if (b->changes) {
        c->changes = b->changes;
        b->changes = NULL;
    } else if (!c->error) {
        c->error = xstrdup(j->rc < 0 ? j->err : b->err[0] ? b->err : "no diff");
    }
    if (c->n == 0) {
        /* An agent session's program on its own between its commands (or
         * an agent command that never started): a command, numbered now,
         * only if it changed something.  Its ends are applied in order, so
         * the numbers are too. */
        snap_sess *x = c->session ? snap_sess_find(c->session) : NULL;
        if (x && c->whole && (!c->changes || changed_anything(c->changes))) {
            c->n = ++x->numbered;
            reg_update(c);
        } else {
            c->state = CMD_DROPPED;
            if (x)
                sess_drop_cmd(x, c);
            snap_hold_record_written(c);
            return;
        }
    }
    write_record(c);
    snap_hold_record_written(c);
}


typedef struct maintain_req {
    char **live;
    size_t n_live;
} maintain_req;

static json_t *maintain_params(snap_job *j)
{
    maintain_req *m = j->data;
    j->measure = true;
    return json_pack("{s:o}", "live", ssw_strings(m->live, m->n_live));
}

static void maintain_answer(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err)
{
    (void)a;
    (void)text;
    (void)text_len;
    if (err)
        server_log("maintenance of the snapshot store of %s: %s", j->ws->path, err);
}

static const snap_op maintain_op = {"maintain", maintain_params, maintain_answer};

static void maintain_after(snap_job *j)
{
    maintain_req *m = j->data;
    for (size_t i = 0; i < m->n_live; i++)
        free(m->live[i]);
    free(m->live);
    free(m);
}

/* Maintenance of ws's store (retention, repack when due), queued. */
static void maintain(snap_ws *ws)
{
    maintain_req *m = xcalloc(1, sizeof *m);
    m->live = snap_live_keys(ws, &m->n_live);
    snap_job_submit(snap_job_new(ws, false, &maintain_op, maintain_after, m));
}

static void boundary_after(snap_job *j)
{
    boundary *b = j->data;
    if (j->rc == 0)
        advance(j->ws, j->taken.tree);
    snap_sess *x = b->session ? snap_sess_find(b->session) : NULL;
    if (x && j->rc == 0) {
        if (b->session_start && !x->start_commit[0])
            snprintf(x->start_commit, sizeof x->start_commit, "%s", j->taken.commit);
        if (!b->session_start || !x->start_commit[0] || b->session_end)
            snprintf(x->end_commit, sizeof x->end_commit, "%s", j->taken.commit);
    }
    if (b->end)
        end_applied(b->end, j, b);
    if (b->start)
        start_applied(b->start, j);
    if (b->gc_due && !j->cancelled)
        maintain(j->ws);
    boundary_free(b);
}

static boundary *boundary_new(snap_sess *x)
{
    boundary *b = xcalloc(1, sizeof *b);
    if (x) {
        b->session = x->id;
        snprintf(b->key, sizeof b->key, "%s", x->key);
        b->seq = ++x->seq;
        b->created = x->created;
    }
    return b;
}

static void submit(snap_ws *ws, boundary *b)
{
    snap_job *j = snap_job_new(ws, true, &boundary_op, boundary_after, b);
    j->boundary = true;
    j->starts_cmd = b->start ? b->start->serial : 0;
    j->ends_cmd = b->end ? b->end->serial : 0;
    j->may_create = b->end || b->session_end;
    j->measure = b->session_start && ws->state == WS_NEW;
    snap_job_submit(j);
}

/* Begin command c: its "before" snapshot is queued; go (if any) is called
 * when it is taken, or after LATE_MS. */
/* c waits for its "before": go (if any) when it is taken, or after LATE_MS. */
static void arm(snap_cmd *c, snap_go_fn go, void *user)
{
    c->go = go;
    c->go_user = user;
    c->state = CMD_WAITING;
    if (go) {
        c->late_timer = xcalloc(1, sizeof *c->late_timer);
        uv_timer_init(server_loop(S.srv), c->late_timer);
        c->late_timer->data = c;
        c->refs++; /* the timer's, until it is closed */
        uv_timer_start(c->late_timer, on_late, LATE_MS, 0);
    }
}

static void begin(snap_sess *x, snap_cmd *c, snap_go_fn go, void *user, bool session_start)
{
    arm(c, go, user);
    boundary *b = boundary_new(x);
    b->start = c;
    c->refs++;
    b->session_start = session_start;
    submit(c->ws, b);
}

static void end(snap_sess *x, snap_cmd *c, bool session_end, int exit_code, bool has_exit);

/* c ends now: its end mark, its state and status; its "after" is the
 * caller's boundary. */
static void now_ending(snap_cmd *c, bool has_exit, int exit_code)
{
    mark_end(c, has_exit, exit_code);
    c->state = CMD_ENDING;
    c->ended = wall_sec();
    c->has_exit = has_exit;
    c->exit_code = exit_code;
}

/* c ends where next begins: one snapshot is c's "after" and next's
 * "before", so whatever changes between them is one command's or the
 * other's (an agent session's program and its bash commands). */
static void end_begin(snap_sess *x, snap_cmd *c, int exit_code, bool has_exit, snap_cmd *next, snap_go_fn go,
                      void *user)
{
    if (c->state == CMD_ENDING || c->state == CMD_DONE || c->state == CMD_DROPPED) {
        begin(x, next, go, user, false);
        return;
    }
    now_ending(c, has_exit, exit_code);
    arm(next, go, user);
    boundary *b = boundary_new(x);
    b->end = c;
    c->refs++;
    b->start = next;
    next->refs++;
    b->ended = c->ended;
    submit(c->ws, b);
}

static void end(snap_sess *x, snap_cmd *c, bool session_end, int exit_code, bool has_exit)
{
    if (c->state == CMD_ENDING || c->state == CMD_DONE || c->state == CMD_DROPPED)
        return;
    now_ending(c, has_exit, exit_code);
    boundary *b = boundary_new(x);
    b->end = c;
    c->refs++;
    b->session_end = session_end;
    b->ended = c->ended;
    if (session_end)
        b->live = snap_live_keys(x->ws, &b->n_live); /* they keep their snapshots in maintenance */
    submit(c->ws, b);
}

char **snap_live_keys(snap_ws *ws, size_t *n)
{
    char **v = NULL;
    *n = 0;
    for (link_t *l = S.sessions.next; l != &S.sessions; l = l->next) {
        snap_sess *o = link_entry(l, snap_sess, node);
        if (o->ws == ws && !o->ended) {
            v = xrealloc(v, (*n + 1) * sizeof *v);
            v[(*n)++] = xstrdup(o->key);
        }
    }
    return v;
}

/* ---- the server's calls ----------------------------------------------------------------- */

static bool ws_snapshotted(snap_ws *ws)
{
    return ws && ws->state != WS_REFUSED && ws->state != WS_FAILED;
}

/* What a session may not read, its workspace's reader may not either:
 * its own deny entries and its profile's (the config's [sandbox] deny
 * among them).  Known before the first snapshot the reader takes for it. */
static void add_denies(server_t *srv, snap_ws *ws, const char *profile, char *const *deny)
{
    size_t n = 0;
    while (deny && deny[n])
        n++;
    snap_ws_add_deny(ws, deny, n);
    sb_profile prof;
    char err[600];
    if (sbconf_profile(server_conf(srv), profile, &prof, err, sizeof err) < 0)
        return;
    for (size_t i = 0; i < prof.n_entries; i++)
        if (prof.entries[i].access == SB_DENY && !prof.entries[i].builtin)
            snap_ws_add_deny(ws, &prof.entries[i].path, 1);
    sb_profile_free(&prof);
}

bool snap_exec_before(server_t *srv, const char *workspace, char *const *argv, const char *profile,
                      char *const *deny, snap_go_fn go, void *user)
{
    if (!S.on || !workspace || snap_queue_stopping())
        return false;
    snap_ws *ws = snap_ws_get(workspace);
    if (!ws_snapshotted(ws))
        return false;
    add_denies(srv, ws, profile, deny);
    ws->idle = false; /* its session comes */
    char *line = exec_line(argv);
    snap_cmd *c = cmd_new(ws, line);
    free(line);
    c->n = 1;
    begin(NULL, c, go, user, false);
    snap_cmd_unref(c); /* the boundary and the timer hold it; go hands it on */
    return true;
}

void snap_exec_started(server_t *srv, session_t *s, snap_cmd *c)
{
    (void)srv;
    if (!c)
        return;
    snap_sess *x = s ? snap_sess_find(s->id) : NULL;
    if (!x) {
        /* It did not start: not a command. */
        c->state = CMD_DROPPED;
        link_del(&c->active_node);
        return;
    }
    sess_add_cmd(x, c);
    x->numbered = 1;
    x->open = c;
    c->started = wall_sec();
    mark_start(c);
    if (c->before[0]) {
        snprintf(x->start_commit, sizeof x->start_commit, "%s", c->before);
        anchor_later(x, c->before); /* taken before the session existed */
    }
}

static void snap_session_started(server_t *srv, session_t *s)
{
    (void)srv;
    if (!S.on)
        return;
    snap_sess *x = xcalloc(1, sizeof *x);
    x->id = s->id;
    x->s = s;
    x->created = s->created;
    snprintf(x->key, sizeof x->key, "%d-%lld", s->id, (long long)(s->created * 1000));
    x->events_path = s->dir ? xasprintf("%s/events.jsonl", s->dir) : NULL;
    x->exec = s->kind == SESSION_EXEC;
    x->ws = snap_ws_get(server_session_workspace(s));
    add_denies(srv, x->ws, server_session_sandbox(s)->profile, server_session_sandbox(s)->deny);
    x->ws->refs++;
    x->ws->idle = false;
    link_add(&S.sessions, &x->node);
    if (x->exec || !ws_snapshotted(x->ws) || snap_queue_stopping())
        return;
    /* Until its shell's hook says otherwise, the session is one command. */
    char *line = quote_argv_display(s->argv);
    snap_cmd *c = cmd_new(x->ws, line);
    free(line);
    c->n = ++x->numbered;
    c->whole = true;
    sess_add_cmd(x, c);
    x->open = c;
    /* An interactive shell with the hook: its typed lines will be the
     * commands, so the session is not marked as one. */
    if (!server_session_shell_hook(s))
        mark_start(c);
    begin(x, c, NULL, NULL, true);
    snap_cmd_unref(c);
}

/* Is c an agent command that has not ended? */
static bool agent_running(const snap_cmd *c)
{
    return c->agent && (c->state == CMD_WAITING || c->state == CMD_RUNNING);
}

/* The session's exit status is its program's: the exec, or the program's
 * own command (the whole session, or its last stretch between agent
 * commands); a hooked shell's last line did not end the shell. */
static bool exit_is_open_cmds(const snap_sess *x)
{
    return x->open && !x->hooked && (x->open->n == 1 || x->open->whole);
}

static void snap_session_ending(server_t *srv, session_t *s)
{
    (void)srv;
    snap_sess *x = snap_sess_find(s->id);
    if (!x)
        return;
    /* An agent command whose end never came (its bash was killed, or
     * replaced the EXIT trap) ends with the session, status unknown. */
    for (size_t i = 0; i < x->n_cmds; i++)
        if (agent_running(x->cmds[i]))
            mark_end(x->cmds[i], false, 0);
    if (x->open)
        mark_end(x->open, exit_is_open_cmds(x), s->exit_code);
}

static void snap_session_ended(server_t *srv, session_t *s)
{
    (void)srv;
    snap_sess *x = snap_sess_find(s->id);
    if (!x || x->ended)
        return;
    x->ended = true;
    for (size_t i = 0; i < x->n_cmds; i++)
        if (agent_running(x->cmds[i]))
            end(x, x->cmds[i], false, 0, false);
    if (x->open) {
        snap_cmd *c = x->open;
        bool exit_known = exit_is_open_cmds(x);
        x->open = NULL;
        end(x, c, true, s->exit_code, exit_known);
    } else if (ws_snapshotted(x->ws) && !snap_queue_stopping()) {
        boundary *b = boundary_new(x);
        b->session_end = true;
        b->ended = wall_sec();
        submit(x->ws, b);
    }
}

static void snap_session_freed(server_t *srv, session_t *s)
{
    (void)srv;
    snap_sess *x = snap_sess_find(s->id);
    if (!x)
        return;
    link_del(&x->node);
    x->s = NULL;
    for (size_t i = 0; i < x->n_cmds; i++)
        snap_cmd_unref(x->cmds[i]);
    free(x->cmds);
    free(x->events_path);
    /* Once the queue stops, its workspace entries are freed before the
     * sessions that used them. */
    if (!snap_queue_stopping() && --x->ws->refs == 0)
        snap_ws_idle(x->ws);
    free(x);
}

static const snap_cmd *last_done(const snap_sess *x)
{
    for (size_t i = x->n_cmds; i-- > 0;)
        if (x->cmds[i]->state == CMD_DONE && x->cmds[i]->changes)
            return x->cmds[i];
    return NULL;
}

static void snap_session_json(server_t *srv, session_t *s, json_t *o)
{
    (void)srv;
    snap_sess *x = snap_sess_find(s->id);
    if (!x)
        return;
    json_object_set_new(o, "workspace", json_string(x->ws->path));
    json_object_set_new(o, "snapshots", snap_ws_json(x->ws));
    const snap_cmd *c = last_done(x);
    if (c) {
        json_t *ch = json_object();
        json_object_set_new(ch, "command", json_integer(c->n));
        json_object_set(ch, "counts", json_object_get(c->changes, "counts"));
        json_object_set_new(ch, "risk", json_boolean(json_array_size(json_object_get(c->changes, "risk")) > 0));
        json_object_set_new(ch, "not_captured",
                            json_integer((json_int_t)json_array_size(json_object_get(c->changes, "not_captured"))));
        json_object_set_new(o, "changes", ch);
    }
}

/* ---- the shell hook ---------------------------------------------------------------------- */

static void send_state(int fd, const char *state)
{
    json_t *m = json_pack("{s:s}", "state", state);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (text && fd >= 0)
        (void)!send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(text);
}

static void hook_go(void *user, snap_cmd *c, bool stopping)
{
    int fd = (int)(intptr_t)user;
    if (!stopping)
        mark_start(c); /* the shell runs it once it hears "run" */
    send_state(fd, stopping ? "denied" : "run");
    close(fd);
}

void snap_hook_line(server_t *srv, int session, const char *line, const char *cwd, int reply_fd)
{
    session_t *s = server_find(srv, session);
    snap_sess *x = snap_sess_find(session);
    if (!s || !x || x->exec || x->agent || x->ended || !ws_snapshotted(x->ws) || snap_queue_stopping() ||
        (x->hooked && x->open) || x->n_cmds >= MAX_CMDS) {
        /* Not snapshotted, or a further simple command of the same line. */
        send_state(reply_fd, "run");
        close(reply_fd);
        return;
    }
    if (!x->hooked) {
        /* Its shell has the hook: its lines are the commands, not the
         * session.  The session's own command (only its start so far)
         * goes; its snapshot is the session's start. */
        x->hooked = true;
        if (x->open) {
            mark_end(x->open, false, 0);
            x->open->state = CMD_DROPPED;
            link_del(&x->open->active_node);
            sess_drop_cmd(x, x->open);
            x->open = NULL;
        }
        x->numbered = 0;
    }
    char *shown = sanitize_text(line, strlen(line), 4096);
    snap_cmd *c = cmd_new(x->ws, shown);
    free(shown);
    c->cwd = cwd ? xstrdup(cwd) : NULL;
    c->n = ++x->numbered;
    sess_add_cmd(x, c);
    x->open = c;
    begin(x, c, hook_go, (void *)(intptr_t)reply_fd, false);
    snap_cmd_unref(c);
}

/* ---- an agent's shell commands (path.bash) ------------------------------------------------ */

/* Its "before" is taken (or late, or the server stops): the bash that asked
 * runs its command once it hears the number (0: not a command). */
static void agent_go(void *user, snap_cmd *c, bool stopping)
{
    int fd = (int)(intptr_t)user;
    int n = 0;
    snap_sess *x = c && c->session ? snap_sess_find(c->session) : NULL;
    if (!stopping && agent_running(c) && x && !x->ended) {
        /* Numbered now, after the program's stretch before it (its end
         * was applied first). */
        c->n = ++x->numbered;
        reg_update(c);
        mark_start(c);
        n = c->n;
    }
    json_t *o = json_pack("{s:s, s:i}", "state", "run", "command", n);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (text)
        (void)!send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(text);
    close(fd);
}

static size_t agent_open_count(const snap_sess *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->n_cmds; i++)
        n += agent_running(x->cmds[i]);
    return n;
}

/* The session's own program runs on its own again: its stretch until the
 * next agent command (or the session's end) is a command of its own, its
 * line the session's, so what the agent changed with its own tools (not a
 * shell) is a command's too; one that changed nothing is not recorded. */
/* The end mark's reply, once the snapshot after its command is taken (or
 * late): what the program does next is not the command's. */
static void ended_go(void *user, snap_cmd *c, bool stopping)
{
    (void)c;
    (void)stopping;
    int fd = (int)(intptr_t)user;
    send_state(fd, "ok");
    close(fd);
}

/* 1 when reply_fd was taken (answered when the snapshot is). */
static int agent_program_resumes(snap_sess *x, snap_cmd *ending, int exit_code, bool has_exit, int reply_fd)
{
    if (x->open || x->ended || !x->s || !ws_snapshotted(x->ws) || snap_queue_stopping() ||
        x->n_cmds >= MAX_CMDS || agent_open_count(x) > 1) {
        end(x, ending, false, exit_code, has_exit);
        return 0;
    }
    char *line = quote_argv_display(x->s->argv);
    snap_cmd *c = cmd_new(x->ws, line);
    free(line);
    c->whole = true; /* numbered (and recorded) at its end only if it changed something */
    sess_add_cmd(x, c);
    x->open = c;
    end_begin(x, ending, exit_code, has_exit, c, ended_go, (void *)(intptr_t)reply_fd);
    snap_cmd_unref(c);
    return 1;
}

/* A top-level bash of a session that is neither an exec nor a hooked
 * shell starts its command line (an agent's shell command).  The line is
 * whatever the sandbox sent: kept as valid UTF-8 and cut (marked) here,
 * made visible by every reader. */
static void agent_start(snap_sess *x, const chan_msg *m, int reply_fd)
{
    if (!x || x->exec || x->hooked || x->ended || !x->s || !ws_snapshotted(x->ws) || snap_queue_stopping() ||
        x->n_cmds >= MAX_CMDS || agent_open_count(x) >= MAX_AGENT_OPEN) {
        agent_go((void *)(intptr_t)reply_fd, NULL, true);
        return;
    }
    x->agent = true;
    size_t n;
    char *valid = uexec_lossy_utf8(m->line, strlen(m->line), &n);
    char *shown = quote_shorten(valid, AGENT_LINE_MAX);
    free(valid);
    snap_cmd *c = cmd_new(x->ws, shown);
    free(shown);
    c->agent = true;
    c->cwd = m->cwd ? xstrdup(m->cwd) : NULL;
    sess_add_cmd(x, c); /* numbered when it runs (agent_go) */
    if (x->open) {
        /* The program's own stretch ends where its shell command starts. */
        snap_cmd *p = x->open;
        x->open = NULL;
        end_begin(x, p, 0, false, c, agent_go, (void *)(intptr_t)reply_fd);
    } else
        begin(x, c, agent_go, (void *)(intptr_t)reply_fd, false);
    snap_cmd_unref(c);
}

/* Its end: only a running agent command of this session, by its number.
 * 1 when reply_fd was taken. */
static int agent_end(snap_sess *x, const chan_msg *m, int reply_fd)
{
    if (!x || !x->agent || x->ended || m->command <= 0 || m->command > x->numbered)
        return 0;
    for (size_t i = x->n_cmds; i-- > 0;) {
        snap_cmd *c = x->cmds[i];
        if (c->n == m->command) {
            if (!agent_running(c))
                return 0;
            bool known = m->status >= 0 && m->status <= 255;
            return agent_program_resumes(x, c, known ? (int)m->status : 0, known, reply_fd);
        }
    }
    return 0;
}

void snap_hook_mark(server_t *srv, session_t *s, const chan_msg *m, int reply_fd)
{
    (void)srv;
    snap_sess *x = snap_sess_find(s->id);
    if (m->start) {
        agent_start(x, m, reply_fd);
        return;
    }
    if (m->command >= 0) {
        if (agent_end(x, m, reply_fd))
            return;
    } else if (x && x->hooked && x->open) {
        snap_cmd *c = x->open;
        x->open = NULL;
        bool known = m->status >= 0 && m->status <= 255;
        end(x, c, false, known ? (int)m->status : 0, known);
    }
    send_state(reply_fd, "ok");
    close(reply_fd);
}

/* ---- for the protocol (snap_proto.c) ------------------------------------------------------ */

snap_job *snap_observe(snap_sess *x, const snap_op *op, snap_job_fn after, void *data)
{
    snap_job *j = snap_job_new(x->ws, true, op, after, data);
    j->force = false;
    return j;
}

snap_cmd *snap_revert_cmd_begin(snap_sess *x, const char *line, const char *by, snap_go_fn go, void *user)
{
    snap_cmd *c = cmd_new(x->ws, line);
    c->by = xstrdup(by ? by : "user");
    c->n = ++x->numbered;
    c->cwd = xstrdup(x->ws->path);
    sess_add_cmd(x, c);
    mark_start(c);
    begin(x, c, go, user, false);
    snap_cmd_unref(c);
    return c;
}

void snap_revert_cmd_end(snap_sess *x, snap_cmd *c)
{
    end(x, c, false, 0, false);
}

static json_t *iso(double t)
{
    char buf[32];
    iso_time(buf, t);
    return json_string(buf);
}

json_t *snap_cmd_json(const snap_cmd *c)
{
    static const char *const states[] = {"pending", "running", "ending", "done", "dropped"};
    json_t *o = json_pack("{s:i, s:s, s:s, s:o}", "command", c->n, "line", c->line, "state", states[c->state],
                          "started", iso(c->started));
    json_object_set_new(o, "workspace", json_string(c->ws->path));
    if (c->by)
        json_object_set_new(o, "by", json_string(c->by));
    if (c->ended > 0)
        json_object_set_new(o, "ended", iso(c->ended));
    if (c->has_exit)
        json_object_set_new(o, "exit_code", json_integer(c->exit_code));
    if (c->before[0])
        json_object_set_new(o, "before", json_string(c->before));
    if (c->after[0])
        json_object_set_new(o, "after", json_string(c->after));
    if (c->late)
        json_object_set_new(o, "late", json_true());
    json_t *with = json_array();
    for (size_t i = 0; i < c->n_shared; i++) {
        const reg_entry *e = reg_find(c->shared[i]);
        if (!e || !e->session)
            continue; /* an exec that never started */
        if (e->n)
            json_array_append_new(with, json_pack("{s:i, s:i}", "session", e->session, "command", e->n));
        else
            json_array_append_new(with, json_pack("{s:i, s:n}", "session", e->session, "command"));
    }
    json_object_set_new(o, "attribution", json_string(c->n_shared ? "shared" : "exclusive"));
    json_object_set_new(o, "shared_with", with);
    if (c->changes)
        json_object_update(o, c->changes);
    if (c->error)
        json_object_set_new(o, "error", json_string(c->error));
    return o;
}

/* ---- start and stop ------------------------------------------------------------------------ */

static void on_maintain(uv_timer_t *t)
{
    (void)t;
    /* Open stores with no session running: retention and repack. */
    for (link_t *l = snap_ws_all()->next; l != snap_ws_all(); l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        if (ws->refs == 0 && ws_snapshotted(ws) && ws->state == WS_READY)
            maintain(ws);
    }
}

static void snap_server_start(server_t *srv)
{
    memset(&S, 0, sizeof S);
    S.srv = srv;
    link_init(&S.sessions);
    if (!server_conf(srv)->snap.enabled)
        return;
    /* libgit2 is loaded when the first store opens (snap_git.h): a
     * server with no workspace to snapshot yet starts without it. */
    char *dir = xasprintf("%s/snapshots", server_state_dir(srv));
    snap_queue_start(server_loop(srv), srv, dir, &server_conf(srv)->snap);
    free(dir);
    uv_timer_init(server_loop(srv), &S.maintain);
    uv_timer_start(&S.maintain, on_maintain, MAINTAIN_MS, MAINTAIN_MS);
    uv_unref((uv_handle_t *)&S.maintain);
    S.on = true;
    /* An exec's reply waits for its command's record (snap_hold.h). */
    waiter_hold_replies(snap_hold_reply);
}

static void snap_server_shutdown(server_t *srv)
{
    (void)srv;
    if (!S.on)
        return;
    uv_close((uv_handle_t *)&S.maintain, NULL);
    snap_hold_release_all();
    /* The server's SIGCHLD handler is closed by now: readers ended from
     * here on are reaped where they are stopped. */
    snap_reader_external_reaper(false);
    snap_queue_shutdown();
    /* What is left of sessions is freed with them (snap_session_freed),
     * which finish_shutdown's session_close brings. */
}

static bool snap_reaped(server_t *srv, pid_t pid, int status)
{
    (void)srv;
    return snap_reader_reaped(pid, status) || snap_remote_reaped(pid, status);
}

const server_module snap_module = {
    .name = "snap",
    .start = snap_server_start,
    .shutdown = snap_server_shutdown,
    .session_started = snap_session_started,
    .session_ending = snap_session_ending,
    .session_finished = snap_session_ended,
    .session_freed = snap_session_freed,
    .session_json = snap_session_json,
    .reaped = snap_reaped,
};
