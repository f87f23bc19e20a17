/*
 * diffview.h - the supervisor screen's view of snapshots (docs/snapshots.md,
 * "In the supervisor screen"): d opens the selected session's last command's
 * diff, D the list of its commands with their counts and risk marks.  The
 * diff view has a file list (status, mode, symlink target, size, +x -y,
 * risk marks first) over a coloured patch pane, file and hunk navigation,
 * search, a whitespace toggle, big patches folded until opened, and u to
 * revert the command after a confirmation that lists what it will do.
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
void diffview_free(void);

#endif
