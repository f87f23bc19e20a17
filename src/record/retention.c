/*
 * retention.c - see retention.h.
 */
#include "config.h"

#include "record/retention.h"

#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAGED_PREFIX ".removing-"

retention_live *retention_live_of(char *const *dirs, const int *ids, const bool *running, size_t n, size_t *n_out)
{
    retention_live *v = xcalloc(n ? n : 1, sizeof *v);
    *n_out = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!dirs[i] || stat(dirs[i], &st) < 0)
            continue;
        v[*n_out] = (retention_live){st.st_dev, st.st_ino, ids[i], running[i]};
        (*n_out)++;
    }
    return v;
}

static const retention_live *live_find(const retention_live *live, size_t n, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < n; i++)
        if (live[i].dev == dev && live[i].ino == ino)
            return &live[i];
    return NULL;
}

static int oldest_first(const void *a, const void *b)
{
    const retention_entry *x = a, *y = b;
    return x->probe.last_change < y->probe.last_change ? -1 : x->probe.last_change > y->probe.last_change;
}

/* Whether en's session provably ended (its events are read for it). */
static bool proven(retention_plan *p, retention_entry *en)
{
    if (en->proof[0])
        return en->ended;
    sessdir_probe_events(p->root, &en->probe);
    en->ended = sessdir_proven_ended(&en->probe, p->now, en->proof, sizeof en->proof);
    if (!en->ended)
        snprintf(en->why, sizeof en->why, "%s", en->proof);
    return en->ended;
}

void retention_scan(retention_plan *p, const char *root, uint64_t retention_ms, uint64_t max_total,
                    const retention_live *live, size_t n_live, double now, bool dry_run)
{
    memset(p, 0, sizeof *p);
    p->root = xstrdup(root);
    p->retention_ms = retention_ms;
    p->max_total = max_total;
    p->now = now;
    p->dry_run = dry_run;
    DIR *d = opendir(root);
    if (!d) {
        if (errno != ENOENT)
            snprintf(p->error, sizeof p->error, "cannot read %s: %s", root, strerror(errno));
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, STAGED_PREFIX, strlen(STAGED_PREFIX)) == 0 &&
            sessdir_name_ok(e->d_name + strlen(STAGED_PREFIX))) {
            p->leftovers = xrealloc(p->leftovers, (p->n_leftovers + 1) * sizeof *p->leftovers);
            p->leftovers[p->n_leftovers++] = xstrdup(e->d_name);
            continue;
        }
        if (!sessdir_name_ok(e->d_name))
            continue; /* not a session's: never touched */
        retention_entry en;
        memset(&en, 0, sizeof en);
        char err[300];
        if (sessdir_probe_dir(root, e->d_name, &en.probe, err, sizeof err) < 0)
            continue; /* gone meanwhile, or not a directory */
        p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
        p->v[p->n++] = en;
    }
    closedir(d);
    if (p->n) /* (qsort may not be given NULL) */
        qsort(p->v, p->n, sizeof *p->v, oldest_first);

    double keep_s = (double)retention_ms / 1000.0;
    uint64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        retention_entry *en = &p->v[i];
        total += en->probe.bytes;
        const retention_live *l = live_find(live, n_live, en->probe.dev, en->probe.ino);
        en->live = l != NULL;
        if (l) {
            if (l->running)
                snprintf(en->why, sizeof en->why, "running (session %d)", l->id);
            else
                snprintf(en->why, sizeof en->why, "in the server's list (corral rm %d lets it go)", l->id);
            continue;
        }
        if (!(retention_ms && now - en->probe.last_change > keep_s)) {
            snprintf(en->why, sizeof en->why, "within the limits");
            continue; /* unless the cap asks for it (below) */
        }
        if (!proven(p, en))
            continue;
        en->verdict = RET_AGE;
    }
    p->bytes_before = total;
    /* Over the cap: the oldest that provably ended go first. */
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].verdict != RET_KEEP)
            total -= p->v[i].probe.bytes;
    for (size_t i = 0; max_total && total > max_total && i < p->n; i++) {
        retention_entry *en = &p->v[i];
        if (en->verdict != RET_KEEP || en->live || !proven(p, en))
            continue;
        en->verdict = RET_SIZE;
        en->why[0] = '\0';
        total -= en->probe.bytes;
    }
}

