/*
 * retention_server.c - see retention_server.h.  One run: the server's
 * sessions' directories are noted on the loop; the session directories are
 * scanned on a worker; back on the loop, those to remove are renamed aside
 * (checked again against the sessions the server has now: a session
 * created meanwhile is never removed); a worker removes them; then every
 * snapshot store drops the snapshots of the sessions removed.
 */
#include "config.h"

#include "snap/retention_server.h"

#include "protocol/proto.h"
#include "record/retention.h"
#include "server/log.h"
#include "snap/snap_gc.h"
#include "snap/snap_server.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* The first run a while after the server starts (not while a user is
 * starting their first session), then as often as snapshot maintenance. */
#define FIRST_RUN_MS (10u * 60 * 1000)
#define EVERY_MS (6u * 3600 * 1000)

static struct {
    uv_timer_t timer;
    bool started;
} R;

typedef struct ret_run {
    uv_work_t work;
    server_t *srv;
    conn_t *conn; /* NULL: the timer's run */
    json_t *id;
    bool dry_run, force;
    uint64_t retention_ms, max_total; /* the config's, when the run started */
    char *root;
    retention_live *live;
    size_t n_live;
    retention_plan plan;
    json_t *sessions;
} ret_run;

/* The directories of every session the server has (running, in its list,
 * or on its way out). */
static retention_live *live_now(server_t *srv, size_t *n)
{
    size_t count = 0;
    for (session_t *s = server_next_session(srv, NULL); s; s = server_next_session(srv, s))
        count++;
    char **dirs = xcalloc(count ? count : 1, sizeof *dirs);
    int *ids = xcalloc(count ? count : 1, sizeof *ids);
    bool *running = xcalloc(count ? count : 1, sizeof *running);
    size_t i = 0;
    for (session_t *s = server_next_session(srv, NULL); s; s = server_next_session(srv, s), i++) {
        dirs[i] = s->dir;
        ids[i] = s->id;
        running[i] = s->state == SESSION_RUNNING;
    }
    retention_live *v = retention_live_of(dirs, ids, running, count, n);
    free(dirs);
    free(ids);
    free(running);
    return v;
}

static void run_free(ret_run *r)
{
    retention_plan_free(&r->plan);
    free(r->live);
    free(r->root);
    json_decref(r->sessions);
    json_decref(r->id);
    if (r->conn)
        conn_release(r->conn);
    free(r);
}

static void reply(ret_run *r, json_t *stores, const char *off)
{
    if (r->conn && !conn_closing(r->conn)) {
        json_t *o = proto_ok(r->id);
        json_object_set(o, "sessions", r->sessions);
        json_object_set_new(o, "stores", stores ? json_incref(stores) : json_array());
        if (off)
            json_object_set_new(o, "snapshots", json_string(off));
        conn_send(r->conn, o);
    }
    run_free(r);
}

static void snaps_done(json_t *stores, const char *off, void *user)
{
    reply(user, stores, off);
}

static void log_removed(const ret_run *r)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r->sessions, "removed"), i, e)
        server_log("retention: removed %s/%s (%lld bytes, %s)", r->root, json_string_value(json_object_get(e, "name")),
                   (long long)json_integer_value(json_object_get(e, "bytes")),
                   json_string_value(json_object_get(e, "reason")));
    json_array_foreach(json_object_get(r->sessions, "failed"), i, e)
        server_log("retention: could not remove %s/%s: %s", r->root, json_string_value(json_object_get(e, "name")),
                   json_string_value(json_object_get(e, "error")));
}

static void remove_work(uv_work_t *w)
{
    ret_run *r = w->data;
    retention_remove(&r->plan);
}

static void remove_done(uv_work_t *w, int status)
{
    (void)status;
    ret_run *r = w->data;
    r->sessions = retention_json(&r->plan);
    if (!r->conn)
        log_removed(r);
    if (r->dry_run || server_shutting_down(r->srv)) {
        reply(r, NULL, r->dry_run ? "not maintained in a dry run" : "the server is stopping");
        return;
    }
    /* The snapshots of the sessions removed go with them. */
    snap_gc_gone *gone = xcalloc(r->plan.n ? r->plan.n : 1, sizeof *gone);
    size_t n_gone = 0;
    for (size_t i = 0; i < r->plan.n; i++) {
        const sessdir_probe *p = &r->plan.v[i].probe;
        if (!r->plan.v[i].removed)
            continue;
        if (p->cast_start >= 0)
            gone[n_gone++] = (snap_gc_gone){p->id, (double)p->cast_start, (double)p->cast_start + 1};
        else if (p->created > 0) /* the session started shortly before its created event */
            gone[n_gone++] = (snap_gc_gone){p->id, p->created - 60, p->created + 0.001};
    }
    if (!r->conn && n_gone == 0) {
        /* The timer's run: the snapshot stores have their own maintenance. */
        free(gone);
        reply(r, NULL, NULL);
        return;
    }
    snap_gc_all(gone, n_gone, r->force, snaps_done, r);
    free(gone);
}

static void scan_work(uv_work_t *w)
{
    ret_run *r = w->data;
    retention_scan(&r->plan, r->root, r->retention_ms, r->max_total, r->live, r->n_live, wall_sec(), r->dry_run);
}

static void scan_done(uv_work_t *w, int status)
{
    (void)status;
    ret_run *r = w->data;
    if (!r->dry_run && !server_shutting_down(r->srv)) {
        size_t n;
        retention_live *live = live_now(r->srv, &n);
        retention_stage(&r->plan, live, n);
        free(live);
    }
    uv_queue_work(server_loop(r->srv), &r->work, remove_work, remove_done);
}

static void run_start(server_t *srv, conn_t *c, json_t *id, bool dry_run, bool force)
{
    ret_run *r = xcalloc(1, sizeof *r);
    r->srv = srv;
    r->work.data = r;
    r->dry_run = dry_run;
    r->force = force;
    r->retention_ms = server_conf(srv)->session_retention_ms;
    r->max_total = server_conf(srv)->session_max_total_size;
    if (c) {
        r->conn = conn_ref(c);
        r->id = json_incref(id);
    }
    r->root = xasprintf("%s/sessions", server_state_dir(srv));
    r->live = live_now(srv, &r->n_live);
    uv_queue_work(server_loop(srv), &r->work, scan_work, scan_done);
}

static void cmd_gc(conn_t *c, json_t *id, json_t *req)
{
    proto_err e;
    bool dry_run = false;
    if (proto_get_bool(req, "dry_run", false, &dry_run, &e) < 0) {
        conn_reply_error(c, id, e.code, e.message);
        return;
    }
    run_start(conn_server(c), c, id, dry_run, true);
}

static void on_timer(uv_timer_t *t)
{
    server_t *srv = t->data;
    if (!server_shutting_down(srv))
        run_start(srv, NULL, NULL, false, false);
}

static void retention_server_start(server_t *srv)
{
    uv_timer_init(server_loop(srv), &R.timer);
    R.timer.data = srv;
    uv_timer_start(&R.timer, on_timer, FIRST_RUN_MS, EVERY_MS);
    uv_unref((uv_handle_t *)&R.timer); /* never what keeps the server up */
    R.started = true;
}

static void retention_server_shutdown(server_t *srv)
{
    (void)srv;
    if (!R.started)
        return;
    R.started = false;
    uv_close((uv_handle_t *)&R.timer, NULL);
}

static const server_command retention_commands[] = {{"gc", cmd_gc}, {NULL, NULL}};

const server_module retention_module = {
    .name = "retention",
    .start = retention_server_start,
    .shutdown = retention_server_shutdown,
    .commands = retention_commands,
};
