/*
 * tui.c - the supervisor screen: one libuv loop with the server connection
 * (the session list by subscription, the shown sessions' terminals by
 * watches), the keyboard and mouse on stdin, SIGWINCH, and a frame timer
 * that draws at most 60 frames a second.
 *
 * Two focus states (docs/corral.1, THE SUPERVISOR SCREEN): in supervisor focus single keys act
 * on sessions; in pane focus every key goes to the selected session, and
 * the supervisor key (C-] by default) comes back (pressed twice, it is sent
 * to the session).  Scroll mode is supervisor focus reading one pane's
 * scrollback.  What is open over the screen (a dialog, the approval
 * dialog, the diff view, the timeline, the replay) is a view on the stack
 * of view.h: while one is open the top one takes every key, and the mouse
 * unless it lets it through; the actions here open them, and name none
 * when routing keys.
 *
 * Typing meant for a program must never become a command: focus leaves a
 * pane only by the supervisor key or the mouse, never because the program
 * ended (an ended pane keeps the focus and swallows keys, saying how to
 * leave), and supervisor keys typed within TUI_GUARD_S of any change of
 * focus are dropped.  A paste is never keys: it goes whole to the session
 * (bracketed when its program asked), into a dialog's field, or nowhere.
 */
#include "config.h"

#include "tui.h"
#include "tui_int.h"
#include "dialog.h"
#include "diffview.h"
#include "snapinfo.h"
#include "remoterec.h"
#include "replayview.h"
#include "timelineview.h"
#include "base/utf8.h"
#include "base/util.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define PASTE_TIMEOUT_S 2.0 /* a paste whose end never comes ends after this quiet */
#define REMOTE_FRAME_MS 40   /* another machine's heavy output: at most 25 frames a second */
#define LOCAL_FRAME_MS 16    /* this machine's: as often as the screen draws (screen.c) */

static void paste_end(tui_t *t);

/* ---- layout, watches and sizes ------------------------------------------------ */

static void request_ignore(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    (void)reply;
    (void)user;
}

static void ask_watch(tui_t *t, ui_session *s)
{
    int history = t->conf->scrollback;
    json_t *req = json_pack("{s:s, s:i, s:i}", "cmd", "watch", "session", s->id, "history", history);
    /* Heavy output comes as frames (watch.c): over ssh every byte costs,
     * and here a flood that the screen can show only 60 times a second
     * would otherwise be parsed twice, by the server and by this model.
     * The history lines that scroll past between frames come back when
     * the pane is scrolled or searched (refill_history). */
    json_object_set_new(req, "frame_ms", json_integer(hosts_remote_id(s->id) ? REMOTE_FRAME_MS : LOCAL_FRAME_MS));
    hosts_request(t, req, request_ignore, NULL);
}

static void watch(tui_t *t, ui_session *s)
{
    if (s->watched || s->lost) /* a lost one keeps its last screen until its machine is back */
        return;
    s->watched = true;
    s->synced = false;
    ask_watch(t, s);
}

typedef struct refill {
    tui_t *t;
    int id;
} refill;

/* The reply to a request sent after the watch: the sync's bytes came
 * before it, so the history is whole now. */
static void on_refilled(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    (void)reply;
    refill *r = user;
    tui_t *t = r->t;
    ui_session *s = ui_sessions_find(&t->list, r->id);
    free(r);
    if (!s)
        return;
    s->refilling = false;
    if (s->vt && s->scroll > vt_scrollback_len(s->vt)) {
        s->scroll = vt_scrollback_len(s->vt);
        s->redraw = true;
        tui_redraw_soon(t);
    }
    if (t->search_waits == s->id) {
        t->search_waits = 0;
        tui_message(t, false, "%s", "");
        if (s->id == t->selected) /* still the pane searched */
            tui_search_run(t, 0);
    }
}

/* Scrolling back or searching a pane whose history came in frames: its
 * whole history is asked for again (a watch again is a fresh sync), so
 * the lines that scrolled past between frames are there too. */
static void refill_history(tui_t *t, ui_session *s)
{
    if (!s || !s->gaps || !s->watched || s->lost || s->refilling)
        return;
    s->refilling = true;
    ask_watch(t, s);
    refill *r = xcalloc(1, sizeof *r);
    r->t = t;
    r->id = s->id;
    /* Any request will do: its reply comes after the sync's bytes. */
    hosts_request_on(t, hosts_index_of(s->id), json_pack("{s:s}", "cmd", "layout"), on_refilled, r);
}

static void unwatch(tui_t *t, ui_session *s)
{
    if (!s->watched)
        return;
    s->watched = false;
    s->synced = false;
    s->gaps = s->refilling = false;
    s->scroll = 0;
    if (s->vt) {
        vt_free(s->vt);
        s->vt = NULL;
    }
    hosts_request(t, json_pack("{s:s, s:i}", "cmd", "unwatch", "session", s->id), request_ignore, NULL);
}

static void layout_now(tui_t *t)
{
    t->rows = LINES;
    t->cols = COLS;
    int body_h = t->rows - 1; /* the status bar */
    int sw = t->zoom || t->sidebar_hidden ? 0 : conf_sidebar_columns(t->conf, t->cols);
    t->sidebar = (ui_rect){0, 0, body_h, sw};
    t->main = sw ? (ui_rect){0, sw + 1, body_h, t->cols - sw - 1} : (ui_rect){0, 0, body_h, t->cols};
    ui_layout lay = t->zoom ? LAYOUT_SINGLE : t->layout;
    int ids[LAYOUT_MAX_PANES];
    int n = tiles_pick(t, lay, ids); /* kept tiles, then the selected and most recent */
    n = layout_panes(lay, t->main, n, t->panes);
    memcpy(t->visible, ids, (size_t)n * sizeof ids[0]);
    t->nvisible = n;
    /* Watch what is shown, stop watching what is not. */
    for (size_t i = 0; i < t->list.n; i++) {
        ui_session *s = t->list.v[i];
        bool shown = false;
        for (int k = 0; k < n; k++)
            shown |= t->visible[k] == s->id;
        if (shown)
            watch(t, s);
        else
            unwatch(t, s);
    }
    /* A shown terminal gets the size of its pane (latest client wins, as
     * with tmux's window-size latest). */
    for (int k = 0; k < n; k++) {
        ui_session *s = ui_sessions_find(&t->list, t->visible[k]);
        int rows = t->panes[k].h - 1, cols = t->panes[k].w;
        if (s && s->running && s->tty && rows > 0 && cols > 1 && (s->rows != rows || s->cols != cols)) {
            hosts_request(t, json_pack("{s:s, s:i, s:i, s:i}", "cmd", "resize", "session", s->id, "rows",
                                               rows, "cols", cols),
                           request_ignore, NULL);
            s->rows = rows;
            s->cols = cols;
        }
        if (s && s->running && s->tty && rows > 0 && cols > 1) {
            s->asked_rows = rows;
            s->asked_cols = cols;
        }
        if (s)
            s->redraw = true;
    }
    t->relayout = false;
    t->full_redraw = true;
}

