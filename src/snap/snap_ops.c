/*
 * snap_ops.c - see snap_ops.h.
 */
#include "config.h"

#include "snap/snap_ops.h"

#include "snap/snap_diff.h"
#include "snap/snap_gc.h"
#include "snap/snap_patch.h"
#include "snap/snap_quarantine.h"
#include "snap/snap_revert.h"
#include "snap/snap_storewire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The strings of a JSON array (NULL entries for anything else), as the
 * gc functions take them; free with free_strings. */
static char **strings_of(json_t *a, size_t *n)
{
    *n = json_array_size(a);
    char **v = xcalloc(*n ? *n : 1, sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        char *s = ssw_str_dup(json_array_get(a, i));
        v[i] = s ? s : xstrdup("");
    }
    return v;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static const char *str_or_empty(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A snapshot id of the parameters; "" stands for the snapshot the job's
 * request just took ("taken", added by the store's process). */
static const char *commit_or_taken(json_t *p, const char *key)
{
    const char *s = str_or_empty(p, key);
    return s[0] ? s : str_or_empty(json_object_get(p, "taken"), "commit");
}

/* A command's boundary: its snapshot kept for its session, and at its end
 * the changes since its "before", with the repositories it made or changed
 * made inert before its record says it is done. */
static json_t *op_boundary(snap_store *st, json_t *p)
{
    json_t *out = json_object();
    char err[600] = "";
    const char *key = str_or_empty(p, "key"), *commit = commit_or_taken(p, "commit");
    int seq = (int)json_integer_value(json_object_get(p, "seq"));
    double created = json_number_value(json_object_get(p, "created"));
    if (key[0] && snap_gc_anchor(st, key, seq, commit, err, sizeof err) < 0)
        json_object_set_new(out, "err", ssw_str(err));
    if (json_is_true(json_object_get(p, "session_start")))
        snap_gc_session(st, key, created, 0);
    json_t *end = json_object_get(p, "end");
    if (json_is_object(end)) {
        const char *before = str_or_empty(end, "before");
        snap_changes c;
        if (snap_changes_compute(st, before, commit, &c, err, sizeof err) == 0) {
            json_t *changes = snap_changes_json(&c, false);
            snap_changes_free(&c);
            gq_result q;
            memset(&q, 0, sizeof q);
            char qerr[300];
            if (snap_quarantine_after(st, before, commit, str_or_empty(end, "stamp"), &q, qerr, sizeof qerr) == 0)
                snap_quarantine_record(changes, &q);
            gq_result_free(&q);
            json_object_set_new(out, "changes", changes);
        } else {
            json_object_set_new(out, "err", ssw_str(err));
        }
    }
    /* A first snapshot stores thousands of loose objects: packed soon, in
     * a job of its own behind the commands waiting now. */
    json_object_set_new(out, "gc_due",
                        json_boolean(json_integer_value(json_object_get(json_object_get(p, "taken"), "stored")) > 1000 &&
                                     snap_gc_due(st)));
    if (json_is_true(json_object_get(p, "session_end"))) {
        snap_gc_session(st, key, created, json_number_value(json_object_get(p, "ended")));
        if (snap_gc_due(st)) {
            size_t n_live;
            char **live = strings_of(json_object_get(p, "live"), &n_live);
            snap_gc_result r;
            snap_gc_run(st, false, (const char *const *)live, n_live, &r);
            free_strings(live, n_live);
            json_object_set_new(out, "measure", json_true());
        }
    }
    return out;
}

/* A snapshot taken before its session existed (an exec's "before"), kept
 * for that session now. */
static json_t *op_anchor(snap_store *st, json_t *p)
{
    json_t *out = json_object();
    char err[600];
    const char *key = str_or_empty(p, "key");
    if (snap_gc_anchor(st, key, (int)json_integer_value(json_object_get(p, "seq")), str_or_empty(p, "commit"), err,
                       sizeof err) < 0)
        json_object_set_new(out, "err", ssw_str(err));
    snap_gc_session(st, key, json_number_value(json_object_get(p, "created")), 0);
    return out;
}

static json_t *op_maintain(snap_store *st, json_t *p)
{
    size_t n_live;
    char **live = strings_of(json_object_get(p, "live"), &n_live);
    snap_gc_result r;
    snap_gc_run(st, false, (const char *const *)live, n_live, &r);
    free_strings(live, n_live);
    return json_object();
}

static json_t *op_diff(snap_store *st, json_t *p, buf_t *text)
{
    json_t *out = json_object();
    snap_patch_opts opts = {.ignore_space = json_is_true(json_object_get(p, "ignore_space"))};
    json_int_t fmt = json_integer_value(json_object_get(p, "format"));
    json_int_t max = json_integer_value(json_object_get(p, "max"));
    if (fmt < SNAP_FMT_PATCH || fmt > SNAP_FMT_FILES || max <= 0) {
        json_object_set_new(out, "rc", json_integer(-1));
        json_object_set_new(out, "err", ssw_str("a diff with a bad format or size"));
        return out;
    }
    json_t *files = NULL;
    char err[700] = "";
    const char *before = str_or_empty(p, "before"), *after = commit_or_taken(p, "after");
    int rc = snap_render(st, before, after, (snap_format)fmt, &opts, (size_t)max, text, &files, err, sizeof err);
    json_object_set_new(out, "rc", json_integer(rc));
    json_object_set_new(out, "after", json_string(after));
    if (rc < 0)
        json_object_set_new(out, "err", ssw_str(err));
    if (files)
        json_object_set_new(out, "files", files);
    return out;
}

/* Plan against "now", and carry it out unless it is a dry run. */
static json_t *op_revert(snap_store *st, json_t *p)
{
    json_t *out = json_object();
    char err[700] = "";
    bool dry_run = json_is_true(json_object_get(p, "dry_run"));
    snap_revert_plan plan;
    memset(&plan, 0, sizeof plan);
    const char *now = commit_or_taken(p, "now");
    int rc = now[0] ? snap_revert_plan_make(st, str_or_empty(p, "before"), str_or_empty(p, "after"), now, &plan, err,
                                            sizeof err)
                    : (snprintf(err, sizeof err, "no snapshot of the workspace could be taken now"), -1);
    if (rc == 0 && !dry_run && plan.n_conflicts == 0)
        rc = snap_revert_apply(st, &plan, err, sizeof err);
    if (rc == 0 || plan.n_conflicts)
        json_object_set_new(out, "plan", snap_revert_plan_json(&plan));
    if (plan.n_conflicts)
        snprintf(err, sizeof err, "%zu file%s changed again after command %d: nothing was reverted", plan.n_conflicts,
                 plan.n_conflicts == 1 ? "" : "s", (int)json_integer_value(json_object_get(p, "n")));
    json_object_set_new(out, "rc", json_integer(rc));
    json_object_set_new(out, "conflicts", json_integer((json_int_t)plan.n_conflicts));
    if (err[0])
        json_object_set_new(out, "err", ssw_str(err));
    snap_revert_plan_free(&plan);
    /* A revert writes files: the next boundary must look. */
    if (!dry_run)
        st->force_next = true;
    return out;
}

static json_t *op_gc(snap_store *st, json_t *p)
{
    json_t *gone_a = json_object_get(p, "gone");
    size_t n_gone = json_array_size(gone_a);
    snap_gc_gone *gone = xcalloc(n_gone ? n_gone : 1, sizeof *gone);
    for (size_t i = 0; i < n_gone; i++) {
        json_t *g = json_array_get(gone_a, i);
        gone[i].id = (int)json_integer_value(json_array_get(g, 0));
        gone[i].start_lo = json_number_value(json_array_get(g, 1));
        gone[i].start_hi = json_number_value(json_array_get(g, 2));
    }
    int forgotten = snap_gc_forget(st, gone, n_gone);
    free(gone);
    size_t n_live;
    char **live = strings_of(json_object_get(p, "live"), &n_live);
    snap_gc_result r;
    memset(&r, 0, sizeof r);
    int rc = snap_gc_run(st, json_is_true(json_object_get(p, "force")) || forgotten > 0, (const char *const *)live,
                         n_live, &r);
    free_strings(live, n_live);
    return json_pack("{s:i, s:i, s:I, s:I, s:i, s:b, s:o}", "forgotten", forgotten, "rc", rc, "bytes_before",
                     (json_int_t)r.bytes_before, "bytes_after", (json_int_t)r.bytes_after, "sessions_dropped",
                     r.sessions_dropped, "repacked", r.repacked, "error", ssw_str(r.error));
}

json_t *snap_op_run(snap_store *st, const char *kind, json_t *params, buf_t *text, char *err, size_t errlen)
{
    if (!json_is_object(params)) {
        snprintf(err, errlen, "the parameters of '%s' are not an object", kind);
        return NULL;
    }
    if (strcmp(kind, "boundary") == 0)
        return op_boundary(st, params);
    if (strcmp(kind, "anchor") == 0)
        return op_anchor(st, params);
    if (strcmp(kind, "maintain") == 0)
        return op_maintain(st, params);
    if (strcmp(kind, "diff") == 0)
        return op_diff(st, params, text);
    if (strcmp(kind, "revert") == 0)
        return op_revert(st, params);
    if (strcmp(kind, "gc") == 0)
        return op_gc(st, params);
    snprintf(err, errlen, "no snapshot job '%.100s'", kind);
    return NULL;
}
