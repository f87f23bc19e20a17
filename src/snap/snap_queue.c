/*
 * snap_queue.c - see snap_queue.h.
 */
#include "config.h"

#include "snap/snap_queue.h"

#include "base/paths.h"
#include "server/log.h"
#include "server/server.h"
#include "snap/snap_gc.h"
#include "snap/snap_reader.h"
#include "snap/snap_remote.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Jobs on the thread pool at once, server-wide. */
#define MAX_RUNNING 2
#define PROGRESS_MS 500
/* The store's size is measured again after this long (it is a walk). */
#define STORE_SIZE_EVERY_S 300.0
/* Once the server stops, running snapshots get this long before their
 * readers are killed (a stopping server ends within seconds). */
#define STOP_GRACE_MS 2000

static struct {
    uv_loop_t *loop;
    server_t *srv;
    char *dir;
    snap_conf conf;
    link_t wss;
    int running;
    bool started, stopping, readers_killed;
    uv_timer_t progress;
    uv_timer_t stop_grace;
} Q;

const snap_conf *snap_queue_conf(void)
{
    return &Q.conf;
}

const char *snap_queue_dir(void)
{
    return Q.dir;
}

bool snap_queue_stopping(void)
{
    return Q.stopping;
}

link_t *snap_ws_all(void)
{
    return &Q.wss;
}

static void free_timer(uv_handle_t *h)
{
    free(h);
}

static void ws_free(snap_ws *ws)
{
    link_del(&ws->node);
    if (ws->linger)
        uv_close((uv_handle_t *)ws->linger, free_timer);
    if (ws->store_idle)
        uv_close((uv_handle_t *)ws->store_idle, free_timer);
    snap_remote_close(ws->remote);
    free(ws->store_dir);
    snap_reader_stop(ws->reader);
    for (size_t i = 0; i < ws->n_deny; i++)
        free(ws->deny[i]);
    free(ws->deny);
    free(ws->path);
    free(ws);
}

void snap_ws_add_deny(snap_ws *ws, char *const *deny, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool have = false;
        for (size_t k = 0; k < ws->n_deny && !have; k++)
            have = strcmp(ws->deny[k], deny[i]) == 0;
        if (have)
            continue;
        ws->deny = xrealloc(ws->deny, (ws->n_deny + 1) * sizeof *ws->deny);
        ws->deny[ws->n_deny++] = xstrdup(deny[i]);
        ws->deny_changed = true;
    }
}

/* The reader a snapshot of ws needs, started now (on the loop) unless a
 * good one runs; one that failed or lacks a deny path is replaced. */
static void ensure_reader(snap_ws *ws)
{
    if (ws->reader && (snap_reader_failed(ws->reader) || ws->deny_changed)) {
        snap_reader_stop(ws->reader);
        ws->reader = NULL;
    }
    if (ws->reader || Q.readers_killed || ws->state == WS_REFUSED)
        return;
    ws->deny_changed = false;
    snap_reader_spec spec = {.ws = ws->path, .deny = ws->deny, .n_deny = ws->n_deny};
    char err[500];
    ws->reader = snap_reader_launch(&spec, err, sizeof err);
    if (ws->reader)
        ws->reader_error[0] = '\0';
    else
        snprintf(ws->reader_error, sizeof ws->reader_error, "cannot start the workspace's reader: %s", err);
}

/* Why a workspace needs an opt-in before it is snapshotted, or NULL. */
static const char *needs_opt_in(const char *path)
{
    if (snap_conf_allows(&Q.conf, path))
        return NULL;
    if (strcmp(path, "/") == 0)
        return "it is the root directory";
    const char *home = paths_home();
    if (strcmp(path, home) == 0)
        return "it is your home directory";
    size_t hl = strlen(home);
    if (hl > 1 && strncmp(home, path, strlen(path)) == 0 && home[strlen(path)] == '/')
        return "it holds your home directory";
    return NULL;
}