/* ---- frames ---------------------------------------------------------------- */

/* A frame (t->frame, which tui_redraw_soon's timer runs). */
static void draw_frame(tui_t *t)
{
    if (t->relayout)
        layout_now(t);
    t->dirty = false;
    t->frame_before = t->last_frame;
    t->last_frame = ui_now();
    render_frame(t);
}

static void on_tick(uv_timer_t *timer)
{
    tui_t *t = timer->data;
    if (t->paste.active && ui_now() - t->paste.last > PASTE_TIMEOUT_S)
        paste_end(t); /* its end was lost: what came is delivered, keys are keys again */
    if (ended_refresh(t, false)) /* the ended sessions shown, when the list changed */
        sidebar_select_first(t);
    confstate_poll(t); /* an edit of the config file shows within a second */
    hosts_tick(t);
    /* Ages, idle states, messages.  Drawn at once and not counted against
     * the frame cap, so a key's echo right after never waits for it. */
    if (!uv_is_active((uv_handle_t *)&t->frame_timer) && !t->quitting) {
        if (t->relayout)
            layout_now(t);
        render_frame(t);
    }
}

static void on_sigwinch(uv_signal_t *h, int sig)
{
    (void)sig;
    tui_t *t = h->data;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
    t->relayout = true;
    tui_redraw_soon(t);
}

static void on_stop_signal(uv_signal_t *h, int sig)
{
    tui_t *t = h->data;
    char msg[96];
    snprintf(msg, sizeof msg, "corral: detached on signal %d; sessions keep running", sig);
    tui_quit(t, 1, msg);
}

/* ---- scrollback (search: search.c) ---------------------------------------------------- */

static void scroll_by(tui_t *t, ui_session *s, int lines)
{
    if (!s || !s->vt)
        return;
    if (!t->scroll_mode)
        refill_history(t, s);
    int max = vt_scrollback_len(s->vt) + pane_first_row(s->vt, tui_selected_rows(t));
    int v = s->scroll + lines;
    s->scroll = v < 0 ? 0 : v > max ? max : v;
    s->redraw = true;
    t->scroll_mode = true;
    tui_redraw_soon(t);
}

static int page(tui_t *t)
{
    int rows = tui_selected_rows(t);
    return rows > 2 ? rows - 1 : 1;
}

static void run_search(tui_t *t, void *ctx)
{
    (void)ctx;
    ui_session *s = tui_selected(t);
    if (s && s->refilling) { /* its whole history is on its way: searched when here */
        t->search_waits = s->id;
        tui_message(t, false, "searching once the whole history of %s is here...", hosts_id(t, s->id));
        return;
    }
    tui_search_run(t, 0);
}

/* The search prompt over the selected pane's scrollback. */
static void search_prompt(tui_t *t)
{
    refill_history(t, tui_selected(t)); /* there by the time a search is typed */
    prompt_open(t, "Search the scrollback (Enter: find, Esc: cancel)", run_search, NULL);
}

/* ---- keys --------------------------------------------------------------------- */

static void send_to_session(tui_t *t, ui_session *s, const char *bytes, size_t len)
{
    if (!s || !len)
        return;
    size_t b64n;
    char *b64 = base64_encode(bytes, len, &b64n);
    /* quiet: no reply on success.  A reply per key is work for both ends
     * and, over ssh, a packet per key ahead of the echo on the link. */
    hosts_request(t, json_pack("{s:s, s:i, s:s%, s:b}", "cmd", "input", "session", s->id, "data_b64", b64, b64n,
                               "quiet", 1), NULL, NULL);
    free(b64);
    if (s->scroll) {
        s->scroll = 0; /* typing shows the live screen, as in tmux */
        t->scroll_mode = false;
        t->nmarks = 0;
        s->redraw = true;
    }
}

/* One step up or down the list; the ends are where it stops. */
static void move_selection(tui_t *t, int delta)
{
    sidebar_move_selection(t, delta); /* over the sidebar's rows, folded ones too */
}

/* Why keys typed into s's pane go nowhere, or NULL when they reach it. */
static const char *pane_dead(const ui_session *s)
{
    return !s                ? "the session is gone"
           : s->lost         ? "the link to its machine is down"
           : !s->running     ? "its program has ended"
           : !s->tty         ? "it has no terminal"
                             : NULL;
}

/* The notice for keys typed into a pane that takes none. */
static void pane_notice(tui_t *t, ui_session *s)
{
    char keys[48];
    key_bindings_names(&t->conf->keys, KA_SUPERVISOR, keys, sizeof keys);
    tui_message(t, true, "%s: %s, keys typed here go nowhere; %s leaves the pane", s ? s->name : "pane",
                pane_dead(s), keys);
}

/* Pane focus on the selected session, also one that has ended or has no
 * terminal: what is typed next is meant for it, and is swallowed there
 * with a notice rather than read as commands. */
static void focus_pane(tui_t *t)
{
    ui_session *s = tui_selected(t);
    if (!s) {
        tui_message(t, true, "no session selected");
        return;
    }
    t->focus = FOCUS_PANE;
    t->escape_pending = false;
    t->scroll_mode = false;
    t->nmarks = 0;
    s->scroll = 0;
    s->redraw = true;
    if (pane_dead(s))
        pane_notice(t, s);
    tui_redraw_soon(t);
}

