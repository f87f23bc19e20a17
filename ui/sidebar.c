/*
 * sidebar.c - the sidebar of the supervisor screen: its rows in order (a
 * heading per client, its sessions, an agent's finished commands folded
 * into one row, requests that have no session yet, the ended sessions
 * last), the window of them that keeps the selection in view, drawing
 * them, and moving the selection over them.  The rows' parts come from
 * their own files (tiles.c, ended.c, approval_draw.c, snapinfo.c); the
 * order and the selection are here.
 */
#include "config.h"

#include "tui_int.h"
#include "snapinfo.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *profile_short(const char *p)
{
    if (strcmp(p, "workspace-write") == 0)
        return "ws";
    if (strcmp(p, "read-only") == 0)
        return "ro";
    return p;
}

/* The state glyph and its style. */
static const char *state_glyph(tui_t *t, const ui_session *s, double now, theme_elem *e)
{
    bool u = paint_unicode();
    if (s->lost) { /* its machine's link is down: state unknown until it is back */
        *e = TH_STATE_IDLE;
        return "~";
    }
    if (s->running && approval_for_session(t, s->id)) {
        *e = TH_STATE_WAITING;
        return "?";
    }
    if (!s->running && s->ended_on_purpose) { /* you ended it: no failure */
        *e = TH_STATE_IDLE;
        return u ? "\xe2\x96\xa0" : "-";
    }
    if (!s->running) {
        *e = s->exit_code == 0 ? TH_STATE_EXIT_OK : TH_STATE_EXIT_FAIL;
        return s->exit_code == 0 ? (u ? "\xe2\x9c\x93" : "+") : (u ? "\xe2\x9c\x97" : "x");
    }
    if (ui_session_idle(s, now)) {
        *e = TH_STATE_IDLE;
        return u ? "\xe2\x97\x8b" : "o";
    }
    *e = TH_STATE_RUNNING;
    return u ? "\xe2\x97\x8f" : "*";
}

static void draw_session_row(tui_t *t, ui_session *s, int y, double now)
{
    ui_rect r = t->sidebar;
    theme_elem row = s->id == t->selected ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
    paint_set(row, row);
    paint_fill(y, r.x, r.w);
    theme_elem ge;
    const char *glyph = state_glyph(t, s, now, &ge);
    paint_set(ge, row);
    paint_text(y, r.x + 1, 1, glyph);
    if (s->bell) {
        paint_set(TH_BELL, row);
        paint_text(y, r.x + 2, 1, "!");
    } else if (s->pinned) { /* kept: never pruned, nor cleared with the exited */
        paint_set(row, row);
        paint_text(y, r.x + 2, 1, paint_unicode() ? "\xe2\x9a\x91" : "p");
    }
    /* Right side: open network connections, profile and age (or the exit;
     * or, while a request of it waits, what for: "? pypi.org"). */
    char right[96], age[48], conns[24] = "";
    const ui_approval *wa = s->running ? approval_for_session(t, s->id) : NULL;
    if (s->lost) {
        snprintf(age, sizeof age, "lost");
    } else if (wa) {
        char wait[96];
        approval_wait_text(wa, true, wait, sizeof wait);
        snprintf(age, sizeof age, "%.12s", wait); /* a host is ASCII (IDNA): bytes are columns */
    } else if (s->running)
        ui_age_text(now - s->created_at, age, sizeof age);
    else
        snprintf(age, sizeof age, "%s%d", paint_unicode() ? "\xe2\x86\x92" : "=", s->exit_code);
    if (s->connections > 0)
        snprintf(conns, sizeof conns, "%s%d ", paint_unicode() ? "\xe2\x87\x85" : "^", s->connections);
    const char *prof = profile_short(s->profile);
    snprintf(right, sizeof right, "%s%.6s %4s", conns, prof, age);
    int rw = paint_width(right);
    int name_w = r.w - 4 - rw - 1;
    /* A narrow sidebar keeps the name: profile and age go first. */
    bool show_right = name_w >= 6 || name_w >= paint_width(s->name);
    if (!show_right)
        name_w = r.w - 4;
    paint_set(row, row);
    if (name_w > 0)
        paint_text(y, r.x + 3, name_w, s->name);
    int rx = r.x + r.w - rw - 1;
    if (show_right)
        snapinfo_sidebar_counts(t, s, y, rx, r.x + 10, row); /* its last command's +A ~M -D */
    if (show_right && rx > r.x + 3) {
        if (conns[0]) {
            paint_set(row, row);
            paint_text(y, rx, paint_width(conns), conns);
            rx += paint_width(conns);
        }
        paint_set(strcmp(s->profile, "full") == 0 ? TH_PROFILE_FULL : row, row);
        paint_text(y, rx, paint_width(prof) > 6 ? 6 : paint_width(prof), prof);
        paint_set(row, row);
        char rest[64];
        snprintf(rest, sizeof rest, " %4s", age);
        paint_text(y, rx + (paint_width(prof) > 6 ? 6 : paint_width(prof)), r.w, rest);
    }
}

