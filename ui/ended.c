/*
 * ended.c - see ended.h.
 */
#include "config.h"

#include "ended.h"

#include "record/sessfiles.h"
#include "record/timeline.h"
#include "tui_int.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A shown list is scanned again at most this often without a reason (a
 * session ended elsewhere, a directory was removed by corral gc). */
#define RESCAN_S 5.0

static void clear_list(ui_ended *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].name);
        free(e->v[i].client);
    }
    free(e->v);
    e->v = NULL;
    e->n = 0;
    e->total = 0;
}

void ended_free(ui_ended *e)
{
    clear_list(e);
    e->shown = false;
    e->selected[0] = '\0';
}

/* A directory the server's list has: "7" while session 7 is in it (an
 * older session 7's files are renamed 7.1 when the id is drawn again). */
static bool in_server(tui_t *t, const char *dir)
{
    if (strchr(dir, '.'))
        return false;
    long id = strtol(dir, NULL, 10);
    return id > 0 && id <= INT_MAX && ui_sessions_find(&t->list, (int)id) != NULL;
}

static char *clean(const char *s, const char *dflt)
{
    if (!s || !*s)
        s = dflt;
    return sanitize_text(s, strlen(s), 256);
}

/* The row of the last scan for a directory unchanged since (its log's
 * mtime the same), moved out of old into *out; false when there is none. */
static bool take_unchanged(ui_ended_session *old, size_t n_old, const sessfiles_rec *rec, ui_ended_session *out)
{
    for (size_t i = 0; i < n_old; i++) {
        if (old[i].name && strcmp(old[i].dir, rec->name) == 0 && old[i].mtime == rec->mtime) {
            *out = old[i];
            old[i].name = old[i].client = NULL;
            return true;
        }
    }
    return false;
}

/* Read the list again; true when the selected one went (the caller
 * selects another row). */
static bool scan(tui_t *t)
{
    ui_ended *e = &t->ended;
    ui_ended_session *old = e->v;
    size_t n_old = e->n;
    e->v = NULL;
    e->n = e->total = 0;
    e->scanned_at = ui_now();
    sessfiles_rec *recs;
    size_t n;
    char err[PATH_MAX + 200];
    if (sessfiles_list(0, &recs, &n, NULL, err, sizeof err) < 0) {
        tui_message(t, true, "ended sessions: %s", err);
        n = 0;
        recs = NULL;
    }
    e->v = xcalloc(n < ENDED_MAX ? n + 1 : ENDED_MAX, sizeof *e->v);
    for (size_t i = 0; i < n; i++) {
        if (in_server(t, recs[i].name))
            continue;
        e->total++;
        if (e->n == ENDED_MAX)
            continue;
        if (take_unchanged(old, n_old, &recs[i], &e->v[e->n])) {
            e->n++; /* read once: an ended session's log seldom changes */
            continue;
        }
        sessfiles f;
        sessfiles_for(recs[i].name, &f);
        timeline_t tl;
        if (sessfiles_glance(f.events, &tl, err, sizeof err) == 0) {
            ui_ended_session *s = &e->v[e->n++];
            snprintf(s->dir, sizeof s->dir, "%s", recs[i].name);
            s->id = tl.session ? tl.session : atoi(recs[i].name);
            s->name = clean(tl.name, "?");
            s->client = clean(tl.client, "?");
            s->exited = tl.exited;
            s->exit_code = tl.exit_code;
            s->killed = tl.signal != NULL;
            s->mtime = recs[i].mtime;
        }
        tl_free(&tl);
        sessfiles_free(&f);
    }
    for (size_t i = 0; i < n_old; i++) {
        free(old[i].name);
        free(old[i].client);
    }
    free(old);
    free(recs);
    if (e->total > e->n)
        snprintf(e->heading, sizeof e->heading, "ended (newest %zu of %zu)", e->n, e->total);
    else
        snprintf(e->heading, sizeof e->heading, "ended");
    tui_redraw_soon(t); /* the sidebar is drawn whole every frame */
    /* The selected one went (removed, or renamed as its id was drawn again). */
    if (e->selected[0] && !ended_selected(t)) {
        e->selected[0] = '\0';
        return true;
    }
    return false;
}

