/*
 * replayview.h - a session's recording replayed in the pane area (r; r on
 * a command in the timeline plays that command and pauses where it ends):
 * the recording is fed to a terminal model
 * of its own (src/record/castplay.h) on a timer of the screen's loop, in slices,
 * so keys are read between them even through a flood, and the model is
 * drawn as a live pane is (paint_vt).  Pauses between events are cut to
 * the recording's idle limit (2 s when it names none).  A status row
 * above: playing or paused, time, speed, command N of M; space pauses
 * (at the end: plays again from the start), + and - double and halve the
 * speed, n and p jump to the next and previous command's start (its
 * "cmd N:" marker), q or Esc closes.
 *
 * What the recording holds reaches the screen only as the model's cells,
 * as a live session's output does.  It is a view (view.h) on the
 * screen's stack, over the timeline when opened from it.
 *
 * Included by tui.c (r) and timelineview.c (r on a command); not for
 * other modules.
 */
#ifndef CORRAL_UI_REPLAYVIEW_H
#define CORRAL_UI_REPLAYVIEW_H

#include <stdbool.h>

#include "ended.h"
#include "tui_int.h"

/* Replay target's recording; from_command > 0: that command, from its start
 * to its end, where the replay pauses (space plays on; when its start is
 * not marked, all of it from the start, and the status bar says so). */
void replayview_open(tui_t *t, const ui_review_target *target, int from_command);

#endif