/* Back to supervisor focus from a pane: keys typed just after are held. */
static void leave_pane(tui_t *t)
{
    t->focus = FOCUS_SUPERVISOR;
    if (!tui_selected(t) && t->list.n) /* the focused session was removed meanwhile */
        tui_select(t, t->list.v[0]->id);
    tui_hold_keys(t);
}

static void on_pin_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    if (reply && json_object_get(reply, "ok"))
        tui_message(t, false, "%s", json_is_true(json_object_get(reply, "pinned")) ? "pinned: never pruned"
                                                                                   : "unpinned");
}

/* Keys that act on a live session (its pane, its process, its place). */
static bool acts_on_live(int action)
{
    switch (action) {
    case KA_FOCUS:
    case KA_KILL:
    case KA_PIN:
    case KA_SEARCH:
    case KA_SCROLL_UP:
    case KA_SCROLL_DOWN:
    case KA_KEEP:
    case KA_COMMANDS: return true;
    default: return false;
    }
}

static void review_open(tui_t *t, const ui_review_target *rt, int action)
{
    if (action == KA_TIMELINE)
        timelineview_open(t, rt);
    else if (action == KA_REPLAY)
        replayview_open(t, rt, 0);
    else /* d on a session the server no longer has: from its log */
        timelineview_last_diff(t, rt);
}

static void review_action(tui_t *t, int action)
{
    ui_review_target rt;
    if (!review_target_selected(t, &rt))
        return;
    if (hosts_remote_id(rt.id)) { /* its records are on its machine: copied first */
        remoterec_open(t, &rt, action, review_open);
        return;
    }
    if (action == KA_TIMELINE)
        timelineview_open(t, &rt);
    else if (action == KA_REPLAY)
        replayview_open(t, &rt, 0);
    else /* d on a session the server no longer has: from its log */
        timelineview_last_diff(t, &rt);
}

static void supervisor_action(tui_t *t, int action)
{
    ui_session *s = tui_selected(t);
    bool ended = ended_selected(t) != NULL;
    if (ended && acts_on_live(action)) {
        ended_refuse(t); /* says what works on it instead */
        return;
    }
    switch (action) {
    case KA_UP: move_selection(t, -1); break;
    case KA_DOWN: move_selection(t, 1); break;
    case KA_FOCUS:
        if (tiles_fold_selected(t))
            tiles_toggle_fold(t);
        else
            focus_pane(t);
        break;
    case KA_ZOOM:
        t->zoom = !t->zoom;
        t->relayout = true;
        tiles_save(t);
        break;
    case KA_SIDEBAR:
        t->sidebar_hidden = !t->sidebar_hidden;
        t->relayout = true;
        tui_message(t, false, t->sidebar_hidden ? "session list hidden (s shows it)" : "session list shown");
        break;
    case KA_LAYOUT:
        t->layout = (t->layout + 1) % LAYOUT_COUNT;
        t->zoom = false;
        t->relayout = true;
        tui_message(t, false, "layout: %s", layout_name(t->layout));
        tiles_save(t);
        break;
    case KA_KEEP: tiles_keep(t); break;
    case KA_FOLD: tiles_toggle_fold(t); break;
    case KA_CLEAR_EXITED: tiles_clear_exited(t); break;
    case KA_NEW: newsession_open(t); break;
    case KA_KILL:
        if (s && s->running)
            confirm_kill(t);
        else if (s)
            tiles_already_exited(t, s);
        else
            tui_message(t, true, "no session selected");
        break;
    case KA_PIN:
        if (s)
            hosts_request(t, json_pack("{s:s, s:i, s:b}", "cmd", "pin", "session", s->id, "pinned", !s->pinned),
                          on_pin_reply, t);
        break;
    case KA_SEARCH:
        if (s && s->vt)
            search_prompt(t);
        break;
    case KA_SCROLL_UP: scroll_by(t, s, page(t)); break;
    case KA_SCROLL_DOWN: scroll_by(t, s, -page(t)); break;
    case KA_DETACH: {
        char msg[160];
        snprintf(msg, sizeof msg, "corral: detached; %d live session%s keep running (corral to attach again)",
                 ui_sessions_live(&t->list), ui_sessions_live(&t->list) == 1 ? "" : "s");
        tui_quit(t, 0, msg);
        break;
    }
    case KA_STOP_SERVER: confirm_stop(t); break;
    case KA_HELP: help_open(t); break;
    case KA_RELOAD: confstate_reload(t); break;
    case KA_DIFF:
        if (ended)
            review_action(t, action);
        else
            diffview_open(t, false);
        break;
    case KA_COMMANDS: diffview_open(t, true); break;
    case KA_TIMELINE:
    case KA_REPLAY: review_action(t, action); break;
    case KA_ENDED:
        if (ended_toggle(t))
            sidebar_select_first(t);
        break;
    default: break;
    }
    tui_redraw_soon(t);
}

static void leave_scroll(tui_t *t, ui_session *s)
{
    t->scroll_mode = false;
    t->nmarks = 0;
    t->match_line = INT_MIN;
    if (s) {
        s->scroll = 0;
        s->redraw = true;
    }
    tui_redraw_soon(t);
}

static void scroll_action(tui_t *t, int action)
{
    ui_session *s = tui_selected(t);
    int max = s && s->vt ? vt_scrollback_len(s->vt) : 0;
    switch (action) {
    case KA_LINE_UP: scroll_by(t, s, 1); break;
    case KA_LINE_DOWN: scroll_by(t, s, -1); break;
    case KA_PAGE_UP: scroll_by(t, s, page(t)); break;
    case KA_PAGE_DOWN: scroll_by(t, s, -page(t)); break;
    case KA_TOP: scroll_by(t, s, max); break;
    case KA_BOTTOM: scroll_by(t, s, -max); break;
    case KA_SEARCH_NEXT: tui_search_run(t, -1); break;
    case KA_SEARCH_PREV: tui_search_run(t, 1); break;
    case KA_SCROLL_SEARCH: search_prompt(t); break;
    case KA_SCROLL_EXIT: leave_scroll(t, s); break;
    default: break;
    }
    /* At the bottom (G, j, PgDn) scroll mode stays, as in less: only its
     * exit key leaves it. */
}

