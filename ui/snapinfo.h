/*
 * snapinfo.h - what the supervisor screen knows of each session's
 * snapshots (docs/snapshots.md, "In the supervisor screen"), as the
 * server's session list and its events tell it: the last command's
 * changes, shown as the sidebar's "+A ~M -D", and the workspace's store,
 * shown as the status bar's size (or the first snapshot's progress).  It
 * is kept whether or not the diff view is open.
 *
 * Included by tui.c, which hands it the list and the events, and by
 * render.c and sidebar.c, which draw it; not for other modules.
 */
#ifndef CORRAL_UI_SNAPINFO_H
#define CORRAL_UI_SNAPINFO_H

#include <jansson.h>

#include "tui_int.h"

/* A session JSON (a session event, or each of a list): its last command's
 * counts and its workspace's snapshot state. */
void snapinfo_note_session(json_t *session);
/* Every session of a subscribe (or ls) reply. */
void snapinfo_note_list(json_t *reply);
/* A "snapshot" event: a workspace's state and progress. */
void snapinfo_note_snapshot(tui_t *t, json_t *ev);
/* The sidebar's "+A ~M -D" for session s, right-aligned to end at column
 * right on row y (under: the row's style); returns the columns used. */
int snapinfo_sidebar_counts(tui_t *t, const ui_session *s, int y, int right, int minx, theme_elem under);
/* The status bar's snapshot part for the selected session's workspace;
 * returns the columns used. */
int snapinfo_status(tui_t *t, int y, int x, int maxw);
void snapinfo_free(void);

#endif
