/*
 * timelineview.h - the supervisor screen's timeline of a session (l): its
 * events.jsonl read as `corral log` reads it (src/record/timeline.h), one row per
 * entry (time, kind, what it was), over the pane area like the diff view.
 * j/k, arrows, PgUp/PgDn, g/G move; f and F show one kind at a time;
 * / searches (the scrollback's prompt, its last query kept) and n/N go to
 * the next and previous match; Enter on a command opens its diff (command
 * N, in the diff view), on any other entry its whole record (v for a
 * command's), pretty-printed in a box; r replays the recording from the
 * command at or above the selection; q or Esc closes.
 *
 * The log is read once when the view opens; only the rows on the screen
 * are turned into text, so a 100k-event log opens at once.  A session the
 * server still has is read again when its log changes (at most every
 * second, and less often the longer a read takes).  It is a view
 * (view.h) on the screen's stack; a diff, a replay or the search prompt
 * it opens goes over it, and it is there again when they close.
 *
 * Included by tui.c (l, and its session events); not for other modules.
 */
#ifndef CORRAL_UI_TIMELINEVIEW_H
#define CORRAL_UI_TIMELINEVIEW_H

#include <stdbool.h>

#include "ended.h"
#include "tui_int.h"

void timelineview_open(tui_t *t, const ui_review_target *target);
/* A session event: its log may have grown. */
void timelineview_session_event(tui_t *t, int session);
/* d on a session the server no longer has: its last command's diff, from
 * the record its log kept. */
void timelineview_last_diff(tui_t *t, const ui_review_target *target);

#endif
