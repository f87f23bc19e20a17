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

static void free_rows(ui_ended_session *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].client);
    }
    free(v);
}

static void clear_list(ui_ended *e)
{
    free_rows(e->v, e->n);
    e->v = NULL;
    e->n = 0;
    e->total = 0;
}

/* What each other machine last answered (records with glance): its
 * ended sessions' rows, newest first, at most ENDED_MAX. */
typedef struct ended_remote {
    ui_ended_session *v;
    size_t n;
    bool asking;
} ended_remote;

static void clear_remote(ended_remote *r)
{
    free_rows(r->v, r->n);
    r->v = NULL;
    r->n = 0;
}

void ended_free(ui_ended *e)
{
    clear_list(e);
    if (e->remote) {
        for (int k = 0; k < UI_HOSTS_MAX; k++)
            clear_remote(&e->remote[k]);
        free(e->remote);
        e->remote = NULL;
    }
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
        if (old[i].name && old[i].host == 0 && strcmp(old[i].dir, rec->name) == 0 && old[i].mtime == rec->mtime) {
            *out = old[i];
            old[i].name = old[i].client = NULL;
            return true;
        }
    }
    return false;
}

static int newest_first(const void *a, const void *b)
{
    double x = ((const ui_ended_session *)a)->mtime, y = ((const ui_ended_session *)b)->mtime;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The other machines' ended sessions (those their servers no longer have)
 * join this machine's, newest first, the list cut to ENDED_MAX again. */
static void merge_remote(tui_t *t)
{
    ui_ended *e = &t->ended;
    if (!e->remote)
        return;
    for (size_t k = 1; k < t->hosts.n && k < UI_HOSTS_MAX; k++) {
        ended_remote *r = &e->remote[k];
        if (t->hosts.v[k]->state != HOST_UP)
            continue; /* what it answered may be old: its rows come back with it */
        for (size_t i = 0; i < r->n; i++) {
            const ui_ended_session *x = &r->v[i];
            ui_session *live = ui_sessions_find(&t->list, (int)k * UI_HOST_STRIDE + x->id);
            if (live && !strchr(x->dir, '.'))
                continue; /* its server still has it */
            e->total++;
            e->v = xrealloc(e->v, (e->n + 1) * sizeof *e->v);
            ui_ended_session *s = &e->v[e->n++];
            *s = *x;
            s->name = xstrdup(x->name);
            s->client = xstrdup(x->client);
        }
    }
    qsort(e->v, e->n, sizeof *e->v, newest_first);
    while (e->n > ENDED_MAX) {
        e->n--;
        free(e->v[e->n].name);
        free(e->v[e->n].client);
    }
}

/* A directory name as a server writes them (7, 7.1), from another
 * machine's answer. */
static bool dir_name_ok(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 10 || s[0] == '0')
        return false;
    if (!s[n])
        return true;
    if (s[n] != '.' || !s[n + 1] || s[n + 1] == '0')
        return false;
    size_t m = strspn(s + n + 1, "0123456789");
    return m <= 10 && !s[n + 1 + m];
}

static bool scan(tui_t *t);

typedef struct remote_ask {
    tui_t *t;
    int host;
} remote_ask;

/* Another machine's answer: hostile, so every field is checked, its text
 * made safe, and at most ENDED_MAX rows taken. */
static void on_remote_list(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    remote_ask *a = user;
    tui_t *t = a->t;
    int k = a->host;
    free(a);
    ui_ended *e = &t->ended;
    if (!e->remote)
        return;
    ended_remote *r = &e->remote[k];
    r->asking = false;
    json_t *list = reply ? json_object_get(reply, "sessions") : NULL;
    if (!json_is_array(list))
        return; /* the link went, or an error: the rows it had stay until it answers */
    clear_remote(r);
    r->v = xcalloc(ENDED_MAX, sizeof *r->v);
    for (size_t i = 0; i < json_array_size(list) && r->n < ENDED_MAX; i++) {
        json_t *x = json_array_get(list, i), *g = json_object_get(x, "glance");
        const char *dir = json_string_value(json_object_get(x, "name"));
        json_t *mtime = json_object_get(x, "mtime"), *id = json_object_get(g, "id");
        if (!dir || !dir_name_ok(dir) || !json_is_number(mtime) || !json_is_object(g) || !json_is_integer(id) ||
            json_integer_value(id) < 1 || json_integer_value(id) >= UI_HOST_STRIDE)
            continue;
        ui_ended_session *s = &r->v[r->n++];
        snprintf(s->dir, sizeof s->dir, "%s", dir);
        snprintf(s->key, sizeof s->key, "%d/%s", k, dir);
        s->host = k;
        s->id = (int)json_integer_value(id);
        s->name = clean(json_string_value(json_object_get(g, "name")), "?");
        s->client = clean(json_string_value(json_object_get(g, "client")), "?");
        s->exited = json_is_true(json_object_get(g, "exited"));
        s->exit_code = (int)json_integer_value(json_object_get(g, "exit_code"));
        s->killed = json_is_true(json_object_get(g, "killed"));
        s->mtime = json_number_value(mtime);
    }
    if (e->shown && scan(t))
        e->reselect = true; /* the selected one went: the next refresh says so */
}