snap_ws *snap_ws_get(const char *path)
{
    for (link_t *l = Q.wss.next; l != &Q.wss; l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        if (strcmp(ws->path, path) == 0)
            return ws;
    }
    snap_ws *ws = xcalloc(1, sizeof *ws);
    ws->path = xstrdup(path);
    link_init(&ws->queue);
    link_init(&ws->active);
    ws->work.data = ws;
    if (Q.dir)
        ws->store_dir = snap_store_dir_for(Q.dir, path);
    const char *why = needs_opt_in(path);
    if (why) {
        ws->state = WS_REFUSED;
        snprintf(ws->message, sizeof ws->message,
                 "not snapshotted: %s (opt in with [snapshots] allow = %s in corral's config)", why, path);
    }
    link_add(&Q.wss, &ws->node);
    return ws;
}

snap_job *snap_job_new(snap_ws *ws, bool snapshot, const snap_op *op, snap_job_fn after, void *data)
{
    snap_job *j = xcalloc(1, sizeof *j);
    link_init(&j->node);
    j->ws = ws;
    j->snapshot = snapshot;
    j->op = op;
    j->after = after;
    j->data = data;
    return j;
}

/* ---- the worker ------------------------------------------------------------------ */

static void on_work(uv_work_t *req)
{
    snap_ws *ws = req->data;
    snap_job *j = ws->running;
    if (ws->state == WS_REFUSED || ws->state == WS_FAILED) {
        for (snap_job *k = j; k; k = k->merged) {
            k->rc = -1;
            snprintf(k->err, sizeof k->err, "%.690s", ws->message);
        }
        return;
    }
    if (ws->remote && snap_remote_dead(ws->remote)) {
        /* Its process ended (the last job said so): a new one. */
        snap_remote_close(ws->remote);
        ws->remote = NULL;
    }
    if (!ws->remote) {
        ws->remote = snap_remote_open(Q.dir, ws->path, &Q.conf, &ws->progress, j->err, sizeof j->err);
        if (!ws->remote) {
            for (snap_job *k = j->merged; k; k = k->merged)
                snprintf(k->err, sizeof k->err, "%s", j->err);
            for (snap_job *k = j; k; k = k->merged)
                k->rc = -1;
            return;
        }
    }
    if (j->snapshot && !ws->reader) {
        for (snap_job *k = j; k; k = k->merged) {
            k->rc = -1;
            snprintf(k->err, sizeof k->err, "snapshot of %.300s incomplete: %.300s", ws->path,
                     ws->reader_error[0] ? ws->reader_error : "the server is stopping");
        }
    }
    /* Every job's op, in one request with the snapshot. */
    json_t *ops = json_array();
    size_t n_with = 0;
    snap_job **with = NULL;
    for (snap_job *k = j; k; k = k->merged) {
        json_t *p = k->op && (k->rc == 0 || !k->snapshot) ? k->op->params(k) : NULL;
        if (!p)
            continue;
        json_array_append_new(ops, json_pack("{s:s, s:o}", "kind", k->op->kind, "params", p));
        with = xrealloc(with, (n_with + 1) * sizeof *with);
        with[n_with++] = k;
    }
    json_t *answers = NULL;
    buf_t text;
    buf_init(&text);
    char err[700] = "";
    if (j->snapshot && ws->reader) {
        bool force = false;
        for (snap_job *k = j; k; k = k->merged)
            force |= k->force;
        snap_taken t;
        int rc = snap_remote_take(ws->remote, ws->reader, force, snap_conf_allows(&Q.conf, ws->path), !j->may_create,
                                  ops, &t, &answers, &text);
        for (snap_job *k = j; k; k = k->merged) {
            k->taken = t;
            k->rc = rc;
            if (rc < 0)
                snprintf(k->err, sizeof k->err, "%s", t.error);
        }
        if (rc < 0)
            n_with = 0; /* no op runs after a failed snapshot */
        else if (!answers)
            snprintf(err, sizeof err, "%s", t.error);
    } else if (!j->snapshot && n_with) {
        answers = snap_remote_run(ws->remote, ops, &text, err, sizeof err);
    }
    json_decref(ops);
    /* Each op's answer, and its part of the bytes that came along. */
    size_t at = 0;
    for (size_t i = 0; i < n_with; i++) {
        json_t *a = json_array_get(answers, i);
        size_t len = (size_t)json_integer_value(json_object_get(a, "text_len"));
        if (len > text.len - at)
            len = text.len - at;
        with[i]->op->answer(with[i], a, text.data ? text.data + at : "", len,
                            a ? NULL : err[0] ? err : "the store's process did not answer this job");
        at += len;
    }
    free(with);
    json_decref(answers);
    buf_free(&text);
    /* The store's size now and then (a walk of its files), for lists. */
    double now = wall_sec();
    if (ws->store_dir && (j->measure || now - ws->store_bytes_at > STORE_SIZE_EVERY_S)) {
        j->bytes = snap_disk_usage(ws->store_dir);
        j->measured = true;
    }
}

