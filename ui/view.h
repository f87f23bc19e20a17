/*
 * view.h - what opens over the supervisor screen: the dialogs (the new
 * session form, the confirmations, help, the search prompt), the approval
 * dialog, the diff view with its commands list, the timeline and the
 * replay.  Each is a ui_view: a table of what it does (ui_view_ops) at the
 * head of its own state.  The open ones are one stack in the screen's
 * state (tui_t.views), the last opened on top; the screen routes keys, the
 * mouse and pastes to the top one and draws the stack bottom to top over
 * the sidebar, the panes and the status bar, naming no view (view.c).
 * A view lays itself out from the screen's size (t->main, t->rows,
 * t->cols) each time it is drawn, and a resize or a relayout draws the
 * whole screen again, so a resize is nothing the stack tells the views.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_VIEW_H
#define CORRAL_UI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "input.h"

struct tui;
typedef struct ui_view ui_view;

#define UI_FIELD_MAX 1024

/* A one-line text field (a dialog's, the approval note): where typing and
 * a paste go. */
typedef struct ui_field {
    const char *label;
    char text[UI_FIELD_MAX];
    bool replace; /* the text is selected (the last query): typing or a paste replaces it */
} ui_field;

/* Flags of a kind of view. */
enum {
    /* Stays above the views opened after it: the approval dialog pops up
     * over whatever is open, and nothing opens over it. */
    VIEW_ON_TOP = 1u << 0,
    /* The mouse is not its own: on top, it reaches the sidebar and the
     * panes as with no view open. */
    VIEW_MOUSE_THROUGH = 1u << 1,
};

typedef struct ui_view_ops {
    unsigned flags; /* VIEW_* */
    /* Draw it over what is drawn under it. */
    void (*draw)(struct tui *t, ui_view *v);
    /* A key while it is on top: it takes every key then. */
    void (*key)(struct tui *t, ui_view *v, const ui_key *k);
    /* A mouse event while it is on top; NULL: the mouse does nothing
     * then (unless VIEW_MOUSE_THROUGH). */
    void (*mouse)(struct tui *t, ui_view *v, const ui_key *k);
    /* After a frame is drawn: place the text cursor and show it, or hide
     * it; false (or NULL) leaves it to the views under it, and under them
     * all to the screen (the focused pane's cursor).  The top-most view
     * that places it wins. */
    bool (*cursor)(struct tui *t, ui_view *v);
    /* The field a paste goes into while it is on top, or NULL (NULL: none). */
    ui_field *(*field)(struct tui *t, ui_view *v);
    /* While it is on top, a paste that no field takes is dropped with this
     * message; NULL: it goes where it would with no view open (the focused
     * pane). */
    const char *paste_dropped;
    /* It left the stack: free what it holds (NULL: nothing to free). */
    void (*close)(struct tui *t, ui_view *v);
} ui_view_ops;

/* The head of every view's state. */
struct ui_view {
    const ui_view_ops *ops;
};

/* The open views, bottom first. */
typedef struct ui_views {
    ui_view **v;
    size_t n, cap;
} ui_views;

/* A view's state of size bytes (its struct, ui_view first), zeroed, its
 * ops set; not on the stack yet. */
void *view_new(size_t size, const ui_view_ops *ops);
/* Open v on top (below the views that stay on top, unless it is one);
 * the screen is drawn again whole. */
void view_push(struct tui *t, ui_view *v);
/* Take v off the stack wherever it is (a server's reply can close a view
 * that another covers), then close it (ops->close).  Nothing when it is
 * not on the stack. */
void view_close(struct tui *t, ui_view *v);
/* The view on top, that takes the keys, or NULL. */
ui_view *view_top(const struct tui *t);
/* The open view of a kind (by its ops), the top-most, or NULL. */
ui_view *view_find(const struct tui *t, const ui_view_ops *ops);
/* A key or mouse event to the top view: false when no view takes it (none
 * is open, or the mouse goes through the top one). */
bool views_key(struct tui *t, const ui_key *k);
/* The stack drawn bottom to top. */
void views_draw(struct tui *t);
/* The text cursor placed by the top-most view that places it: false when
 * none does. */
bool views_cursor(struct tui *t);
/* The field a paste goes into now (the top view's), or NULL. */
ui_field *views_field(struct tui *t);
/* Why a paste no field takes is dropped now (the top view's message), or
 * NULL when it goes where it would with no view open. */
const char *views_paste_dropped(const struct tui *t);
/* Every view closed, top first (the screen is going). */
void views_close_all(struct tui *t);
/* For a close op: free a view's state (v, allocated) that holds a timer
 * of the loop, once the loop has let go of the timer (at once when it was
 * never made, made false). */
void view_free_with_timer(ui_view *v, uv_timer_t *timer, bool made);

#endif
