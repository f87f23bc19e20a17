/*
 * snapinfo.c - see snapinfo.h.
 */
#include "config.h"

#include "snapinfo.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct snap_session {
    int id;
    int added, modified, deleted;
    int missed; /* paths its last command's snapshots left out */
    bool has_counts, risk;
    char *workspace;
    json_t *snapshots; /* the workspace's state, as last heard */
} snap_session;

/* Every session heard of, by id. */
static struct {
    snap_session *v;
    size_t n;
} S;

static snap_session *sess_get(int id, bool make)
{
    for (size_t i = 0; i < S.n; i++)
        if (S.v[i].id == id)
            return &S.v[i];
    if (!make)
        return NULL;
    S.v = xrealloc(S.v, (S.n + 1) * sizeof *S.v);
    snap_session *s = &S.v[S.n++];
    memset(s, 0, sizeof *s);
    s->id = id;
    return s;
}

void snapinfo_note_session(json_t *session)
{
    int id = (int)json_integer_value(json_object_get(session, "id"));
    if (!id)
        return;
    snap_session *s = sess_get(id, true);
    const char *ws = json_string_value(json_object_get(session, "workspace"));
    if (ws && (!s->workspace || strcmp(ws, s->workspace) != 0)) {
        free(s->workspace);
        s->workspace = xstrdup(ws);
    }
    json_t *snap = json_object_get(session, "snapshots");
    if (snap) {
        json_decref(s->snapshots);
        s->snapshots = json_incref(snap);
    }
    json_t *ch = json_object_get(session, "changes");
    if (ch) {
        json_t *c = json_object_get(ch, "counts");
        s->has_counts = true;
        s->added = (int)json_integer_value(json_object_get(c, "added"));
        s->modified = (int)(json_integer_value(json_object_get(c, "modified")) +
                            json_integer_value(json_object_get(c, "typechanged")) +
                            json_integer_value(json_object_get(c, "renamed")));
        s->deleted = (int)json_integer_value(json_object_get(c, "deleted"));
        s->risk = json_is_true(json_object_get(ch, "risk"));
        s->missed = (int)json_integer_value(json_object_get(ch, "not_captured"));
    }
}

void snapinfo_note_list(json_t *reply)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(reply, "sessions"), i, s)
        snapinfo_note_session(s);
}

void snapinfo_note_snapshot(tui_t *t, json_t *ev)
{
    const char *ws = json_string_value(json_object_get(ev, "workspace"));
    json_t *snap = json_object_get(ev, "snapshots");
    if (!ws || !snap)
        return;
    for (size_t i = 0; i < S.n; i++) {
        if (S.v[i].workspace && strcmp(S.v[i].workspace, ws) == 0) {
            json_decref(S.v[i].snapshots);
            S.v[i].snapshots = json_incref(snap);
        }
    }
    tui_redraw_soon(t);
}

int snapinfo_sidebar_counts(tui_t *t, const ui_session *s, int y, int right, int minx, theme_elem under)
{
    (void)t;
    snap_session *d = sess_get(s->id, false);
    /* Only a last command that changed something, or left something out:
     * no "+0~0-0" noise, but never a count that hides what was not
     * captured ("!": d lists it). */
    if (!d || !d->has_counts || (!d->added && !d->modified && !d->deleted && !d->risk && !d->missed))
        return 0;
    char text[48];
    snprintf(text, sizeof text, "+%d~%d-%d%s", d->added, d->modified, d->deleted, d->missed ? "!" : "");
    int w = paint_width(text);
    if (right - w - 1 < minx)
        return 0;
    paint_set(d->risk ? TH_PROFILE_FULL : under, under);
    paint_text(y, right - w - 1, w, text);
    paint_set(under, under);
    return w + 1;
}

int snapinfo_status(tui_t *t, int y, int x, int maxw)
{
    snap_session *d = sess_get(t->selected, false);
    const char *machine;
    /* A message or a rules error needs the room more. */
    if (!d || !d->snapshots || maxw < 12 || (t->message[0] && ui_now() < t->message_until) ||
        hosts_rules_error(t, &machine))
        return 0;
    const char *phase = json_string_value(json_object_get(d->snapshots, "phase"));
    const char *state = json_string_value(json_object_get(d->snapshots, "state"));
    char text[96];
    if (phase && strcmp(phase, "idle") != 0) {
        long long done = json_integer_value(json_object_get(d->snapshots, "done"));
        long long total = json_integer_value(json_object_get(d->snapshots, "total"));
        if (strcmp(phase, "scanning") == 0)
            snprintf(text, sizeof text, " snapshot: scanning %lld files ", total);
        else
            snprintf(text, sizeof text, " snapshot: %s %lld/%lld ", phase, done, total);
    } else if (state && (strcmp(state, "refused") == 0 || strcmp(state, "failed") == 0)) {
        snprintf(text, sizeof text, " snapshots %s ", state);
    } else if (json_object_get(d->snapshots, "store_bytes")) {
        char h[32];
        format_bytes((double)json_integer_value(json_object_get(d->snapshots, "store_bytes")), true, h, sizeof h);
        snprintf(text, sizeof text, " snapshots %s ", h);
    } else {
        return 0;
    }
    paint_set(TH_STATUS, TH_STATUS);
    return paint_text(y, x, maxw, text);
}

void snapinfo_free(void)
{
    for (size_t i = 0; i < S.n; i++) {
        free(S.v[i].workspace);
        json_decref(S.v[i].snapshots);
    }
    free(S.v);
    S.v = NULL;
    S.n = 0;
}