static void dispatch_next(void);
static void on_progress(uv_timer_t *t);

/* No job for [snapshots] store-idle: the store's process ends, and with
 * it libgit2's memory; the reader stays, so the next snapshot still knows
 * what changed without a walk. */
static void on_store_idle(uv_timer_t *t)
{
    snap_ws *ws = t->data;
    if (ws->running || !link_empty(&ws->queue) || !ws->remote)
        return;
    snap_remote_close(ws->remote);
    ws->remote = NULL;
}

static void store_idle_later(snap_ws *ws)
{
    if (!ws->remote || ws->running || Q.stopping)
        return;
    if (!ws->store_idle) {
        ws->store_idle = xcalloc(1, sizeof *ws->store_idle);
        uv_timer_init(Q.loop, ws->store_idle);
        ws->store_idle->data = ws;
    }
    uv_timer_start(ws->store_idle, on_store_idle, Q.conf.store_idle_ms, 0);
}

static void on_done(uv_work_t *req, int status)
{
    (void)status;
    snap_ws *ws = req->data;
    snap_job *j = ws->running;
    ws->running = NULL;
    Q.running--;
    if (ws->reader && snap_reader_failed(ws->reader)) {
        /* Killed now; the next snapshot starts a new one. */
        const char *setup = snap_reader_setup_error(ws->reader);
        if (setup)
            for (snap_job *k = j; k; k = k->merged)
                if (k->rc < 0)
                    snprintf(k->err, sizeof k->err, "snapshot of %.300s incomplete: the workspace's reader "
                             "could not start: %.300s", ws->path, setup);
        snap_reader_stop(ws->reader);
        ws->reader = NULL;
    }
    if (j->measured) {
        ws->store_bytes = j->bytes;
        ws->store_bytes_at = wall_sec();
    }
    if (j->snapshot && j->rc < 0 && j->taken.refused) {
        ws->state = WS_REFUSED;
        snprintf(ws->message, sizeof ws->message, "not snapshotted: %s", j->err);
    } else if (!ws->remote && ws->state != WS_REFUSED) {
        /* Said in the server's log too, once: libgit2 that cannot be
         * loaded shows here, at the first store, since it is loaded then. */
        if (ws->state != WS_FAILED)
            server_log("workspace snapshots of %s are off: %s", ws->path, j->err);
        ws->state = WS_FAILED;
        snprintf(ws->message, sizeof ws->message, "%s", j->err);
    } else if (j->snapshot && j->rc == 0) {
        ws->state = WS_READY;
        snprintf(ws->latest, sizeof ws->latest, "%s", j->taken.commit);
    }
    while (j) {
        snap_job *next = j->merged;
        j->after(j);
        free(j);
        j = next;
    }
    if (Q.srv)
        conn_broadcast(json_pack("{s:s, s:s, s:o}", "event", "snapshot", "workspace", ws->path, "snapshots",
                                          snap_ws_json(ws)));
    /* Before the next job starts (it stops the wait) or, when the server
     * stops, every entry is freed. */
    store_idle_later(ws);
    dispatch_next();
}