/* Ask each other machine that is up for its ended sessions (one question
 * at a time each); its answer scans again. */
static void ask_remote(tui_t *t)
{
    ui_ended *e = &t->ended;
    if (!e->remote)
        e->remote = xcalloc(UI_HOSTS_MAX, sizeof *e->remote);
    for (size_t k = 1; k < t->hosts.n && k < UI_HOSTS_MAX; k++) {
        if (t->hosts.v[k]->state != HOST_UP || e->remote[k].asking)
            continue;
        e->remote[k].asking = true;
        remote_ask *a = xcalloc(1, sizeof *a);
        a->t = t;
        a->host = (int)k;
        hosts_request_on(t, (int)k, json_pack("{s:s, s:i}", "cmd", "records", "glance", ENDED_MAX), on_remote_list,
                         a);
    }
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
            snprintf(s->key, sizeof s->key, "%s", recs[i].name);
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
    merge_remote(t);
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
        ask_remote(t);
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
    if (e->reselect) {
        e->reselect = false;
        return true;
    }
    if (e->shown && (force || !e->scanned_at || ui_now() - e->scanned_at >= RESCAN_S)) {
        ask_remote(t);
        return scan(t);
    }
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
        if (strcmp(e->selected, e->v[i].key) == 0)
            *sel_line = total;
        rows[total++] = (sidebar_row){SB_ENDED, (int)i, NULL};
    }
    return total;
}

void ended_draw_row(tui_t *t, const sidebar_row *row, int y)
{
    ui_rect r = t->sidebar;
    const ui_ended_session *s = &t->ended.v[row->index];
    bool sel = strcmp(t->ended.selected, s->key) == 0;
    /* Greyed: what is on the list for review, not running. */
    theme_elem e = sel ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
    theme_elem text = sel ? TH_SIDEBAR_SELECTED : TH_STATE_IDLE;
    paint_set(e, e);
    paint_fill(y, r.x, r.w);
    const char *glyph = !s->exited ? "?" : s->exit_code == 0 && !s->killed ? (paint_unicode() ? "\xe2\x9c\x93" : "+")
                                                                           : (paint_unicode() ? "\xe2\x9c\x97" : "x");
    paint_set(text, e);
    paint_text(y, r.x + 1, 1, glyph);
    char right[128], age[16];
    ui_age_text(wall_sec() - s->mtime, age, sizeof age);
    char where[48];
    if (s->host)
        hosts_id_text(t, s->host * UI_HOST_STRIDE + s->id, where, sizeof where); /* box:7 */
    snprintf(right, sizeof right, "%s%s%s %4s", s->host ? where : "", s->host && strchr(s->dir, '.') ?
             strchr(s->dir, '.') : "", s->host ? "" : s->dir, age);
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
        if (strcmp(e->v[i].key, e->selected) == 0)
            return &e->v[i];
    return NULL;
}

void ended_select(tui_t *t, size_t index)
{
    ui_ended *e = &t->ended;
    if (index >= e->n)
        return;
    char dir[sizeof e->selected];
    snprintf(dir, sizeof dir, "%s", e->v[index].key);
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
        snprintf(out->dir, sizeof out->dir, "%s", es->dir); /* on its machine: copied first (remoterec.c) */
        out->id = es->host * UI_HOST_STRIDE + es->id;
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
