/*
 * tui_int.h - the supervisor screen's state (tui_t), with the stack of
 * what is open over it (view.h), and the functions its files share:
 * screen.c's services, which every part calls, and those of search.c,
 * sidebar.c, render.c, approval.c and approval_draw.c.  tui.c (the loop,
 * server events, actions) is on top and called by none of them.  For the
 * files of ui/; not for other modules.
 *
 * Included only in ui/.
 */
#ifndef CORRAL_UI_TUI_INT_H
#define CORRAL_UI_TUI_INT_H

#include <stdbool.h>
#include <uv.h>

#include "config/conf.h"
#include "confstate.h"
#include "ended.h"
#include "endedscreen.h"
#include "input.h"
#include "layout.h"
#include "paint.h"
#include "sessions.h"
#include "theme.h"
#include "tiles.h"
#include "hosts.h"
#include "uiconn.h"
#include "view.h"
#include "base/util.h"

typedef enum ui_focus { FOCUS_SUPERVISOR, FOCUS_PANE } ui_focus;

/* A request waiting for a human (docs/ARCHITECTURE.md, "The gate"), as the server sent it. */
typedef struct ui_approval {
    int id;
    int session;     /* the session it concerns, 0: none yet */
    json_t *req;     /* the APPROVAL object (docs/protocol.md) */
    double seen_at;  /* local monotonic seconds it was received */
    double age0;     /* its age_seconds then */
    double expires0; /* its expires_in_seconds then; < 0: no timeout */
    bool answering;  /* our answer is on its way */
} ui_approval;

/* The options of the dialog, in the order shown (numbered from 1). */
typedef enum ui_answer {
    ANS_ONCE,    /* y */
    ANS_SESSION, /* a */
    ANS_PERSIST, /* p: only when the request suggests a prefix rule */
    ANS_DENY,    /* d */
    ANS_NOTE,    /* e: deny with a note typed for the agent */
    ANS_STOP,    /* n, Esc: deny, and the agent is told to stop */
    ANS_COUNT
} ui_answer;

typedef struct ui_approvals {
    ui_view view;    /* the dialog, on the stack while a request is pending */
    ui_approval *v;  /* pending, oldest first */
    size_t n, cap;
    int shown;       /* the id in the dialog, 0: none */
    bool drawn;      /* the shown one has been on the screen */
    double guard_until; /* keys before this are ignored (type-ahead guard) */
    uv_timer_t guard_timer; /* redraws when the guard ends */
    ui_answer highlight; /* the option Enter confirms */
    bool details;    /* v: the full request instead of the summary */
    int details_top; /* first details line shown */
    bool note;       /* e: typing the note for the agent */
    ui_field note_field;
    char error[512]; /* an answer the server refused */
    ui_rect box;     /* where the dialog was drawn last */
    int cursor_y, cursor_x; /* the note's cursor in the last frame; cursor_y -1: none, -2: not drawn */
    double last_bell;
    char answer_key[16]; /* the key that chose the answer on its way (logged) */
    char *rules_error; /* a rules file did not load: sticky in the status bar */
} ui_approvals;

#define SEARCH_MAX_MARKS 512

/* Keys typed within this long of a focus change are never commands (the
 * approval dialog's type-ahead guard, for the whole screen). */
#define TUI_GUARD_S 0.3

/* A bracketed paste from the real terminal: gathered, then delivered to
 * where it began (a session, a dialog field) or dropped; never keys. */
typedef enum ui_paste_to { PASTE_DROP, PASTE_SESSION, PASTE_FIELD } ui_paste_to;
/* What the status bar says of a paste dropped in supervisor focus or
 * over a dialog without a field. */
#define PASTE_NOT_COMMANDS "a paste is not commands: it was dropped (focus a pane to paste into it)"
typedef struct ui_paste {
    bool active;
    ui_paste_to to;
    int session;      /* PASTE_SESSION */
    bool bracketed;   /* the session's program asked for bracketed paste */
    buf_t text;
    double last;      /* when its last key came (a lost end times out) */
} ui_paste;

typedef struct tui {
    uv_loop_t *loop;
    ui_hosts hosts;     /* this machine's server (0) and the others' (hosts.h) */
    conf_t *conf;
    theme_t theme;
    ui_sessions list;
    int selected;       /* session id, 0: none */
    ui_focus focus;      /* pane focus types into the selected session, if it takes input */
    bool escape_pending; /* the supervisor key was just pressed in pane focus */
    bool held;           /* supervisor keys are dropped: TUI_GUARD_S after a focus change, */
    uv_timer_t hold_timer; /* until this timer ends it, so what is drawn and done agree */
    int held_dropped;    /* keys the guard dropped since it began */
    int mouse_session;   /* the session a mouse press went to: its drags and release follow */
    ui_paste paste;
    bool scroll_mode;
    ui_layout layout;
    bool zoom;
    bool sidebar_hidden; /* s: the panes take the whole width (not kept by the server) */
    ui_tiles tiles;     /* kept tiles, folded rows (tiles.c) */
    ui_ended ended;     /* ended sessions shown for review (ended.c) */
    ui_ended_screen ended_screen; /* the selected one's last screen (endedscreen.c) */
    ui_views views;     /* what is open over the screen, bottom first (view.c) */

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
    int search_waits; /* the session whose whole history a search waits for (tui.c); 0: none */
    paint_mark marks[SEARCH_MAX_MARKS];
    int nmarks;
    int match_line, match_col; /* the current match; match_line INT_MIN: none */

    ui_approvals appr;
    ui_confstate cfg;   /* the config file's errors and the server's settings (confstate.c) */
    char message[512];
    double message_until;
    bool message_error;

    uv_poll_t stdin_poll;
    uv_signal_t sigwinch, sigterm, sighup, sigint;
    uv_timer_t frame_timer, tick_timer;
    double last_frame, frame_before; /* when the last two frames were drawn (screen.c paces them) */
    void (*frame)(struct tui *t); /* draws a frame: the loop's (tui.c), run by tui_redraw_soon's timer */
    bool dirty;
    bool quitting;
    int exit_status;
    char *goodbye;      /* printed after the screen is gone */
    int attach_id;      /* corral attach ID: focus it once the list is in */
    int attach_host;    /* ...of this host (corral attach -H) */
    bool attached;      /* that was done (a machine that comes back is not attached again) */
    struct remoterec *remoterec; /* another machine's records being copied for review (remoterec.c) */
} tui_t;

