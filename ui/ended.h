/*
 * ended.h - ended sessions in the sidebar, to review (E toggles them):
 * the sessions recorded in the state directory that the server's list does
 * not have (it forgets sessions it removed, and every session of a server
 * that stopped), in a group of their own, greyed, newest first.  They are
 * read from their files (sessfiles.h), never asked of the server: only
 * their start and end, for the row.  Another machine's are asked of its
 * server (records with glance), whose answer is taken as hostile.  l, r
 * and d review them; keys that act on a live session say what does work
 * instead.
 *
 * Also what the review views open on: the selected session, live or
 * ended, as a review target.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_ENDED_H
#define CORRAL_UI_ENDED_H

#include <stdbool.h>
#include <stddef.h>

struct tui;
struct sidebar_row;

/* The most recent this many are listed (corral log --all lists every one). */
#define ENDED_MAX 50

typedef struct ui_ended_session {
    char dir[32];      /* its directory's name on its machine: 7, 7.1 */
    char key[48];      /* which row it is: dir here, "HOST/dir" for another machine's */
    int host;          /* its machine (hosts.h): 0, this one */
    int id;            /* the id it had */
    char *name, *client; /* sanitized for the screen */
    bool exited;       /* its end is in its log (else the server stopped first, or it is cut short) */
    int exit_code;
    bool killed;       /* by a signal */
    double mtime;      /* its log's last write, seconds since the epoch */
} ui_ended_session;

typedef struct ui_ended {
    bool shown;
    ui_ended_session *v; /* newest first, at most ENDED_MAX */
    size_t n;
    size_t total;      /* recorded and not in the server's list, before the cap */
    char selected[48]; /* the selected row's key; "": none is */
    char heading[64];  /* "ended", or how many of how many are listed */
    double scanned_at; /* ui_now() of the last scan; 0: scan again */
    struct ended_remote *remote; /* the other machines' lists, as they last answered */
    bool reselect;     /* an answer of another machine took the selected row away */
} ui_ended;

/* E: show them (scanned now) or hide them.  True when the selected one
 * went with them: the caller selects another row (sidebar_select_first). */
bool ended_toggle(struct tui *t);
/* Scan again if shown and the list changed or a few seconds passed
 * (force: now).  From the screen's tick.  True when the selected one went
 * (removed, renamed): the caller selects another row. */
bool ended_refresh(struct tui *t, bool force);
/* The session list changed: the next refresh scans. */
void ended_list_changed(struct tui *t);
/* Sidebar: the group's heading and rows after all the others (when
 * shown); returns the new total, *sel_line set at the selected row. */
int ended_rows(struct tui *t, struct sidebar_row *rows, int total, int *sel_line);
int ended_row_count(const struct tui *t);
void ended_draw_row(struct tui *t, const struct sidebar_row *row, int y);
/* The selected ended session, or NULL (a live one, a folded row, none). */
const ui_ended_session *ended_selected(struct tui *t);
void ended_select(struct tui *t, size_t index);
/* A key that acts on a live session, on an ended one: what works instead. */
void ended_refuse(struct tui *t);
void ended_free(ui_ended *e);

/* What a review view (timeline, replay) is of: a session's directory in the
 * state directory, and whether the server still has the session in its
 * list, running or not (its diffs are then asked for by its id; else by
 * the snapshot ids its log recorded). */
typedef struct ui_review_target {
    char dir[512];      /* a session directory's name, or a path (another machine's records copied here) */
    int id;
    bool in_server;
    bool running;
    char name[80];
} ui_review_target;

/* The selected session (live or ended) as a review target; false with a
 * message in the status bar when nothing is selected. */
bool review_target_selected(struct tui *t, ui_review_target *out);

#endif
