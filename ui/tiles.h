/*
 * tiles.h - what the supervisor screen keeps in place for the user: the
 * sessions kept in tiles of the split and grid layouts (new sessions take
 * only the other tiles), agents' finished one-shot commands folded into one
 * sidebar row per agent, clearing exited sessions, and the layout kept on
 * the server so that attaching again finds the screen as it was left.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_TILES_H
#define CORRAL_UI_TILES_H

#include <stdbool.h>
#include <stddef.h>

#include "layout.h"
#include "sessions.h"

struct tui;
struct sidebar_row;
struct ui_host;

#define TILES_CLIENT_MAX 64  /* the server's limit on client names */
#define TILES_EXPANDED_MAX 64

typedef struct ui_tiles {
    int kept[LAYOUT_MAX_PANES]; /* the session kept in tile i; 0: the tile shows the most recent */
    /* Agents whose finished commands are unfolded (all others are folded). */
    char expanded[TILES_EXPANDED_MAX][TILES_CLIENT_MAX + 1];
    int nexpanded;
    char fold_selected[TILES_CLIENT_MAX + 1]; /* the agent whose folded row is selected; "": none */
    bool changed; /* the user changed the layout before the kept one arrived: it is not applied */
    /* Another machine's sessions that were kept in tiles, by that
     * machine's name and its server's id: put back once it is up and
     * lists them (tiles_restore_there), kept meanwhile while their tiles
     * stay free. */
    struct {
        int tile, session;
        char host[TILES_CLIENT_MAX + 1];
    } there[LAYOUT_MAX_PANES];
    int nthere;
} ui_tiles;

/* The sessions for the panes of layout lay, by tile (k ids; returns k):
 * kept sessions in their tiles, then the selected session and the most
 * recent others in sidebar order in the free tiles. */
int tiles_pick(struct tui *t, ui_layout lay, int *out);

/* Sidebar: s has no row of its own in its client's group (it is folded,
 * or listed under its agent's unfolded row). */
bool tiles_folded_away(struct tui *t, const ui_session *s);
/* After a client's group: its folded row (and the unfolded commands).
 * Returns the new total; *sel_line is set where the selection is. */
int tiles_fold_rows(struct tui *t, struct sidebar_row *rows, int total, const char *client, int *sel_line);
void tiles_draw_fold_row(struct tui *t, const struct sidebar_row *row, int y);
/* The pane title's mark for a kept tile. */
void tiles_draw_mark(struct tui *t, int pane);

/* The agent's folded row takes the selection. */
void tiles_select_fold(struct tui *t, const char *client);
bool tiles_fold_selected(struct tui *t);
void tiles_toggle_fold(struct tui *t);
void tiles_keep(struct tui *t);
void tiles_clear_exited(struct tui *t);
/* x on an exited session: how to remove it instead. */
void tiles_already_exited(struct tui *t, const ui_session *s);
/* A session left the list.  True when the selected folded row went with
 * it: the caller selects another row (sidebar_select_first). */
bool tiles_session_removed(struct tui *t, int id);

/* The layout (mode, zoom, kept tiles, unfolded agents) goes to the server
 * after every change, and comes back from it on attach. */
void tiles_save(struct tui *t);
void tiles_restore(struct tui *t);
/* Another machine is up and its sessions are listed: the tiles it had
 * when the layout was kept get them back. */
void tiles_restore_there(struct tui *t, struct ui_host *h);

#endif