/* The pane (index into t->panes) under a screen position, or -1. */
static int pane_at(tui_t *t, int y, int x)
{
    for (int i = 0; i < t->nvisible; i++) {
        ui_rect r = t->panes[i];
        if (y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w)
            return i;
    }
    return -1;
}

/* The session on a sidebar row, or 0. */
static int sidebar_session_at(tui_t *t, int y)
{
    int k = y - t->sidebar.y, id = 0;
    if (k < 0 || k >= t->sidebar.h)
        return 0;
    sidebar_row *rows = xcalloc((size_t)t->sidebar.h, sizeof *rows);
    if (k < sidebar_rows(t, rows, t->sidebar.h) && rows[k].kind == SB_SESSION)
        id = t->list.v[rows[k].index]->id;
    free(rows);
    return id;
}

/* The ended session on a sidebar row (index into ended.v), or -1. */
static int sidebar_ended_at(tui_t *t, int y)
{
    int k = y - t->sidebar.y, index = -1;
    if (k < 0 || k >= t->sidebar.h)
        return -1;
    sidebar_row *rows = xcalloc((size_t)t->sidebar.h, sizeof *rows);
    if (k < sidebar_rows(t, rows, t->sidebar.h) && rows[k].kind == SB_ENDED)
        index = rows[k].index;
    free(rows);
    return index;
}

/* A mouse event over a pane whose program asked for the mouse goes to it
 * (relative to its screen), as tmux does; 1 when it did. */
static bool mouse_to_program(tui_t *t, ui_session *s, ui_rect pane, const ui_key *k)
{
    if (pane_dead(s) || !s->vt || s->scroll > 0)
        return false;
    unsigned modes = vt_modes(s->vt);
    if (!(modes & VT_MODE_MOUSE_CLICK))
        return false;
    int row = k->mouse_y - (pane.y + 1), col = k->mouse_x - pane.x;
    bool follows = k->mouse_event == UM_RELEASE || k->mouse_event == UM_DRAG;
    if (follows) { /* a drag or release outside still belongs to the press: at the nearest edge */
        row = row < 0 ? 0 : row >= pane.h - 1 ? pane.h - 2 : row;
        col = col < 0 ? 0 : col >= pane.w ? pane.w - 1 : col;
    } else if (row < 0) {
        return false; /* the title row is ours */
    }
    row += pane_first_row(s->vt, pane.h - 1);
    char bytes[32];
    size_t n = input_encode_mouse(k, modes, row, col, bytes, sizeof bytes);
    send_to_session(t, s, bytes, n);
    return true;
}

static void mouse_event(tui_t *t, const ui_key *k)
{
    /* Drags and the release follow the press to its session. */
    if (k->mouse_event == UM_RELEASE || k->mouse_event == UM_DRAG) {
        ui_session *s = ui_sessions_find(&t->list, t->mouse_session);
        for (int p = 0; s && p < t->nvisible; p++)
            if (t->visible[p] == s->id)
                mouse_to_program(t, s, t->panes[p], k);
        if (k->mouse_event == UM_RELEASE)
            t->mouse_session = 0;
        return;
    }
    if (k->mouse_event == UM_MOVE) {
        int p = pane_at(t, k->mouse_y, k->mouse_x);
        ui_session *s = p >= 0 ? ui_sessions_find(&t->list, t->visible[p]) : NULL;
        if (s)
            mouse_to_program(t, s, t->panes[p], k);
        return;
    }
    bool wheel = k->mouse_event == UM_WHEEL_UP || k->mouse_event == UM_WHEEL_DOWN;
    if (k->mouse_x < t->sidebar.x + t->sidebar.w && t->sidebar.w > 0) {
        if (k->mouse_event == UM_PRESS && k->mouse_button == 1 && sidebar_click_fold(t, k->mouse_y))
            return;
        int id = sidebar_session_at(t, k->mouse_y), ended = sidebar_ended_at(t, k->mouse_y);
        if (ended >= 0 && k->mouse_event == UM_PRESS && k->mouse_button == 1) {
            if (t->focus == FOCUS_PANE)
                tui_hold_keys(t);
            t->focus = FOCUS_SUPERVISOR;
            ended_select(t, (size_t)ended);
        }
        if (id && k->mouse_event == UM_PRESS && k->mouse_button == 1) {
            if (t->focus == FOCUS_PANE)
                tui_hold_keys(t);
            t->focus = FOCUS_SUPERVISOR;
            tui_select(t, id);
        }
        return;
    }
    int p = pane_at(t, k->mouse_y, k->mouse_x);
    if (p < 0)
        return;
    ui_session *s = ui_sessions_find(&t->list, t->visible[p]);
    if (!s)
        return;
    if (wheel && mouse_to_program(t, s, t->panes[p], k))
        return; /* the program scrolls itself */
    bool focused = t->focus == FOCUS_PANE && s->id == t->selected;
    if (s->id != t->selected)
        tui_select(t, s->id);
    if (wheel) {
        if (t->focus == FOCUS_PANE)
            tui_hold_keys(t);
        t->focus = FOCUS_SUPERVISOR;
        scroll_by(t, s, k->mouse_event == UM_WHEEL_UP ? 3 : -3);
        if (s->scroll == 0)
            t->scroll_mode = false;
    } else if (k->mouse_event == UM_PRESS) {
        if (!focused)
            focus_pane(t); /* as tmux: the click selects the pane and reaches its program */
        if (mouse_to_program(t, s, t->panes[p], k))
            t->mouse_session = s->id;
    }
}

/* ---- pastes ------------------------------------------------------------------- */

#define PASTE_PART (48 * 1024)     /* sent in parts of this size, well inside a request */
#define PASTE_MAX (16 * 1024 * 1024) /* more is dropped, and said so */

/* The whole paste to its session, cleaned of brackets as one text (a part
 * boundary can never join two halves of one), in order, in parts. */
