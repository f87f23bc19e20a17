/*
 * replaydraw.h - a terminal model drawn on a real terminal with corral's
 * own sequences only: cursor positions, SGR colours and attributes, erase
 * to the end of the line, cursor visibility, synchronized update.  Nothing
 * the model was fed (titles, clipboard, modes, queries) is ever written:
 * only its cells, whose text is checked again for control characters.
 *
 * Unlike vt_redraw_bytes (the whole screen, for a terminal of the model's
 * size), this draws a window of the model: the model may be larger than
 * the terminal (the window follows the cursor) and only rows that changed
 * are drawn again.
 *
 * Included by src/vt/ and src/cli/.
 */
#ifndef CORRAL_REPLAYDRAW_H
#define CORRAL_REPLAYDRAW_H

#include <stdbool.h>

#include "base/util.h"
#include "vt/vt.h"

typedef struct replaydraw_view {
    int top, left;   /* the model's cell at the terminal's top left corner */
    int rows, cols;  /* how much of the model shows: at most the model's size */
    int term_cols;   /* the terminal's width */
} replaydraw_view;

/* Fit the view to a terminal of term_rows x term_cols (rows it may use:
 * the caller keeps a status line out of them) and move it, if need be, so
 * the model's cursor is in it.  True when what it shows moved or changed
 * size (draw it all again). */
bool replaydraw_fit(replaydraw_view *v, const vt_t *vt, int term_rows, int term_cols);

/* Append to out the bytes that draw the view at the terminal's top left
 * (the caller may wrap them in a synchronized update, ?2026):
 * every row when all is set, else the rows the model marks damaged; then
 * the cursor (shown where the model's is, when that is in view and
 * visible).  Clears the model's damage. */
void replaydraw_frame(buf_t *out, vt_t *vt, const replaydraw_view *v, bool all);

/* Whether any row of the model is damaged. */
bool replaydraw_damaged(const vt_t *vt);

#endif