/* A request with no session on the list (yet): its own row. */
static bool sessionless(tui_t *t, const ui_approval *a)
{
    return !a->session || !ui_sessions_find(&t->list, a->session);
}

static const char *approval_client(const ui_approval *a)
{
    const char *c = json_string_value(json_object_get(a->req, "client"));
    return c ? c : "?";
}

/* The rows of requests without a session from one client. */
static int add_waiting(tui_t *t, sidebar_row *all, int total, const char *client)
{
    for (size_t k = 0; k < t->appr.n; k++)
        if (sessionless(t, &t->appr.v[k]) && strcmp(approval_client(&t->appr.v[k]), client) == 0)
            all[total++] = (sidebar_row){SB_APPROVAL, (int)k, client};
    return total;
}

static bool client_has_sessions(tui_t *t, const char *client)
{
    for (size_t i = 0; i < t->list.n; i++)
        if (strcmp(t->list.v[i]->client, client) == 0)
            return true;
    return false;
}

int sidebar_rows_max(const tui_t *t)
{
    return (int)(t->list.n * 3 + t->appr.n * 2) + ended_row_count(t) + 1;
}

int sidebar_rows(tui_t *t, sidebar_row *rows, int max)
{
    /* Every line: a heading per client group, a row per session, then its
     * requests that have no session yet; clients with only such requests
     * last.  Then the window of max lines that keeps the selected session
     * in view. */
    sidebar_row *all = xcalloc((size_t)sidebar_rows_max(t), sizeof *all);
    int total = 0, sel_line = 0;
    for (size_t i = 0; i < t->list.n; i++) {
        const char *client = t->list.v[i]->client;
        if (i == 0 || strcmp(client, t->list.v[i - 1]->client) != 0)
            all[total++] = (sidebar_row){SB_HEADING, -1, client};
        if (!tiles_folded_away(t, t->list.v[i])) {
            if (t->list.v[i]->id == t->selected)
                sel_line = total;
            all[total++] = (sidebar_row){SB_SESSION, (int)i, client};
        }
        if (i + 1 == t->list.n || strcmp(client, t->list.v[i + 1]->client) != 0) {
            total = tiles_fold_rows(t, all, total, client, &sel_line); /* an agent's finished commands */
            total = add_waiting(t, all, total, client);
        }
    }
    for (size_t k = 0; k < t->appr.n; k++) {
        const ui_approval *a = &t->appr.v[k];
        const char *client = approval_client(a);
        if (!sessionless(t, a) || client_has_sessions(t, client))
            continue;
        bool done = false; /* an earlier request of this client made its group */
        for (size_t j = 0; j < k && !done; j++)
            done = sessionless(t, &t->appr.v[j]) && strcmp(approval_client(&t->appr.v[j]), client) == 0;
        if (!done) {
            all[total++] = (sidebar_row){SB_HEADING, -1, client};
            total = add_waiting(t, all, total, client);
        }
    }
    total = ended_rows(t, all, total, &sel_line); /* E: the ended sessions, last */
    int top = sel_line >= max ? sel_line - max + 1 : 0, n = 0;
    for (int line = top; line < total && n < max; line++)
        rows[n++] = all[line];
    free(all);
    return n;
}