static void paste_send(tui_t *t)
{
    ui_paste *p = &t->paste;
    ui_session *s = ui_sessions_find(&t->list, p->session);
    if (pane_dead(s))
        return;
    size_t len = input_paste_clean(p->text.data, p->text.len), at = 0;
    do {
        size_t n = len - at < PASTE_PART ? len - at : PASTE_PART;
        buf_t part;
        buf_init(&part);
        if (p->bracketed && at == 0)
            buf_puts(&part, "\033[200~");
        buf_append(&part, p->text.data + at, n);
        at += n;
        if (p->bracketed && at == len)
            buf_puts(&part, "\033[201~");
        send_to_session(t, s, part.data, part.len);
        buf_free(&part);
    } while (at < len);
}

static void paste_begin(tui_t *t)
{
    ui_paste *p = &t->paste;
    ui_session *s = tui_selected(t);
    p->active = true;
    p->last = ui_now();
    buf_reset(&p->text);
    if (views_field(t)) { /* a form's, or the approval note's */
        p->to = PASTE_FIELD; /* text in a field does nothing until Enter */
    } else if (views_paste_dropped(t)) {
        p->to = PASTE_DROP; /* a dialog's (never an answer to the approval dialog) */
        tui_message(t, true, "%s", views_paste_dropped(t));
    } else if (t->focus == FOCUS_PANE && !pane_dead(s)) {
        p->to = PASTE_SESSION;
        p->session = s->id;
        p->bracketed = s->vt && (vt_modes(s->vt) & VT_MODE_BRACKETED_PASTE);
    } else {
        p->to = PASTE_DROP;
        if (t->focus == FOCUS_PANE)
            pane_notice(t, s);
        else
            tui_message(t, true, "%s", PASTE_NOT_COMMANDS);
    }
}

static void paste_end(tui_t *t)
{
    ui_paste *p = &t->paste;
    if (p->to == PASTE_SESSION) {
        paste_send(t);
    } else if (p->to == PASTE_FIELD && views_field(t)) {
        /* Printable characters only: a paste never presses Enter in a form. */
        ui_field *f = views_field(t);
        if (f->replace) /* a selected last query: the paste takes its place */
            f->text[0] = 0;
        f->replace = false;
        size_t len = p->text.len;
        for (size_t i = 0; i < len;) {
            int32_t cp;
            i += utf8_decode(p->text.data + i, len - i, &cp);
            if (cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0))
                field_insert(f, (uint32_t)cp);
        }
    }
    p->active = false;
    buf_reset(&p->text);
    tui_redraw_soon(t);
}

/* A key inside a paste: its bytes are text, never a key's action. */
static void paste_key(tui_t *t, const ui_key *k)
{
    ui_paste *p = &t->paste;
    p->last = ui_now();
    if (k->paste_end) {
        paste_end(t);
        return;
    }
    if (k->paste_start || k->mouse || p->to == PASTE_DROP)
        return;
    char bytes[32];
    size_t n = input_encode(k, false, bytes, sizeof bytes);
    if (p->text.len + n > PASTE_MAX) {
        tui_message(t, true, "a paste over %d MiB: the rest was dropped", PASTE_MAX >> 20);
        return;
    }
    buf_append(&p->text, bytes, n);
}

/* ---- keys, in order ---------------------------------------------------------------- */

static void pane_key(tui_t *t, ui_session *s, const ui_key *k)
{
    if (k->key && key_bindings_lookup(&t->conf->keys, KM_PANE, k->key) == KA_SUPERVISOR) {
        t->escape_pending = true;
        leave_pane(t);
        return;
    }
    if (pane_dead(s)) {
        pane_notice(t, s); /* swallowed: typing meant for it is not commands */
        return;
    }
    char bytes[32];
    size_t n = input_encode(k, s->vt && (vt_modes(s->vt) & VT_MODE_APP_CURSOR), bytes, sizeof bytes);
    send_to_session(t, s, bytes, n);
}

static void handle_key(tui_t *t, const ui_key *k)
{
    if (t->paste.active || k->paste_start) {
        if (!t->paste.active)
            paste_begin(t);
        paste_key(t, k);
        return;
    }
    if (k->paste_end)
        return; /* the end of a paste that timed out */
    if (views_key(t, k))
        return; /* the view on top takes every key, and the mouse unless it goes through */
    if (k->mouse) {
        if (t->conf->ui_mouse)
            mouse_event(t, k);
        return;
    }
    ui_session *s = tui_selected(t);
    if (t->focus == FOCUS_PANE) {
        pane_key(t, s, k);
        return;
    }
    if (t->escape_pending) {
        t->escape_pending = false;
        if (k->key && key_bindings_lookup(&t->conf->keys, KM_PANE, k->key) == KA_SUPERVISOR) {
            /* Twice: the key itself goes to the session, and focus with it. */
            char bytes[32];
            size_t n = input_encode(k, false, bytes, sizeof bytes);
            if (!pane_dead(s))
                send_to_session(t, s, bytes, n);
            focus_pane(t);
            return;
        }
    }
    if (tui_keys_held(t)) {
        t->held_dropped++; /* typed as the focus changed: meant for what was there */
        return;
    }
    int action;
    if (t->scroll_mode && (action = key_bindings_lookup(&t->conf->keys, KM_SCROLL, k->key)) >= 0) {
        scroll_action(t, action);
        return;
    }
    action = key_bindings_lookup(&t->conf->keys, KM_SUPERVISOR, k->key);
    if (action >= 0)
        supervisor_action(t, action);
    else
        tui_redraw_soon(t); /* a stray key clears the "again" hint */
}

/* Alt and a key reach curses as ESC and then the key, read together: they
 * are one key with KEY_META, so that an M- binding acts (a session gets
 * the same bytes from it).  Not while a view is open or a paste goes on,
 * where an ESC is the Esc key, nor for ESC twice. */
static bool join_meta(tui_t *t, ui_key *k, const ui_key *next)
{
    if (k->key != 0x1b || !next->key || next->key == 0x1b || (next->key & KEY_META) || next->mouse ||
        next->paste_start || next->paste_end || t->paste.active || view_top(t))
        return false;
    k->key = next->key | KEY_META;
    return true;
}

