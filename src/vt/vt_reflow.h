/*
 * vt_reflow.h - a new width for the primary screen and its history: lines
 * that wrapped are joined again and wrapped at the new width, as tmux does
 * (grid_reflow).  Only a change of width calls for it; the alternate
 * screen is never reflowed.
 *
 * Every row and history line belongs to a logical line: a run of rows each
 * "wrapped" into the next, ending at one that is not.  A logical line is
 * its rows' cells end to end: each wrapped row gives all its columns (less
 * the last one when it stayed empty because the wide character after it
 * did not fit), the last row its cells up to its last non-blank one.  At
 * the new width it is cut again before any character that would cross the
 * edge (a wide one leaves the last column empty), every row but the last
 * marked wrapped; blank cells that would start a row of their own at its
 * end (a background colour erased to the edge) are dropped.  A logical
 * line that is one row and fits is moved across as it is.
 *
 * Which lines the screen then shows:
 *   - a screen whose text (or cursor) reached its last row keeps its
 *     bottom: the last line of text stays on the last row, so narrowing
 *     pushes lines into history and widening brings them back;
 *   - otherwise the screen keeps its top row (the blank rows below absorb
 *     the growth), scrolling only as far as the cursor and the text need;
 *   - a taller screen also brings lines back from history, as a change of
 *     height alone does.
 * The cursor (marks[0]) is always on screen.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_REFLOW_H
#define CORRAL_VT_REFLOW_H

#include <stdbool.h>

#include "vt/vt_grid.h"

/* A position on the primary screen or in its history: row numbered as
 * vt_line does (negative: history, -1 the newest line), col 0..cols, where
 * cols is a cursor waiting to wrap after the last column.  After the
 * reflow it says where the same character is; pending says the cursor
 * waits to wrap after the last column of that row (col is then cols - 1).
 * A mark whose line left history is unset. */
typedef struct vt_reflow_mark {
    bool set;
    bool pending;
    int row, col;
} vt_reflow_mark;

/* Reflow grid g (the primary screen, g->ncols wide) with history h to rows
 * x cols, moving the marks; marks[0], when set, is the cursor the screen
 * keeps in view.  nmarks >= 1. */
void vt_reflow(vt_grid *g, vt_history *h, int rows, int cols, vt_reflow_mark *marks, int nmarks);

#endif
