/*
 * diffview.h - the supervisor screen's view of snapshots (docs/snapshots.md,
 * "In the supervisor screen"): d opens the selected session's last command's
 * diff, D the list of its commands with their counts and risk marks.  The
 * diff view has a file list (status, mode, symlink target, size, +x -y,
 * risk marks first) over a coloured patch pane, file and hunk navigation,
 * search, a whitespace toggle, big patches folded until opened, and u to
 * revert the command after a confirmation that lists what it will do.
 *
 * It is one view (view.h) with two pages, the list and a diff (a diff
 * opened from the list goes back to it); on top it takes every key, while
 * the mouse goes through it to the sidebar and the panes.  w's whitespace
 * setting and the last / query are kept from one opening to the next.
 *
 * Included by tui.c (d, D) and timelineview.c (Enter on a command); not
 * for other modules.
 */
#ifndef CORRAL_UI_DIFFVIEW_H
#define CORRAL_UI_DIFFVIEW_H

#include <jansson.h>
#include <stdbool.h>

#include "tui_int.h"

/* Open on the selected session: its commands (list) or its last diff. */
void diffview_open(tui_t *t, bool list);
/* Open command n's diff of a session (Enter on a command in its timeline).
 * record: the command as its log has it (tl_entry_json: workspace, before,
 * after).  A session the server has (in_server) is asked by its id; one it
 * no longer has (ended before a restart, removed from its list) by the
 * snapshot ids of the record, from the workspace's store; when that cannot
 * be, the status bar says why and nothing opens. */
void diffview_open_command(tui_t *t, int session, bool in_server, int n, json_t *record);

#endif
