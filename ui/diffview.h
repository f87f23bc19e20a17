/*
 * diffview.h - the supervisor screen's view of snapshots (docs/snapshots.md,
 * "In the supervisor screen"): d opens the selected session's last command's
 * diff, D the list of its commands with their counts and risk marks.  The
 * diff view has a file list (status, mode, symlink target, size, +x -y,
 * risk marks first) over a coloured patch pane, file and hunk navigation,
 * search, a whitespace toggle, big patches folded until opened, and u to
 * revert the command after a confirmation that lists what it will do.
 * The sidebar's "+A ~M -D" and the status bar's store size (or the first
 * snapshot's progress) come from here too.
 *
 * The view takes every key while it is open.  Its state is this file's
 * own (one screen per process).
 */
#ifndef CORRAL_UI_DIFFVIEW_H
#define CORRAL_UI_DIFFVIEW_H

#include <jansson.h>
#include <stdbool.h>

#include "tui_int.h"

bool diffview_active(void);
/* Open on the selected session: its commands (list) or its last diff. */
void diffview_open(tui_t *t, bool list);
/* Open command n's diff of a session (Enter on a command in its timeline).
 * record: the command as its log has it (tl_entry_json: workspace, before,
 * after).  A session the server has (in_server) is asked by its id; one it
 * no longer has (ended before a restart, removed from its list) by the
 * snapshot ids of the record, from the workspace's store; when that cannot
 * be, the status bar says why and nothing opens. */
void diffview_open_command(tui_t *t, int session, bool in_server, int n, json_t *record);
void diffview_key(tui_t *t, const ui_key *k);
void diffview_draw(tui_t *t);
/* A session JSON (a session event, or each of a list): its last command's
 * counts and its workspace's snapshot state. */
void diffview_note_session(json_t *session);
/* Every session of a subscribe (or ls) reply. */
void diffview_note_list(json_t *reply);
/* A "snapshot" event: a workspace's state and progress. */
void diffview_note_snapshot(tui_t *t, json_t *ev);
/* The sidebar's "+A ~M -D" for session s, right-aligned to end at column
 * right on row y (under: the row's style); returns the columns used. */
int diffview_sidebar_counts(tui_t *t, const ui_session *s, int y, int right, int minx, theme_elem under);
/* The status bar's snapshot part for the selected session's workspace;
 * returns the columns used. */
int diffview_status(tui_t *t, int y, int x, int maxw);
void diffview_free(void);

#endif