void sidebar_draw(tui_t *t)
{
    ui_rect r = t->sidebar;
    if (r.w <= 0 || r.h <= 0)
        return;
    double now = ui_now();
    sidebar_row *rows = xcalloc((size_t)r.h, sizeof *rows);
    int n = sidebar_rows(t, rows, r.h), y = r.y;
    for (int k = 0; k < n; k++, y++) {
        if (rows[k].kind == SB_HEADING) {
            paint_set(TH_SIDEBAR_GROUP, TH_SIDEBAR_GROUP);
            paint_fill(y, r.x, r.w);
            paint_text(y, r.x + 1, r.w - 2, rows[k].client);
        } else if (rows[k].kind == SB_APPROVAL) {
            approval_sidebar_row(t, &t->appr.v[rows[k].index], r, y);
        } else if (rows[k].kind == SB_FOLD) {
            tiles_draw_fold_row(t, &rows[k], y);
        } else if (rows[k].kind == SB_ENDED) {
            ended_draw_row(t, &rows[k], y);
        } else {
            draw_session_row(t, t->list.v[rows[k].index], y, now);
        }
    }
    free(rows);
    paint_set(TH_SIDEBAR, TH_SIDEBAR);
    for (; y < r.y + r.h; y++)
        paint_fill(y, r.x, r.w);
    if (t->list.n == 0 && t->appr.n == 0 && !ended_row_count(t)) {
        paint_text(r.y + 1, r.x + 1, r.w - 2, "no sessions yet:");
        char hint[64], keys[32];
        key_bindings_names(&t->conf->keys, KA_NEW, keys, sizeof keys);
        snprintf(hint, sizeof hint, "press %s for one", keys);
        paint_text(r.y + 2, r.x + 1, r.w - 2, hint);
    }
    /* The separator between the sidebar and the panes. */
    paint_separator(r.y, r.x + r.w, r.h);
}

/* ---- the selection ------------------------------------------------------------ */

/* Every sidebar row, unwindowed; free the result. */
static sidebar_row *all_rows(tui_t *t, int *n)
{
    int max = sidebar_rows_max(t);
    sidebar_row *rows = xcalloc((size_t)max, sizeof *rows);
    *n = sidebar_rows(t, rows, max);
    return rows;
}

static bool is_current(tui_t *t, const sidebar_row *r)
{
    if (r->kind == SB_SESSION)
        return t->selected && t->list.v[r->index]->id == t->selected;
    if (r->kind == SB_ENDED)
        return strcmp(t->ended.selected, t->ended.v[r->index].key) == 0;
    return r->kind == SB_FOLD && strcmp(t->tiles.fold_selected, r->client) == 0;
}

static void select_row(tui_t *t, const sidebar_row *r)
{
    if (r->kind == SB_SESSION)
        tui_select(t, t->list.v[r->index]->id);
    else if (r->kind == SB_ENDED)
        ended_select(t, (size_t)r->index);
    else
        tiles_select_fold(t, r->client);
}

void sidebar_move_selection(tui_t *t, int delta)
{
    int n, ns = 0, cur = -1;
    sidebar_row *rows = all_rows(t, &n);
    int *pick = xcalloc((size_t)n + 1, sizeof *pick);
    for (int k = 0; k < n; k++) {
        if (rows[k].kind != SB_SESSION && rows[k].kind != SB_FOLD && rows[k].kind != SB_ENDED)
            continue;
        if (is_current(t, &rows[k]))
            cur = ns;
        pick[ns++] = k;
    }
    /* The ends are where it stops (no wrapping round to the other end). */
    int to = cur < 0 ? 0 : cur + delta < 0 ? 0 : cur + delta >= ns ? ns - 1 : cur + delta;
    if (ns > 0)
        select_row(t, &rows[pick[to]]);
    free(pick);
    free(rows);
}

void sidebar_select_first(tui_t *t)
{
    int n, session = -1, fold = -1, ended = -1;
    sidebar_row *rows = all_rows(t, &n);
    for (int k = 0; k < n; k++) {
        if (rows[k].kind == SB_SESSION && session < 0)
            session = k;
        if (rows[k].kind == SB_FOLD && fold < 0)
            fold = k;
        if (rows[k].kind == SB_ENDED && ended < 0)
            ended = k;
    }
    /* A session's row before a folded one, an ended one last. */
    int pick = session >= 0 ? session : fold >= 0 ? fold : ended;
    if (pick >= 0)
        select_row(t, &rows[pick]);
    free(rows);
}

bool sidebar_click_fold(tui_t *t, int y)
{
    int k = y - t->sidebar.y;
    if (k < 0 || k >= t->sidebar.h)
        return false;
    sidebar_row *rows = xcalloc((size_t)t->sidebar.h, sizeof *rows);
    bool fold = k < sidebar_rows(t, rows, t->sidebar.h) && rows[k].kind == SB_FOLD;
    if (fold) {
        tiles_select_fold(t, rows[k].client);
        tiles_toggle_fold(t);
    }
    free(rows);
    return fold;
}