void retention_stage(retention_plan *p, const retention_live *live, size_t n_live)
{
    if (p->dry_run)
        return;
    int fd = open(p->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (size_t i = 0; fd >= 0 && i < p->n; i++) {
        retention_entry *en = &p->v[i];
        if (en->verdict == RET_KEEP)
            continue;
        struct stat st;
        if (fstatat(fd, en->probe.name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            st.st_dev != en->probe.dev || st.st_ino != en->probe.ino) {
            snprintf(en->error, sizeof en->error, "it changed since it was looked at (a new session took the id?): "
                     "left alone");
            continue;
        }
        if (live_find(live, n_live, st.st_dev, st.st_ino)) {
            snprintf(en->error, sizeof en->error, "a session of the server uses it now: left alone");
            continue;
        }
        snprintf(en->staged_name, sizeof en->staged_name, STAGED_PREFIX "%s", en->probe.name);
        if (renameat(fd, en->probe.name, fd, en->staged_name) < 0) {
            snprintf(en->error, sizeof en->error, "cannot rename it aside: %s", strerror(errno));
            continue;
        }
        en->staged = true;
    }
    if (fd >= 0)
        close(fd);
}

void retention_remove(retention_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        retention_entry *en = &p->v[i];
        if (!en->staged)
            continue;
        if (sessdir_remove(p->root, en->staged_name, en->error, sizeof en->error) == 0)
            en->removed = true;
    }
    for (size_t i = 0; i < p->n_leftovers; i++) {
        char err[400];
        sessdir_remove(p->root, p->leftovers[i], err, sizeof err);
    }
}

static json_t *entry_json(const retention_entry *en)
{
    char when[32];
    iso_time(when, en->probe.last_change);
    json_t *o = json_pack("{s:s, s:i, s:I, s:s}", "name", en->probe.name, "session", en->probe.id, "bytes",
                          (json_int_t)en->probe.bytes, "last_change", when);
    if (en->probe.created > 0) {
        char created[32];
        iso_time(created, en->probe.created);
        json_object_set_new(o, "created", json_string(created));
    }
    return o;
}

json_t *retention_json(const retention_plan *p)
{
    json_t *removed = json_array(), *kept = json_array(), *failed = json_array();
    uint64_t after = p->bytes_before;
    for (size_t i = 0; i < p->n; i++) {
        const retention_entry *en = &p->v[i];
        json_t *o = entry_json(en);
        if (en->verdict == RET_KEEP) {
            json_object_set_new(o, "why", json_string(en->why));
            json_array_append_new(kept, o);
            continue;
        }
        json_object_set_new(o, "reason", json_string(en->verdict == RET_AGE ? "retention" : "max-total-size"));
        json_object_set_new(o, "proof", json_string(en->proof));
        if (en->removed || p->dry_run) {
            after -= en->probe.bytes;
            json_array_append_new(removed, o);
        } else {
            json_object_set_new(o, "error", json_string(en->error[0] ? en->error : "not removed"));
            json_array_append_new(failed, o);
        }
    }
    json_t *r = json_pack("{s:s, s:I, s:I, s:I, s:I, s:b, s:o, s:o, s:o}", "dir", p->root, "retention_seconds",
                          (json_int_t)(p->retention_ms / 1000), "max_total_size", (json_int_t)p->max_total,
                          "bytes_before", (json_int_t)p->bytes_before, "bytes_after", (json_int_t)after, "dry_run",
                          p->dry_run, "removed", removed, "kept", kept, "failed", failed);
    if (p->error[0])
        json_object_set_new(r, "error", json_string(p->error));
    return r;
}

void retention_plan_free(retention_plan *p)
{
    free(p->root);
    free(p->v);
    for (size_t i = 0; i < p->n_leftovers; i++)
        free(p->leftovers[i]);
    free(p->leftovers);
    memset(p, 0, sizeof *p);
}
