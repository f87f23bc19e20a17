/*
 * render.c - drawing one frame of the supervisor screen: the sidebar of
 * sessions grouped by client, the panes with their title rows, the status
 * bar, then any dialog on top.  Pane content comes from each session's
 * terminal model (paint.c); only damaged rows are redrawn unless the
 * layout, the scroll position or a search changed.
 */
#include "config.h"

#include "tui_int.h"
#include "diffview.h"
#include "snapinfo.h"
#include "replayview.h"
#include "timelineview.h"
#include "base/util.h"

#include <curses.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Glyphs: Unicode where the locale can show it. */
static bool unicode(void)
{
    static int u = -1;
    if (u < 0)
        u = MB_CUR_MAX > 1;
    return u;
}

/* A vertical separator: a box-drawing character rather than the
 * terminal's alternate character set, which some terminals garble. */
static void separator(int y, int x, int h)
{
    paint_set(TH_BORDER, TH_BORDER);
    for (int k = 0; k < h; k++)
        paint_text(y + k, x, 1, unicode() ? "\xe2\x94\x82" : "|");
}

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
    bool u = unicode();
    if (s->running && approval_for_session(t, s->id)) {
        *e = TH_STATE_WAITING;
        return "?";
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
    }
    /* Right side: open network connections, profile and age (or the exit). */
    char right[96], age[48], conns[24] = "";
    if (s->running)
        ui_age_text(now - s->created_at, age, sizeof age);
    else
        snprintf(age, sizeof age, "%s%d", unicode() ? "\xe2\x86\x92" : "=", s->exit_code);
    if (s->connections > 0)
        snprintf(conns, sizeof conns, "%s%d ", unicode() ? "\xe2\x87\x85" : "^", s->connections);
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

static void draw_sidebar(tui_t *t)
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
    separator(r.y, r.x + r.w, r.h);
}

static void draw_title(tui_t *t, ui_session *s, ui_rect r)
{
    theme_elem e = s->id == t->selected ? TH_BORDER_FOCUS : TH_BORDER;
    paint_set(e, e);
    paint_fill(r.y, r.x, r.w);
    char title[768];
    snprintf(title, sizeof title, " %s %d %s %s%s%s ", s->name, s->id, s->profile, s->status,
             s->title[0] ? " \xc2\xb7 " : "", s->title);
    int used = paint_text(r.y, r.x, r.w, title);
    if (s->scroll > 0 && s->vt) {
        char pos[64];
        snprintf(pos, sizeof pos, " [%d/%d] ", s->scroll, vt_scrollback_len(s->vt));
        int pw = paint_width(pos);
        if (used + pw <= r.w)
            paint_text(r.y, r.x + r.w - pw, pw, pos);
    }
}

static void draw_pane(tui_t *t, ui_session *s, ui_rect r)
{
    draw_title(t, s, r);
    ui_rect body = {r.y + 1, r.x, r.h - 1, r.w};
    if (body.h <= 0)
        return;
    if (!s->vt || !s->synced) {
        paint_set(TH_NORMAL, TH_NORMAL);
        for (int k = 0; k < body.h; k++)
            paint_fill(body.y + k, body.x, body.w);
        paint_text(body.y, body.x, body.w, "...");
        return;
    }
    int first = pane_first_row(s->vt, body.h) - s->scroll;
    bool selected = s->id == t->selected;
    bool all = t->full_redraw || s->redraw || s->scroll > 0 || (selected && t->nmarks > 0);
    paint_vt(s->vt, body, first, all, selected ? t->marks : NULL, selected ? t->nmarks : 0);
    vt_clear_damage(s->vt);
    s->redraw = false;
}

/* The hint in pane focus on a pane that takes no keys. */
static bool draw_dead_pane_hint(tui_t *t, int y, int x, int w)
{
    ui_session *s = tui_selected(t);
    if (t->focus != FOCUS_PANE || (s && s->running && s->tty))
        return false;
    char keys[48], text[160];
    key_bindings_names(&t->conf->keys, KA_SUPERVISOR, keys, sizeof keys);
    snprintf(text, sizeof text, "%s: keys go nowhere  ", !s ? "session gone" : !s->running ? "program ended"
                                                                                       : "no terminal");
    paint_set(TH_STATE_EXIT_FAIL, TH_STATUS);
    int used = paint_text(y, x, w, text);
    paint_set(TH_STATUS_KEY, TH_STATUS);
    used += paint_text(y, x + used, w - used, keys);
    paint_set(TH_STATUS, TH_STATUS);
    paint_text(y, x + used, w - used, " leave the pane");
    return true;
}

