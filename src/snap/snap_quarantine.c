/*
 * snap_quarantine.c - see snap_quarantine.h.
 */
#include "config.h"

#include "snap/snap_quarantine.h"

#include "snap/snap_meta.h"
#include "snap/snap_take.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool same_hooks(const snap_gitdir *a, const snap_gitdir *b)
{
    if (a->n_hooks != b->n_hooks)
        return false;
    for (int i = 0; i < a->n_hooks; i++)
        if (strcmp(a->hooks[i].name, b->hooks[i].name) != 0 || strcmp(a->hooks[i].sha, b->hooks[i].sha) != 0 ||
            a->hooks[i].mode != b->hooks[i].mode)
            return false;
    return true;
}

int snap_quarantine_after(snap_store *st, const char *before, const char *after, const char *stamp, gq_result *out,
                          char *err, size_t errlen)
{
    snap_meta mb, ma;
    memset(&mb, 0, sizeof mb);
    memset(&ma, 0, sizeof ma);
    int rc = -1;
    if (snap_read_meta(st, before, NULL, &mb, err, errlen) < 0 || snap_read_meta(st, after, NULL, &ma, err, errlen) < 0)
        goto done;
    int wsfd = open(st->ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wsfd < 0) {
        snprintf(err, errlen, "cannot open %s", st->ws);
        goto done;
    }
    size_t before_items = out->n;
    for (size_t i = 0; i < ma.n_repos; i++) {
        const snap_meta_repo *r = &ma.repos[i];
        if (!r->path[0] || !r->git.found)
            continue; /* the workspace's own repository: its sandboxes protect it */
        const snap_meta_repo *old = snap_meta_find_repo(&mb, r->path);
        bool changed = !old || strcmp(old->git.config_sha, r->git.config_sha) != 0 ||
                       strcmp(old->git.hooks_path, r->git.hooks_path) != 0 || !same_hooks(&old->git, &r->git);
        if (changed)
            gq_repo(wsfd, r->path, stamp, out);
    }
    close(wsfd);
    /* What was moved is corral's own change, between this command and the
     * next: the next snapshot must look. */
    if (out->n > before_items)
        st->force_next = true;
    rc = 0;
done:
    snap_meta_free(&mb);
    snap_meta_free(&ma);
    return rc;
}

void snap_quarantine_record(json_t *changes, const gq_result *q)
{
    if (!q->n && !q->n_errors)
        return;
    json_object_set_new(changes, "quarantined", gq_items_json(q));
    json_t *risk = json_object_get(changes, "risk");
    if (!json_is_array(risk)) {
        risk = json_array();
        json_object_set_new(changes, "risk", risk);
    }
    for (size_t i = 0; i < q->n; i++) {
        const gq_item *it = &q->items[i];
        bool hooks = strlen(it->path) >= 5 && strcmp(it->path + strlen(it->path) - 5, "hooks") == 0;
        /* Its lines on one line: a risk detail is one. */
        char *runs = xstrdup(it->runs ? it->runs : "");
        size_t n = strlen(runs);
        while (n && runs[n - 1] == '\n')
            runs[--n] = '\0';
        buf_t joined;
        buf_init(&joined);
        for (char *l = runs; *l;) {
            size_t k = strcspn(l, "\n");
            buf_printf(&joined, "%s%.*s", joined.len ? "; " : "", (int)k, l);
            l += k + (l[k] == '\n');
        }
        free(runs);
        /* What it would have run first: a narrow screen cuts the end. */
        char *detail = xasprintf("made inert by corral: %s (moved to %s; corral git-restore puts it back)",
                                 joined.data ? joined.data : "", it->moved_to);
        buf_free(&joined);
        char *clean = sanitize_text(detail, strlen(detail), 8192);
        /* First: what a reviewer must read before anything else. */
        json_array_insert_new(risk, i, json_pack("{s:s, s:[s], s:s, s:b}", "path", it->path, "marks",
                                                 hooks ? "hook" : "git-dir", "detail", clean, "quarantined", 1));
        free(clean);
        free(detail);
    }
    if (q->n_errors) {
        json_t *e = json_array();
        for (size_t i = 0; i < q->n_errors; i++)
            json_array_append_new(e, json_string(q->errors[i]));
        json_object_set_new(changes, "quarantine_errors", e);
    }
}