static void on_stdin(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    tui_t *t = h->data;
    /* One key of look-ahead: inside a paste, an end that more input
     * follows at once (in the same read, and not another paste) is part of
     * the content, as the terminal did not filter it; the paste goes on.
     * An ESC and the key after it may be one key (join_meta). */
    ui_key k, next;
    bool have = input_read(&k);
    while (have && !t->quitting) {
        bool more = input_read(&next);
        if (more && join_meta(t, &k, &next))
            more = input_read(&next);
        if (!(k.paste_end && t->paste.active && more && !next.paste_start))
            handle_key(t, &k);
        k = next;
        have = more;
    }
}

/* ---- server events ------------------------------------------------------------ */

static void on_sync(tui_t *t, json_t *ev)
{
    ui_session *s = ui_sessions_find(&t->list, (int)json_integer_value(json_object_get(ev, "session")));
    if (!s || !s->watched)
        return;
    int rows = (int)json_integer_value(json_object_get(ev, "rows"));
    int cols = (int)json_integer_value(json_object_get(ev, "cols"));
    vt_t *vt = vt_new(rows, cols, t->conf->scrollback, NULL, NULL);
    if (!vt)
        return;
    /* A frame replaces the screen; the history stays, and so does a
     * pane scrolled back (on_term keeps it on its lines as they grow).
     * So does the sync that refills the history: a scroll position counts
     * from the newest line, which both copies have. */
    bool frame = json_is_true(json_object_get(ev, "frame")) && s->vt && vt_take_history(vt, s->vt);
    bool keep = frame || s->refilling;
    s->gaps = json_is_true(json_object_get(ev, "frame")); /* a refill's sync: whole */
    if (s->vt)
        vt_free(s->vt);
    s->vt = vt;
    s->synced = true;
    if (!keep)
        s->scroll = 0;
    else if (frame && s->scroll > vt_scrollback_len(vt))
        s->scroll = vt_scrollback_len(vt);
    /* A refill's history comes in the bytes after this event: the scroll
     * position is checked against it once they are in (on_refilled). */
    s->redraw = true;
}

static void on_term(tui_t *t, int session, const char *data, size_t len)
{
    ui_session *s = ui_sessions_find(&t->list, session);
    if (!s || !s->vt)
        return;
    int before = vt_scrollback_len(s->vt);
    vt_write(s->vt, data, len);
    s->output_at = ui_now();
    /* A pane scrolled back stays on the lines it shows; a refill's bytes
     * bring back lines that were there already (counted from the newest). */
    if (s->scroll > 0 && !s->refilling) {
        int grown = vt_scrollback_len(s->vt) - before;
        if (grown > 0) {
            s->scroll += grown;
            if (t->match_line != INT_MIN && s->id == t->selected)
                t->match_line -= grown;
            for (int i = 0; i < t->nmarks && s->id == t->selected; i++)
                t->marks[i].line -= grown;
        }
    }
    tui_redraw_soon(t);
}

static void on_event(tui_t *t, ui_host *h, json_t *ev)
{
    (void)h;
    const char *name = json_string_value(json_object_get(ev, "event"));
    if (!name)
        return;
    if (strcmp(name, "term") == 0) { /* one the fast path did not take */
        const char *b64 = json_string_value(json_object_get(ev, "data_b64"));
        size_t len;
        char *data = b64 ? base64_decode(b64, strlen(b64), &len) : NULL;
        if (data)
            on_term(t, (int)json_integer_value(json_object_get(ev, "session")), data, len);
        free(data);
    } else if (strcmp(name, "sync") == 0) {
        on_sync(t, ev);
        tui_redraw_soon(t);
    } else if (strcmp(name, "resized") == 0) {
        ui_session *s = ui_sessions_find(&t->list, (int)json_integer_value(json_object_get(ev, "session")));
        if (s && s->vt) {
            int cols = (int)json_integer_value(json_object_get(ev, "cols"));
            if (cols != vt_cols(s->vt)) {
                /* A width change reflows history: the lines a scroll
                 * position or a search match pointed at have moved. */
                s->scroll = 0;
                if (s->id == t->selected) {
                    t->scroll_mode = false;
                    t->nmarks = 0;
                    t->match_line = INT_MIN;
                }
            }
            vt_resize(s->vt, (int)json_integer_value(json_object_get(ev, "rows")), cols);
            s->redraw = true;
            t->full_redraw = true;
            tui_redraw_soon(t);
        }
    } else if (strcmp(name, "session") == 0) {
        size_t before = t->list.n;
        ui_session *old = ui_sessions_find(&t->list, (int)json_integer_value(json_object_get(json_object_get(ev,
                                                                                "session"), "id")));
        bool was_running = old && old->running;
        ui_session *s = ui_sessions_update(&t->list, json_object_get(ev, "session"));
        snapinfo_note_session(json_object_get(ev, "session"));
        timelineview_session_event(t, s->id); /* its log may have grown */
        if (was_running && !s->running && t->focus == FOCUS_PANE && s->id == t->selected)
            pane_notice(t, s); /* the pane keeps the focus: say what typing does now */
        if (!t->selected && !tiles_fold_selected(t) && !ended_selected(t))
            tui_select(t, s->id);
        if (t->list.n != before) {
            t->relayout = true; /* a new session may take a pane */
            ended_list_changed(t); /* and an older one's directory its name's .N */
        } else {
            /* The sidebar is drawn whole every frame; of the panes only
             * this session's title may have changed (a whole screen drawn
             * again would keep a key's echo that comes next waiting). */
            s->redraw = true;
        }
        tui_redraw_soon(t);
    } else if (strcmp(name, "session_removed") == 0) {
        int id = (int)json_integer_value(json_object_get(ev, "session"));
        int i = ui_sessions_index(&t->list, id);
        ui_sessions_remove(&t->list, id);
        if (tiles_session_removed(t, id))
            sidebar_select_first(t); /* its folded row went */
        ended_list_changed(t); /* the server forgot it: it is an ended session now */
        if (id == t->selected && t->focus == FOCUS_PANE) {
            pane_notice(t, NULL); /* focus stays, on nothing, until the supervisor key */
        } else if (id == t->selected) {
            t->selected = 0;
            if (t->list.n)
                tui_select(t, t->list.v[i > 0 && (size_t)i <= t->list.n ? i - 1 : 0]->id);
        }
        t->relayout = true;
        tui_redraw_soon(t);
    } else if (strcmp(name, "approval") == 0 || strcmp(name, "approval_done") == 0 || strcmp(name, "rules") == 0) {
        approvals_event(t, name, ev);
    } else if (strcmp(name, "config") == 0) {
        confstate_server(t, json_object_get(ev, "config"));
    } else if (strcmp(name, "snapshot") == 0) {
        snapinfo_note_snapshot(t, ev);
    } else if (strcmp(name, "bell") == 0) {
        ui_session *s = ui_sessions_find(&t->list, (int)json_integer_value(json_object_get(ev, "session")));
        /* A bell stays in the model: it becomes a mark, never a beep. */
        if (s && !(s->id == t->selected && t->focus == FOCUS_PANE))
            s->bell = true;
        tui_redraw_soon(t);
    }
}