static void draw_hints(tui_t *t, int y, int x, int w)
{
    if (draw_dead_pane_hint(t, y, x, w))
        return;
    static const key_action sup[] = {KA_FOCUS, KA_NEW, KA_KILL, KA_LAYOUT, KA_HELP, KA_DETACH};
    static const key_action ended[] = {KA_TIMELINE, KA_REPLAY, KA_DIFF, KA_ENDED, KA_HELP, KA_DETACH};
    static const key_action scr[] = {KA_PAGE_UP, KA_SCROLL_SEARCH, KA_SEARCH_NEXT, KA_SCROLL_EXIT};
    static const key_action pane[] = {KA_SUPERVISOR};
    const key_action *acts = sup;
    size_t n = sizeof sup / sizeof sup[0];
    if (t->focus == FOCUS_PANE) {
        acts = pane;
        n = 1;
    } else if (t->scroll_mode) {
        acts = scr;
        n = sizeof scr / sizeof scr[0];
    } else if (ended_selected(t)) { /* what works on an ended session */
        acts = ended;
        n = sizeof ended / sizeof ended[0];
    }
    int used = 0;
    for (size_t i = 0; i < n; i++) {
        char keys[48], label[64];
        if (!t->conf->keys.keys[acts[i]][0])
            continue; /* left without a key by the user's bindings */
        if (acts[i] == KA_SUPERVISOR)
            key_bindings_names(&t->conf->keys, acts[i], keys, sizeof keys);
        else /* the first key is hint enough (and may itself be a '/') */
            keyspec_name(t->conf->keys.keys[acts[i]][0], keys, sizeof keys);
        snprintf(label, sizeof label, " %s", key_action_get(acts[i])->name);
        int need = paint_width(keys) + paint_width(label) + 2;
        if (used + need > w)
            break;
        paint_set(TH_STATUS_KEY, TH_STATUS);
        used += paint_text(y, x + used, w - used, keys);
        paint_set(TH_STATUS, TH_STATUS);
        used += paint_text(y, x + used, w - used, label);
        used += paint_text(y, x + used, w - used, "  ");
    }
}

static void draw_status(tui_t *t)
{
    int y = t->rows - 1;
    paint_set(TH_STATUS, TH_STATUS);
    paint_fill(y, 0, t->cols);
    /* While typed keys are held after a focus change, the badge says so:
     * SUPERVISOR shows when single keys act again. */
    const char *mode = t->focus == FOCUS_PANE ? " PANE " : tui_keys_held(t) ? " KEYS HELD " : t->scroll_mode ? " SCROLL "
                                                                                                       : " SUPERVISOR ";
    paint_set(t->focus == FOCUS_PANE ? TH_MODE_PANE : TH_MODE_SUPERVISOR, TH_STATUS);
    int x = paint_text(y, 0, t->cols, mode);
    x += approval_status_count(t, y, x, t->cols - x);
    paint_set(TH_STATUS, TH_STATUS);
    char info[128];
    snprintf(info, sizeof info, " \xe2\x94\x82 %d/%d live \xe2\x94\x82 %s%s \xe2\x94\x82 ",
             ui_sessions_live(&t->list), t->list.max, t->zoom ? "zoom" : layout_name(t->layout),
             t->escape_pending ? " \xe2\x94\x82 C-] again sends it" : "");
    if (!unicode())
        for (char *p = info; (p = strstr(p, "\xe2\x94\x82")); )
            memmove(p, "|", 1), memmove(p + 1, p + 3, strlen(p + 3) + 1);
    x += paint_text(y, x, t->cols - x, info);
    x += snapinfo_status(t, y, x, t->cols - x - 20); /* the workspace's snapshot store or progress */
    bool message = t->message[0] && ui_now() < t->message_until;
    /* A rules error stays until fixed, but leaves a message some room. */
    int rules_w = message && t->cols - x > 40 ? (t->cols - x) * 3 / 5 : t->cols - x;
    int used = approval_status_rules(t, y, x, rules_w);
    if (used)
        x += used + paint_text(y, x + used, t->cols - x - used, " ");
    if (message) {
        paint_set(t->message_error ? TH_STATE_EXIT_FAIL : TH_STATUS, TH_STATUS);
        paint_text(y, x, t->cols - x, t->message);
        return;
    }
    t->message[0] = 0;
    draw_hints(t, y, x, t->cols - x);
}

static void place_cursor(tui_t *t)
{
    ui_session *s = tui_selected(t);
    if (t->focus != FOCUS_PANE || !s || !s->vt || !s->synced || s->scroll > 0 ||
        !(vt_modes(s->vt) & VT_MODE_CURSOR_VISIBLE)) {
        curs_set(0);
        return;
    }
    for (int i = 0; i < t->nvisible; i++) {
        if (t->visible[i] != s->id)
            continue;
        ui_rect r = t->panes[i];
        int row, col;
        vt_cursor(s->vt, &row, &col);
        row -= pane_first_row(s->vt, r.h - 1);
        if (row >= 0 && row < r.h - 1 && col < r.w) {
            move(r.y + 1 + row, r.x + col);
            curs_set(1);
            return;
        }
    }
    curs_set(0);
}

void render_frame(tui_t *t)
{
    if (t->full_redraw)
        erase();
    draw_sidebar(t);
    for (int i = 0; i < t->nvisible; i++) {
        ui_session *s = ui_sessions_find(&t->list, t->visible[i]);
        if (s) {
            draw_pane(t, s, t->panes[i]);
            tiles_draw_mark(t, i);
        }
    }
    if (t->nvisible == 0 && t->full_redraw) {
        paint_set(TH_NORMAL, TH_NORMAL);
        for (int k = 0; k < t->main.h; k++)
            paint_fill(t->main.y + k, t->main.x, t->main.w);
    }
    /* Separators between side-by-side panes. */
    paint_set(TH_BORDER, TH_BORDER);
    for (int i = 0; i < t->nvisible; i++) {
        ui_rect r = t->panes[i];
        if (r.x + r.w < t->main.x + t->main.w)
            separator(r.y, r.x + r.w, r.h);
    }
    draw_status(t);
    views_draw(t); /* over the panes, each over what is under it */
    if (!views_cursor(t))
        place_cursor(t);
    refresh();
    t->full_redraw = false;
}