static void start(snap_ws *ws)
{
    snap_job *j = link_entry(ws->queue.next, snap_job, node);
    link_del(&j->node);
    /* Boundary snapshots queued right behind it share its snapshot. */
    snap_job *tail = j;
    while (j->snapshot && !link_empty(&ws->queue)) {
        snap_job *k = link_entry(ws->queue.next, snap_job, node);
        if (!k->snapshot)
            break;
        bool own_start = false;
        for (snap_job *m = j; m && k->ends_cmd; m = m->merged)
            own_start |= m->starts_cmd == k->ends_cmd;
        if (own_start)
            break; /* a command that ran while its start waited: its end needs a snapshot of its own */
        link_del(&k->node);
        tail->merged = k;
        tail = k;
    }
    /* The new-file cap is for what a command makes (a dependency install):
     * a snapshot that ends a command, or is taken while one runs here,
     * applies it; one that only starts commands (or a session) takes what
     * was there before, however much, uncapped. */
    bool may_create = !link_empty(&ws->active);
    for (snap_job *k = j; k; k = k->merged)
        may_create |= !k->boundary || k->may_create;
    j->may_create = may_create;
    if (j->snapshot)
        ensure_reader(ws);
    ws->running = j;
    if (ws->store_idle)
        uv_timer_stop(ws->store_idle);
    /* Not the last job's figures until the store's process sends its own. */
    atomic_store(&ws->progress.done, 0);
    atomic_store(&ws->progress.total, 0);
    atomic_store(&ws->progress.phase, SNAP_IDLE);
    ws->started_at = now_sec();
    Q.running++;
    uv_queue_work(Q.loop, &ws->work, on_work, on_done);
    if (!uv_is_active((uv_handle_t *)&Q.progress))
        uv_timer_start(&Q.progress, on_progress, PROGRESS_MS, PROGRESS_MS);
}

static void close_if_idle(snap_ws *ws)
{
    if (ws->idle && !ws->lingering && ws->refs == 0 && !ws->running && link_empty(&ws->queue) &&
        (ws->remote || ws->reader)) {
        snap_remote_close(ws->remote);
        ws->remote = NULL;
        snap_reader_stop(ws->reader);
        ws->reader = NULL;
        ws->idle = false;
    }
}

static void on_linger_over(uv_timer_t *t)
{
    snap_ws *ws = t->data;
    ws->lingering = false;
    close_if_idle(ws); /* unless a session came back meanwhile */
}

void snap_ws_idle(snap_ws *ws)
{
    ws->idle = true;
    if (Q.conf.keep_open_ms && !Q.stopping) {
        if (!ws->linger) {
            ws->linger = xcalloc(1, sizeof *ws->linger);
            uv_timer_init(Q.loop, ws->linger);
            ws->linger->data = ws;
        }
        ws->lingering = true;
        uv_timer_start(ws->linger, on_linger_over, Q.conf.keep_open_ms, 0);
        return;
    }
    close_if_idle(ws);
}

static void dispatch_next(void)
{
    /* Oldest waiting first would need timestamps; the list order (the
     * order workspaces were first used) is fair enough for two slots. */
    for (link_t *l = Q.wss.next; l != &Q.wss && Q.running < MAX_RUNNING; l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        if (!ws->running && !link_empty(&ws->queue))
            start(ws);
        else
            close_if_idle(ws);
    }
    if (Q.running == 0)
        uv_timer_stop(&Q.progress);
    if (Q.stopping && Q.running == 0 && Q.started) {
        /* Everything ran: the stores close (and unlock). */
        while (!link_empty(&Q.wss))
            ws_free(link_entry(Q.wss.next, snap_ws, node));
        uv_close((uv_handle_t *)&Q.progress, NULL);
        uv_close((uv_handle_t *)&Q.stop_grace, NULL);
        free(Q.dir);
        Q.dir = NULL;
        snap_conf_free(&Q.conf);
        Q.started = false;
    }
}

