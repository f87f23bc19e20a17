/*
 * render.c - drawing one frame of the supervisor screen: the sidebar
 * (sidebar.c), the panes with their title rows, the status bar, then the
 * open views bottom to top, each over what is under it (view.c), and last
 * the text cursor (the top-most view's that places one, else the focused
 * pane's).  Pane content comes from each session's terminal model
 * (paint.c); only damaged rows are redrawn unless the layout, the scroll
 * position or a search changed.
 */
#include "config.h"

#include "tui_int.h"
#include "snapinfo.h"
#include "base/util.h"

#include <curses.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A live terminal this screen sized for its pane that is smaller now:
 * another screen attached to the server asked for its size later (the
 * latest asker wins, as tmux's window-size latest; when that screen goes,
 * the server gives the terminal back this one's size). */
static bool held_small(const ui_session *s)
{
    return s->vt && s->running && s->tty && s->asked_rows > 0 && s->asked_cols > 0 &&
           (vt_rows(s->vt) < s->asked_rows || vt_cols(s->vt) < s->asked_cols);
}

static void draw_title(tui_t *t, ui_session *s, ui_rect r)
{
    theme_elem e = s->id == t->selected ? TH_BORDER_FOCUS : TH_BORDER;
    paint_set(e, e);
    paint_fill(r.y, r.x, r.w);
    char title[768], held[96] = "";
    if (held_small(s))
        snprintf(held, sizeof held, " \xc2\xb7 %dx%d: another screen holds it smaller", vt_cols(s->vt),
                 vt_rows(s->vt));
    snprintf(title, sizeof title, " %s %s %s %s%s%s%s ", s->name, hosts_id(t, s->id), s->profile, s->status, held,
             s->title[0] ? " \xc2\xb7 " : "", s->title);
    int used = paint_text(r.y, r.x, r.w, title);
    /* Its machine's link is down: what is shown is its last screen. */
    const ui_host *h = s->lost ? hosts_of(t, s->id) : NULL;
    if (h && used < r.w) {
        char down[700];
        hosts_down_text(h, down, sizeof down);
        paint_set(TH_STATE_EXIT_FAIL, e);
        used += paint_text(r.y, r.x + used, r.w - used, down);
        paint_set(e, e);
    }
    /* A request of its own waits (a network host its program reaches
     * for, say): the program is silent meanwhile, so its pane says why. */
    const ui_approval *wa = s->running ? approval_for_session(t, s->id) : NULL;
    if (wa && used < r.w) {
        char wait[512];
        approval_wait_text(wa, false, wait, sizeof wait);
        paint_set(TH_STATE_WAITING, e);
        used += paint_text(r.y, r.x + used, r.w - used, wait);
        paint_set(e, e);
    }
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
    paint_dim(s->lost);
    paint_vt(s->vt, body, first, all, selected ? t->marks : NULL, selected ? t->nmarks : 0, held_small(s));
    paint_dim(false);
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

/* The machines not up: "box: link lost 14:02:11" (the first, with how
 * many more), in the error style.  Returns the columns used. */
static int hosts_status(tui_t *t, int y, int x, int maxw)
{
    const ui_host *first = NULL;
    int down = 0;
    for (size_t i = 1; i < t->hosts.n; i++)
        if (t->hosts.v[i]->state != HOST_UP) {
            first = first ? first : t->hosts.v[i];
            down++;
        }
    if (!first || maxw <= 0)
        return 0;
    char text[160], when[32] = "";
    if (first->lost_at) {
        struct tm tm;
        localtime_r(&first->lost_at, &tm);
        strftime(when, sizeof when, " %H:%M:%S", &tm);
    }
    snprintf(text, sizeof text, "%s: %s%s%s%.0d%s ", first->name,
             first->state == HOST_CONNECTING && !first->ever_up ? "connecting"
             : first->ever_up                                   ? "link lost"
                                                                : "unreachable",
             when, down > 1 ? " (+" : "", down > 1 ? down - 1 : 0, down > 1 ? " more)" : "");
    paint_set(TH_STATE_EXIT_FAIL, TH_STATUS);
    int used = paint_text(y, x, maxw, text);
    paint_set(TH_STATUS, TH_STATUS);
    return used;
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
    char info[160], others[48] = "";
    int here, elsewhere;
    hosts_live(t, &here, &elsewhere);
    if (elsewhere) /* the store's max is this machine's server's */
        snprintf(others, sizeof others, ", %d remote", elsewhere);
    snprintf(info, sizeof info, " \xe2\x94\x82 %d/%d live%s \xe2\x94\x82 %s%s \xe2\x94\x82 ", here, t->list.max,
             others, t->zoom ? "zoom" : layout_name(t->layout),
             t->escape_pending ? " \xe2\x94\x82 C-] again sends it" : "");
    if (!paint_unicode())
        for (char *p = info; (p = strstr(p, "\xe2\x94\x82")); )
            memmove(p, "|", 1), memmove(p + 1, p + 3, strlen(p + 3) + 1);
    x += paint_text(y, x, t->cols - x, info);
    x += snapinfo_status(t, y, x, t->cols - x - 20); /* the workspace's snapshot store or progress */
    x += hosts_status(t, y, x, t->cols - x - 20); /* machines whose link is down */
    bool message = t->message[0] && ui_now() < t->message_until;
    /* A rules error stays until fixed, but leaves a message some room. */
    int rules_w = message && t->cols - x > 40 ? (t->cols - x) * 3 / 5 : t->cols - x;
    int used = approval_status_rules(t, y, x, rules_w);
    if (used)
        x += used + paint_text(y, x + used, t->cols - x - used, " ");
    /* The config file's errors, or a server running older settings: as
     * sticky as a rules error, with the same room left for a message. */
    int conf_w = message && t->cols - x > 40 ? (t->cols - x) * 3 / 5 : t->cols - x;
    used = confstate_status(t, y, x, conf_w);
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
    sidebar_draw(t);
    /* An ended session selected: its last screen, instead of the panes. */
    bool ended = ended_selected(t) != NULL;
    if (ended)
        endedscreen_draw(t, t->main);
    for (int i = 0; i < t->nvisible && !ended; i++) {
        ui_session *s = ui_sessions_find(&t->list, t->visible[i]);
        if (s) {
            draw_pane(t, s, t->panes[i]);
            tiles_draw_mark(t, i);
        }
    }
    if (t->nvisible == 0 && t->full_redraw && !ended) {
        paint_set(TH_NORMAL, TH_NORMAL);
        for (int k = 0; k < t->main.h; k++)
            paint_fill(t->main.y + k, t->main.x, t->main.w);
    }
    /* Separators between side-by-side panes. */
    paint_set(TH_BORDER, TH_BORDER);
    for (int i = 0; i < t->nvisible && !ended; i++) {
        ui_rect r = t->panes[i];
        if (r.x + r.w < t->main.x + t->main.w)
            paint_separator(r.y, r.x + r.w, r.h);
    }
    draw_status(t);
    views_draw(t); /* over the panes, each over what is under it */
    if (!views_cursor(t))
        place_cursor(t);
    refresh();
    paint_marks_flush();
    t->full_redraw = false;
}
