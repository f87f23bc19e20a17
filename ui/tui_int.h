/*
 * tui_int.h - the supervisor screen's state, shared by tui.c (loop, server
 * events, actions), render.c (drawing) and dialog.c (forms and overlays).
 * Not for other modules.
 */
#ifndef CORRAL_UI_TUI_INT_H
#define CORRAL_UI_TUI_INT_H

#include <stdbool.h>
#include <uv.h>

#include "conf.h"
#include "input.h"
#include "layout.h"
#include "paint.h"
#include "sessions.h"
#include "theme.h"
#include "uiconn.h"

typedef enum ui_focus { FOCUS_SUPERVISOR, FOCUS_PANE } ui_focus;

typedef enum ui_dialog_kind {
    DLG_NONE,
    DLG_NEW,          /* name, directory, profile */
    DLG_CONFIRM_KILL,
    DLG_CONFIRM_STOP,
    DLG_HELP,
    DLG_SEARCH,       /* the search prompt */
} ui_dialog_kind;

#define DLG_FIELDS 3
#define DLG_TEXT_MAX 1024

typedef struct ui_field {
    const char *label;
    char text[DLG_TEXT_MAX];
} ui_field;

typedef struct ui_dialog {
    ui_dialog_kind kind;
    ui_field fields[DLG_FIELDS];
    int nfields, field;
    int target;       /* the session a confirmation is about */
    char error[512];  /* shown in the dialog (a refused new session) */
    int help_top;     /* first help line shown */
    bool busy;        /* a request is on its way */
} ui_dialog;

#define SEARCH_MAX_MARKS 512

typedef struct tui {
    uv_loop_t *loop;
    uiconn_t conn;
    conf_t *conf;
    theme_t theme;
    ui_sessions list;
    int selected;       /* session id, 0: none */
    ui_focus focus;
    bool escape_pending; /* the supervisor key was just pressed in pane focus */
    bool scroll_mode;
    ui_layout layout;
    bool zoom;

    /* Layout of the last frame. */
    int rows, cols;
    ui_rect sidebar, main;
    int visible[LAYOUT_MAX_PANES]; /* session ids in the panes */
    ui_rect panes[LAYOUT_MAX_PANES];
    int nvisible;
    bool relayout;      /* recompute visible panes and sizes */
    bool full_redraw;

    /* Search in the selected pane. */
    char search[256];
    paint_mark marks[SEARCH_MAX_MARKS];
    int nmarks;
    int match_line, match_col; /* the current match; match_line INT_MIN: none */

    ui_dialog dlg;
    char message[512];
    double message_until;
    bool message_error;

    uv_poll_t stdin_poll;
    uv_signal_t sigwinch, sigterm, sighup, sigint;
    uv_timer_t frame_timer, tick_timer;
    double last_frame;
    bool dirty;
    bool quitting;
    int exit_status;
    char *goodbye;      /* printed after the screen is gone */
    int attach_id;      /* corral attach ID: focus it once the list is in */
} tui_t;

/* tui.c */
void tui_redraw_soon(tui_t *t);
void tui_message(tui_t *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
ui_session *tui_selected(tui_t *t);
void tui_select(tui_t *t, int id);
void tui_quit(tui_t *t, int status, const char *goodbye);
/* Pane content size for a session shown in the selected pane's place. */
void tui_pane_size(tui_t *t, int *rows, int *cols);
void tui_search_run(tui_t *t, int direction);

/* A row of the sidebar: a client's heading, or a session (index into
 * the list). */
typedef struct sidebar_row {
    int index;
    bool heading;
} sidebar_row;

/* render.c */
/* The sidebar's rows as drawn (at most max); returns how many. */
int sidebar_rows(tui_t *t, sidebar_row *rows, int max);
void render_frame(tui_t *t);
/* The first screen row of vt a pane of h rows shows (before scrolling). */
int pane_first_row(const vt_t *vt, int h);

/* dialog.c */
void dialog_open(tui_t *t, ui_dialog_kind kind);
void dialog_key(tui_t *t, const ui_key *k);
void dialog_draw(tui_t *t);

#endif