static void on_local_lost(tui_t *t, const char *why)
{
    char msg[256];
    snprintf(msg, sizeof msg, "corral: lost the server (%s); sessions end with it. Run corral to start a new one.",
             why);
    tui_quit(t, 1, msg);
}

/* Sessions of h: their links and watches go with h's link, and come back
 * with it (a watch is asked for again when the list is in). */
static void host_sessions(tui_t *t, const ui_host *h, bool lost)
{
    for (size_t i = 0; i < t->list.n; i++) {
        ui_session *s = t->list.v[i];
        if (hosts_index_of(s->id) != h->index)
            continue;
        s->lost = lost;
        s->watched = false; /* asked for again when it is back (its watch went with the link) */
        if (!lost)
            s->synced = false;
        s->redraw = true;
    }
}

static void on_host_changed(tui_t *t, ui_host *h)
{
    if (h->index > 0 && h->state == HOST_DOWN && t->attach_id && h->index == t->attach_host && !t->attached) {
        /* corral -H HOST attach ID, and HOST cannot be reached: the one
         * session asked for is not to be had, so say why and end, as an id
         * the machine does not have does (not a screen left waiting on a
         * link that retries). */
        char msg[1400]; /* the name and why whole: they are the message */
        snprintf(msg, sizeof msg, "corral: cannot attach to session %d on %s: %s (corral -H %s ls tries it again)",
                 t->attach_id, h->name, h->why[0] ? h->why : "unreachable", h->name);
        tui_quit(t, 1, msg);
        return;
    }
    if (h->index > 0 && h->state == HOST_DOWN) {
        host_sessions(t, h, true);
        approvals_drop_host(t, h->index); /* they wait there, where nobody here can answer */
        if (strcmp(h->why, h->why_said) != 0) {
            /* Why, once (each retry may say the same), short enough for
             * the status bar: ssh's last words after their "host: "
             * prefix ("Connection refused"); ? shows them whole. */
            const char *colon = strrchr(h->why, ':');
            const char *brief = colon && colon[1] == ' ' && colon[2] ? colon + 2 : h->why;
            tui_message(t, true, "%s: %s (? shows the machines)", h->name, brief);
            snprintf(h->why_said, sizeof h->why_said, "%s", h->why);
        }
    }
    t->relayout = true;
    t->full_redraw = true;
    tui_redraw_soon(t);
}

static void on_subscribed(tui_t *t, ui_host *h, json_t *reply)
{
    ui_sessions_load_host(&t->list, reply, h->index);
    host_sessions(t, h, false);
    ended_list_changed(t);
    approvals_load_host(t, h->index, reply);
    bool attach = t->attach_id && h->index == t->attach_host && !t->attached;
    if (attach) {
        /* corral attach [-H HOST] ID: that session, zoomed, once its
         * machine's list is in (and only the first time it is; attach_id
         * stays, so that the kept layout does not unzoom it). */
        int id = h->index * UI_HOST_STRIDE + t->attach_id;
        t->attached = true;
        if (!ui_sessions_find(&t->list, id)) {
            char msg[160];
            if (h->index > 0)
                snprintf(msg, sizeof msg, "corral: %s has no session with id %d (corral -H %s ls lists them)",
                         h->name, hosts_server_id(id), h->name);
            else
                snprintf(msg, sizeof msg, "corral: no session with id %d (corral ls lists them)", id);
            tui_quit(t, 1, msg);
            return;
        }
        tui_select(t, id);
        t->zoom = true;
        focus_pane(t);
    }
    if (h->index > 0) { /* another machine came (back) */
        tiles_restore_there(t, h);
        if (!attach && !t->selected && !tiles_fold_selected(t) && !ended_selected(t))
            sidebar_select_first(t);
        t->relayout = true;
        tui_redraw_soon(t);
        return;
    }
    snapinfo_note_list(reply);
    confstate_server(t, json_object_get(reply, "config"));
    if (!attach && !t->attach_id)
        sidebar_select_first(t);
    tiles_restore(t);
    t->relayout = true;
    tui_redraw_soon(t);
}

/* ---- start and end ------------------------------------------------------------ */

/* Every machine of [hosts], and the one corral attach -H adds, each
 * connecting in the background. */
static void add_hosts(tui_t *t, const tui_options *opt)
{
    char err[512];
    for (size_t i = 0; i < t->conf->n_hosts + (opt->host ? 1 : 0); i++) {
        bool extra = i == t->conf->n_hosts;
        const char *name = extra ? opt->host_name : t->conf->host_names[i];
        const char *url = extra ? opt->host : t->conf->host_urls[i];
        remote_host *r = xcalloc(1, sizeof *r);
        if (remote_parse(url, r, err, sizeof err) < 0) {
            tui_message(t, true, "[hosts] %s: %s", name, err);
            free(r);
            continue;
        }
        const char *ssh = getenv("CORRAL_SSH_COMMAND");
        if (!ssh || !*ssh)
            ssh = t->conf->hosts_ssh_command;
        r->ssh_command = ssh ? xstrdup(ssh) : NULL;
        r->remote_command = t->conf->hosts_remote_command ? xstrdup(t->conf->hosts_remote_command) : NULL;
        if (!hosts_add_remote(t, name, r, err, sizeof err) && !extra)
            tui_message(t, true, "%s", err);
    }
    /* corral attach -H HOST ID: the session is on that machine, whether
     * -H added it or [hosts] has it already. */
    for (size_t i = 1; opt->host && i < t->hosts.n; i++) {
        const ui_host *h = t->hosts.v[i];
        if (strcmp(h->name, opt->host_name) == 0 || strcmp(h->remote->spec, opt->host) == 0)
            t->attach_host = (int)i;
    }
}