/* screen.c */
void tui_redraw_soon(tui_t *t);
/* Draw at once, outside the frame cap: for the rare events a person waits
 * on (a new approval request), never for a session's output. */
void tui_redraw_now(tui_t *t);
void tui_message(tui_t *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
ui_session *tui_selected(tui_t *t);
void tui_select(tui_t *t, int id);
void tui_quit(tui_t *t, int status, const char *goodbye);
/* The keys change hands (a focus change, a confirmation opening, the
 * approval dialog closing): supervisor keys typed in the next TUI_GUARD_S
 * are dropped, so typing meant for what was there never becomes a command. */
void tui_hold_keys(tui_t *t);
/* Keys are still held (a key would be dropped, and the screen says so). */
bool tui_keys_held(const tui_t *t);
/* Pane content size for a session shown in the selected pane's place. */
void tui_pane_size(tui_t *t, int *rows, int *cols);
/* Content rows of the selected session's pane. */
int tui_selected_rows(tui_t *t);
/* An age as the sidebar shows it: 12s, 5m, 3h, 2d. */
void ui_age_text(double seconds, char *out, size_t outlen);

/* search.c */
void tui_search_run(tui_t *t, int direction);

/* A row of the sidebar: a client's heading, a session (index into the
 * list), a request that has no session yet (index into appr.v), an
 * agent's finished commands folded into one (index: how many), or an
 * ended session the server no longer has (index into ended.v). */
typedef enum sidebar_kind { SB_HEADING, SB_SESSION, SB_APPROVAL, SB_FOLD, SB_ENDED } sidebar_kind;
typedef struct sidebar_row {
    sidebar_kind kind;
    int index;          /* SB_SESSION, SB_APPROVAL, SB_FOLD */
    const char *client; /* SB_HEADING, SB_FOLD */
} sidebar_row;

/* sidebar.c */
/* The sidebar's rows as drawn (at most max); returns how many. */
int sidebar_rows(tui_t *t, sidebar_row *rows, int max);
/* How many rows the sidebar has at most, unwindowed. */
int sidebar_rows_max(const tui_t *t);
void sidebar_draw(tui_t *t);
/* Keys: one row up or down the sidebar's session, fold and ended rows;
 * the ends are where it stops. */
void sidebar_move_selection(tui_t *t, int delta);
/* The first row of the sidebar that is a session (else a folded row,
 * else an ended session). */
void sidebar_select_first(tui_t *t);
/* A click on sidebar row y that is a folded row: selects and toggles it. */
bool sidebar_click_fold(tui_t *t, int y);

/* render.c */
void render_frame(tui_t *t);

/* approval.c */
void approvals_init(tui_t *t);
/* The pending list of a subscribe (or approvals) reply, and its
 * rules_error: replaces what was known. */
void approvals_load_host(tui_t *t, int host, json_t *reply);
/* Host's requests leave the queue (its link is down). */
void approvals_drop_host(tui_t *t, int host);
/* An "approval" or "approval_done" event. */
void approvals_event(tui_t *t, const char *name, json_t *ev);
void approvals_free(tui_t *t);
/* The first pending request about a session, or NULL. */
const ui_approval *approval_for_session(const tui_t *t, int session);

/* approval_draw.c */
/* Keys are still held by the type-ahead guard (it starts when the shown
 * request is first drawn). */
bool approval_held(const tui_t *t);
bool approval_has_prefix(const ui_approval *a);
/* A network host's request (kind "network"): its own question and answers
 * (y this connection, a the host for the session, p and d save a
 * network_rule, n no this time; no note). */
bool approval_is_network(const ui_approval *a);
/* p can be offered: a prefix rule for a command, a network_rule for a host. */
bool approval_can_persist(const ui_approval *a);
/* The options on show for a request, in order (numbered from 1). */
int approval_options(const ui_approval *a, ui_answer *out);
/* The dialog's view: drawn over everything, and the note's cursor. */
void approval_draw(tui_t *t, ui_view *v);
bool approval_cursor(tui_t *t, ui_view *v);
/* The status bar's parts: "approvals N", and a rules file that did not
 * load (sticky, in the error style).  Each returns the columns used. */
int approval_status_count(tui_t *t, int y, int x, int maxw);
int approval_status_rules(tui_t *t, int y, int x, int maxw);
/* What a session waits for while a request of it is pending, for its
 * pane's title ("waits for your answer: network access to HOST:PORT
 * (request N)") or, brief, its sidebar row ("? HOST"). */
void approval_wait_text(const ui_approval *a, bool brief, char *out, size_t n);
/* A sidebar row for a request that has no session (yet). */
void approval_sidebar_row(tui_t *t, const ui_approval *a, ui_rect r, int y);
/* Seconds until a is denied for want of an answer, or < 0 without a timeout. */
double approval_remaining(const ui_approval *a, double now);

#endif