void snap_job_submit(snap_job *j)
{
    if (Q.stopping && !(j->boundary && j->ws->state == WS_READY)) {
        j->cancelled = true;
        j->rc = -1;
        snprintf(j->err, sizeof j->err, "the server is stopping");
        j->after(j);
        free(j);
        return;
    }
    link_add(&j->ws->queue, &j->node);
    dispatch_next();
}

/* ---- progress --------------------------------------------------------------------- */

const char *snap_ws_phase(const snap_ws *ws, long *done, long *total)
{
    *done = *total = 0;
    if (!ws->running)
        return "idle";
    *done = atomic_load(&ws->progress.done);
    *total = atomic_load(&ws->progress.total);
    switch (atomic_load(&ws->progress.phase)) {
    case SNAP_SCANNING: return "scanning";
    case SNAP_STORING: return "storing";
    case SNAP_MAINTAINING: return "maintaining";
    default: return "idle";
    }
}

json_t *snap_ws_json(const snap_ws *ws)
{
    static const char *const states[] = {"new", "ready", "refused", "failed"};
    long done, total;
    const char *phase = snap_ws_phase(ws, &done, &total);
    json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "state", states[ws->state], "phase", phase, "done",
                          (json_int_t)done, "total", (json_int_t)total);
    if (ws->message[0])
        json_object_set_new(o, "message", json_string(ws->message));
    if (ws->store_bytes_at > 0)
        json_object_set_new(o, "store_bytes", json_integer((json_int_t)ws->store_bytes));
    return o;
}

static void on_progress(uv_timer_t *t)
{
    (void)t;
    for (link_t *l = Q.wss.next; l != &Q.wss; l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        long done, total;
        const char *phase = snap_ws_phase(ws, &done, &total);
        /* Quick snapshots need no progress line: only the long ones. */
        if (strcmp(phase, "idle") == 0 || now_sec() - ws->started_at < 1.0 || !Q.srv)
            continue;
        conn_broadcast(json_pack("{s:s, s:s, s:o}", "event", "snapshot", "workspace", ws->path, "snapshots",
                                          snap_ws_json(ws)));
    }
}

/* ---- start and stop ---------------------------------------------------------------- */

void snap_queue_start(uv_loop_t *loop, server_t *srv, const char *snapdir, const snap_conf *conf)
{
    memset(&Q, 0, sizeof Q);
    Q.loop = loop;
    Q.srv = srv;
    Q.dir = xstrdup(snapdir);
    snap_conf_copy(&Q.conf, conf);
    link_init(&Q.wss);
    uv_timer_init(loop, &Q.progress);
    uv_timer_init(loop, &Q.stop_grace);
    snap_reader_external_reaper(true);
    snap_reader_set_stall_ms((int)conf->stall_ms);
    Q.started = true;
}

static void on_stop_grace(uv_timer_t *t)
{
    (void)t;
    Q.readers_killed = true;
    snap_reader_kill_all();
}

void snap_queue_shutdown(void)
{
    if (!Q.started || Q.stopping)
        return;
    Q.stopping = true;
    uv_timer_start(&Q.stop_grace, on_stop_grace, STOP_GRACE_MS, 0);
    for (link_t *l = Q.wss.next; l != &Q.wss; l = l->next) {
        snap_ws *ws = link_entry(l, snap_ws, node);
        for (link_t *q = ws->queue.next; q != &ws->queue;) {
            snap_job *j = link_entry(q, snap_job, node);
            q = q->next;
            if (j->boundary && ws->state == WS_READY)
                continue;
            link_del(&j->node);
            j->cancelled = true;
            j->rc = -1;
            snprintf(j->err, sizeof j->err, "the server is stopping");
            j->after(j);
            free(j);
        }
    }
    dispatch_next();
}