static int start_curses(tui_t *t, char *err, size_t errlen)
{
    char note[512];
    if (!paint_newterm(t->conf->ui_truecolor, note, sizeof note)) {
        const char *term = getenv("TERM");
        snprintf(err, errlen, "cannot drive the terminal TERM=%s: no terminfo entry for it (try TERM=xterm-256color)",
                 term ? term : "(unset)");
        return -1;
    }
    raw();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    if (has_colors()) {
        start_color();
        use_default_colors();
    }
    paint_init(&t->theme);
    input_start(t->conf->ui_mouse);
    if (note[0])
        tui_message(t, true, "%s", note);
    return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int tui_main(const tui_options *opt)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "corral: the supervisor screen needs a terminal on stdin and stdout "
                        "(corral ls lists the sessions without one)\n");
        return 1;
    }
    setlocale(LC_ALL, "");
    /* A typo in the config never keeps a person from this screen: its
     * lines with errors are left out, and the screen lists every error. */
    conf_t conf;
    conf_errors cerrs = {0};
    char *ctext = NULL;
    conf_load_user_all(&conf, &cerrs, &ctext);
    tui_t *t = xcalloc(1, sizeof *t);
    t->conf = &conf;
    confstate_init(t, &cerrs, ctext);
    t->frame = draw_frame;
    t->attach_id = opt->attach_id;
    t->match_line = INT_MIN;
    buf_init(&t->paste.text);
    ui_sessions_init(&t->list);
    char err[2048];
    /* --theme, then the config's [ui] theme, then NO_COLOR's mono (a user's
     * own setting wins over the environment, as no-color.org asks). */
    const char *theme = opt->theme ? opt->theme : conf.ui_theme ? conf.ui_theme
                                                 : theme_no_color() ? "mono" : "default";
    int rc = 1;
    bool connected = false;
    uv_loop_t loop;
    uv_loop_init(&loop);
    t->loop = &loop;
    approvals_init(t);
    if (theme_load(&t->theme, theme, err, sizeof err) < 0) {
        if (opt->theme || !conf.ui_theme || !conf.ui_theme_file) { /* --theme: the command line is wrong */
            fprintf(stderr, "corral: %s\n", err);
            goto out;
        }
        /* The setting is the place to fix: listed with the config's
         * errors, and the screen opens with the default theme. */
        char *msg = xasprintf("%s:%d: [ui] theme = %s cannot be used: %s (the default theme is used)",
                              conf.ui_theme_file, conf_key_line(conf.ui_theme_file, NULL, "ui", "theme"),
                              conf.ui_theme, err);
        conf_errors_add(&t->cfg.errors, "ui", msg);
        free(msg);
        if (theme_load(&t->theme, theme_no_color() ? "mono" : "default", err, sizeof err) < 0) {
            fprintf(stderr, "corral: %s\n", err);
            goto out;
        }
    }
    static const ui_hosts_handlers hd = {on_event, on_term, on_subscribed, on_host_changed, on_local_lost};
    if (hosts_open_local(t, &hd, err, sizeof err) < 0) {
        /* No server, and none would start: when the config file is why,
         * every error in full (the server's start names them on one line). */
        for (size_t i = 0; i < t->cfg.errors.n; i++)
            fprintf(stderr, "corral: %s\n", t->cfg.errors.text[i]);
        fprintf(stderr, "corral: %s\n", err);
        goto out;
    }
    connected = true;
    /* Our SIGWINCH handler before curses starts, so curses keeps out of it. */
    uv_signal_init(&loop, &t->sigwinch);
    t->sigwinch.data = t;
    uv_signal_start(&t->sigwinch, on_sigwinch, SIGWINCH);
    uv_signal_t *stops[] = {&t->sigterm, &t->sighup, &t->sigint};
    int signums[] = {SIGTERM, SIGHUP, SIGINT};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(&loop, stops[i]);
        stops[i]->data = t;
        uv_signal_start(stops[i], on_stop_signal, signums[i]);
    }
    if (start_curses(t, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        goto out;
    }
    uv_timer_init(&loop, &t->frame_timer);
    t->frame_timer.data = t;
    uv_timer_init(&loop, &t->tick_timer);
    t->tick_timer.data = t;
    uv_timer_init(&loop, &t->hold_timer);
    t->hold_timer.data = t;
    tui_hold_keys(t); /* the keyboard just came to us: what was typed ahead is not for us */
    uv_timer_start(&t->tick_timer, on_tick, 1000, 1000);
    uv_poll_init(&loop, &t->stdin_poll, STDIN_FILENO);
    t->stdin_poll.data = t;
    uv_poll_start(&t->stdin_poll, UV_READABLE, on_stdin);
    t->relayout = true;
    tui_redraw_soon(t);
    hosts_start(t);
    add_hosts(t, opt);
    uv_run(&loop, UV_RUN_DEFAULT);
    input_stop();
    endwin();
    rc = t->exit_status;
    if (t->goodbye)
        fprintf(rc ? stderr : stdout, "%s\n", t->goodbye);
out:
    views_close_all(t); /* while the loop can still close their timers */
    if (connected)
        hosts_close_all(t);
    uv_walk(&loop, close_walk, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    ui_sessions_free(&t->list);
    snapinfo_free();
    ended_free(&t->ended);
    endedscreen_free(&t->ended_screen);
    approvals_free(t);
    remoterec_free(t);
    hosts_free(t);
    confstate_free(t);
    free(t->goodbye);
    buf_free(&t->paste.text);
    free(t);
    conf_free(&conf);
    return rc;
}
