/*
 * screen.c - what every part of the supervisor screen asks of it: a frame
 * soon (at most 60 a second) or at once, a message in the status bar, the
 * selected session and selecting another, the key guard after a change of
 * focus, the pane size a new session gets, detaching; and ages and sizes
 * written as the screen shows them.
 *
 * Nothing here calls up into the loop, the drawing or a view: a frame is
 * drawn by the function the loop (tui.c) put in t->frame, so the views and
 * the sidebar's parts can ask for one without depending on what draws it.
 */
#include "config.h"

#include "tui_int.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_MS 16 /* at most ~60 frames a second, on average */

static void on_frame(uv_timer_t *timer)
{
    tui_t *t = timer->data;
    t->frame(t);
}

void tui_redraw_soon(tui_t *t)
{
    t->dirty = true;
    if (uv_is_active((uv_handle_t *)&t->frame_timer) || t->quitting)
        return;
    /* At most two frames in any 2 * FRAME_MS: a stream of output is drawn
     * 60 times a second, but a frame just after a lone one (the sidebar
     * redrawn for a session event, then the echo of a key) is not kept
     * waiting: the echo would be up to FRAME_MS late. */
    double now = ui_now();
    double since = (now - t->last_frame) * 1000.0, since_before = (now - t->frame_before) * 1000.0;
    double wait = 0;
    if (since < FRAME_MS && since_before < 2 * FRAME_MS) {
        wait = FRAME_MS - since;
        if (2 * FRAME_MS - since_before < wait)
            wait = 2 * FRAME_MS - since_before;
    }
    uv_timer_start(&t->frame_timer, on_frame, (uint64_t)wait, 0);
}

void tui_redraw_now(tui_t *t)
{
    if (t->quitting)
        return;
    uv_timer_stop(&t->frame_timer);
    t->frame(t);
}

void tui_message(tui_t *t, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char raw[512];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    char *clean = sanitize_text(raw, strlen(raw), sizeof t->message - 1);
    snprintf(t->message, sizeof t->message, "%s", clean);
    free(clean);
    t->message_error = error;
    t->message_until = ui_now() + 5.0;
    tui_redraw_soon(t);
}

static void on_hold_end(uv_timer_t *timer)
{
    tui_t *t = timer->data;
    t->held = false;
    if (t->held_dropped)
        tui_message(t, false, "%d key%s typed as the focus changed %s ignored", t->held_dropped,
                    t->held_dropped == 1 ? "" : "s", t->held_dropped == 1 ? "was" : "were");
    t->held_dropped = 0;
    tui_redraw_soon(t); /* the mode badge and the confirmation's answers show */
}

void tui_hold_keys(tui_t *t)
{
    t->held = true;
    uv_timer_start(&t->hold_timer, on_hold_end, (uint64_t)(TUI_GUARD_S * 1000), 0);
    tui_redraw_soon(t);
}

bool tui_keys_held(const tui_t *t)
{
    return t->held;
}

ui_session *tui_selected(tui_t *t)
{
    return ui_sessions_find(&t->list, t->selected);
}

void tui_quit(tui_t *t, int status, const char *goodbye)
{
    if (t->quitting)
        return;
    t->quitting = true;
    t->exit_status = status;
    free(t->goodbye);
    t->goodbye = goodbye ? xstrdup(goodbye) : NULL;
    uv_stop(t->loop);
}

void tui_pane_size(tui_t *t, int *rows, int *cols)
{
    ui_rect r = t->main;
    if (!t->zoom && t->layout != LAYOUT_SINGLE && t->nvisible > 0)
        r = t->panes[0];
    *rows = r.h - 1 > 0 ? r.h - 1 : 24;
    *cols = r.w > 1 ? r.w : 80;
}

void tui_select(tui_t *t, int id)
{
    if (id == t->selected)
        return;
    t->selected = id;
    t->tiles.fold_selected[0] = 0;
    t->ended.selected[0] = 0;
    t->scroll_mode = false;
    t->nmarks = 0;
    ui_session *s = tui_selected(t);
    if (s)
        s->bell = false;
    t->relayout = true;
    tui_redraw_soon(t);
}

/* Content rows of the selected session's pane. */
int tui_selected_rows(tui_t *t)
{
    for (int i = 0; i < t->nvisible; i++)
        if (t->visible[i] == t->selected)
            return t->panes[i].h - 1 > 0 ? t->panes[i].h - 1 : 1;
    int rows, cols;
    tui_pane_size(t, &rows, &cols);
    return rows;
}

void ui_age_text(double seconds, char *out, size_t outlen)
{
    long s = seconds < 0 ? 0 : (long)seconds;
    if (s < 60)
        snprintf(out, outlen, "%lds", s);
    else if (s < 3600)
        snprintf(out, outlen, "%ldm", s / 60);
    else if (s < 86400)
        snprintf(out, outlen, "%ldh", s / 3600);
    else
        snprintf(out, outlen, "%ldd", s / 86400);
}
