/*
 * sessions.h - the TUI's copy of the session list, kept exact by the
 * server's subscribe events, and for each session the TUI shows, its own
 * terminal model fed by a watch (docs/protocol.md).
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_SESSIONS_H
#define CORRAL_UI_SESSIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "vt/vt.h"

typedef struct ui_session {
    int id;
    char *name, *client, *profile, *status, *title, *cwd, *command;
    bool running, pinned, tty;
    bool exec;         /* an agent's exec_command process (kind "exec"), not an interactive session */
    int exit_code;     /* when !running */
    bool ended_on_purpose; /* killed by the user or by a server stop: no failure */
    int rows, cols;    /* the session's terminal size on the server */
    int asked_rows, asked_cols; /* the size this screen last asked for (its pane), 0: none */
    long long use;     /* larger: more recently used */
    double created_at; /* local monotonic seconds the session was created */
    double output_at;  /* local monotonic seconds of its last output */
    bool bell;         /* rang since the user last looked at it */
    int connections;   /* open now through the network proxy */

    /* The watch: a model identical to the server's while synced. */
    vt_t *vt;
    bool watched;
    bool synced;
    int scroll;        /* lines scrolled back from the live screen (0: live) */
    bool gaps;         /* a frame came (another machine's): lines may be missing from its history */
    bool refilling;    /* a fresh watch for its whole history is asked: its sync keeps the scroll */
    bool redraw;       /* repaint its pane fully */
    bool seen;         /* in the latest list from the server */
    bool lost;         /* its machine's link is down (hosts.h): shown greyed, keys go nowhere */
} ui_session;

/* Which machine a screen id is of (hosts.h: id / this). */
#define UI_SESSIONS_HOST_STRIDE 1000000

typedef struct ui_sessions {
    ui_session **v; /* sidebar order: by machine, then grouped by client, most recently used first */
    size_t n;
    int max;        /* store size */
} ui_sessions;

void ui_sessions_init(ui_sessions *l);
void ui_sessions_free(ui_sessions *l);
/* Take the list of host's subscribe (or ls) reply (its ids the screen's,
 * hosts.h): host's entries not in it go, the others keep their models;
 * other hosts' entries stay. */
void ui_sessions_load_host(ui_sessions *l, json_t *reply, int host);
/* A "session" event: update or add. Returns the entry. */
ui_session *ui_sessions_update(ui_sessions *l, json_t *session);
void ui_sessions_remove(ui_sessions *l, int id);
ui_session *ui_sessions_find(const ui_sessions *l, int id);
int ui_sessions_index(const ui_sessions *l, int id);
int ui_sessions_live(const ui_sessions *l);
/* A finished one-shot command of an agent (a client other than "user"):
 * such rows fold into one per client in the sidebar. */
bool ui_session_foldable(const ui_session *s);
/* Idle: running and quiet for 10 s or more. */
bool ui_session_idle(const ui_session *s, double now);
/* Local monotonic seconds. */
double ui_now(void);

#endif