bool ended_toggle(tui_t *t)
{
    ui_ended *e = &t->ended;
    bool was = ended_selected(t) != NULL, reselect = false;
    e->shown = !e->shown;
    if (e->shown) {
        reselect = scan(t);
        if (!e->n)
            tui_message(t, false, "no ended sessions are recorded (corral log lists what is)");
        else if (!t->selected && !tiles_fold_selected(t))
            ended_select(t, 0);
    } else {
        clear_list(e);
        if (was) {
            e->selected[0] = '\0';
            reselect = true;
        }
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
    return reselect;
}

bool ended_refresh(tui_t *t, bool force)
{
    ui_ended *e = &t->ended;
    if (e->shown && (force || !e->scanned_at || ui_now() - e->scanned_at >= RESCAN_S))
        return scan(t);
    return false;
}

void ended_list_changed(tui_t *t)
{
    t->ended.scanned_at = 0;
}

int ended_row_count(const tui_t *t)
{
    return t->ended.shown ? (int)t->ended.n + 1 : 0;
}

int ended_rows(tui_t *t, sidebar_row *rows, int total, int *sel_line)
{
    ui_ended *e = &t->ended;
    if (!e->shown)
        return total;
    rows[total++] = (sidebar_row){SB_HEADING, -1, e->heading[0] ? e->heading : "ended"};
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->selected, e->v[i].dir) == 0)
            *sel_line = total;
        rows[total++] = (sidebar_row){SB_ENDED, (int)i, NULL};
    }
    return total;
}

void ended_draw_row(tui_t *t, const sidebar_row *row, int y)
{
    ui_rect r = t->sidebar;
    const ui_ended_session *s = &t->ended.v[row->index];
    bool sel = strcmp(t->ended.selected, s->dir) == 0;
    /* Greyed: what is on the list for review, not running. */
    theme_elem e = sel ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
    theme_elem text = sel ? TH_SIDEBAR_SELECTED : TH_STATE_IDLE;
    paint_set(e, e);
    paint_fill(y, r.x, r.w);
    const char *glyph = !s->exited ? "?" : s->exit_code == 0 && !s->killed ? (paint_unicode() ? "\xe2\x9c\x93" : "+")
                                                                           : (paint_unicode() ? "\xe2\x9c\x97" : "x");
    paint_set(text, e);
    paint_text(y, r.x + 1, 1, glyph);
    char right[64], age[16];
    ui_age_text(wall_sec() - s->mtime, age, sizeof age);
    snprintf(right, sizeof right, "%s %4s", s->dir, age);
    int rw = paint_width(right), name_w = r.w - 4 - rw - 1;
    bool show_right = name_w >= 6;
    if (!show_right)
        name_w = r.w - 4;
    if (name_w > 0)
        paint_text(y, r.x + 3, name_w, s->name);
    if (show_right)
        paint_text(y, r.x + r.w - rw - 1, rw, right);
}

const ui_ended_session *ended_selected(tui_t *t)
{
    ui_ended *e = &t->ended;
    if (!e->shown || !e->selected[0])
        return NULL;
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->v[i].dir, e->selected) == 0)
            return &e->v[i];
    return NULL;
}

void ended_select(tui_t *t, size_t index)
{
    ui_ended *e = &t->ended;
    if (index >= e->n)
        return;
    char dir[sizeof e->selected];
    snprintf(dir, sizeof dir, "%s", e->v[index].dir);
    tui_select(t, 0);
    t->tiles.fold_selected[0] = '\0';
    snprintf(e->selected, sizeof e->selected, "%s", dir);
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void ended_refuse(tui_t *t)
{
    char l[32], r[32], d[32];
    key_bindings_names(&t->conf->keys, KA_TIMELINE, l, sizeof l);
    key_bindings_names(&t->conf->keys, KA_REPLAY, r, sizeof r);
    key_bindings_names(&t->conf->keys, KA_DIFF, d, sizeof d);
    tui_message(t, true, "ended session: %s timeline, %s replay, %s last diff", l, r, d);
}

bool review_target_selected(tui_t *t, ui_review_target *out)
{
    memset(out, 0, sizeof *out);
    const ui_ended_session *es = ended_selected(t);
    ui_session *s = tui_selected(t);
    if (es) {
        snprintf(out->dir, sizeof out->dir, "%s", es->dir);
        out->id = es->id;
        snprintf(out->name, sizeof out->name, "%s", es->name);
        return true;
    }
    if (s) {
        snprintf(out->dir, sizeof out->dir, "%d", s->id);
        out->id = s->id;
        out->in_server = true;
        out->running = s->running;
        snprintf(out->name, sizeof out->name, "%s", s->name);
        return true;
    }
    tui_message(t, true, "no session selected");
    return false;
}
