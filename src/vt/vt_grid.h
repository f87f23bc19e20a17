/*
 * vt_grid.h - cell storage for the terminal model (vt.c): the visible rows
 * as a ring, the bounded history, and the table of combining marks.
 *
 * A row is one cols-wide array of vt_cell plus "used", a bound past which
 * every cell is a default blank, so blanking a row or saving it to history
 * touches only its used part.  The rows form a ring (top is the slot of
 * visible row 0): a scroll of the whole screen moves top instead of cells.
 *
 * Invariants every change keeps: a blank cell (ch 0) has default fg, no
 * attributes, width 1 and only its background; a width-2 cell is followed
 * by its VT_CH_WIDE_CONT cell and a continuation never stands alone
 * (vt_grid_repair); cells at or beyond a row's used are default blanks.
 *
 * History lines are trimmed of trailing default blanks and allocated to
 * exactly their length; the oldest goes when max is reached.
 *
 * A row or line is "wrapped" when the text on it goes on in the next one
 * because autowrap put it there (not a newline): what a width change joins
 * and wraps again (vt_reflow.c).  The flag travels with the row into
 * history and is dropped when the row, or the row after it, is blanked.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_GRID_H
#define CORRAL_VT_GRID_H

#include <stdbool.h>
#include <stdint.h>

#include "vt/vt.h"

typedef struct vt_row {
    vt_cell *cells; /* cols cells */
    int used;       /* cells at or beyond used are default blanks */
    bool wrapped;   /* the text goes on in the next row (autowrap put it there) */
} vt_row;

typedef struct vt_grid {
    vt_row *rows; /* ring of nrows rows; NULL when not allocated */
    int nrows, ncols;
    int top; /* slot of visible row 0 */
} vt_grid;

typedef struct vt_hist_line {
    vt_cell *cells; /* len cells, NULL when len is 0 */
    int len;
    bool wrapped; /* goes on in the next line */
} vt_hist_line;

typedef struct vt_history {
    vt_hist_line *lines; /* ring, oldest at head */
    int cap, len, head, max;
} vt_history;

/* Combining marks kept on one cell (xterm keeps up to 10); more are
 * dropped. */
#define VT_COMB_MARKS 16
#define VT_COMB_MAX 255 /* cell.comb is 1 + index, in a uint8_t */

typedef struct vt_comb_entry {
    uint32_t cp[VT_COMB_MARKS];
    int n;
} vt_comb_entry;

typedef struct vt_comb_table {
    vt_comb_entry *entries;
    int len, cap, next, last;
} vt_comb_table;

static inline vt_row *vt_grid_row(const vt_grid *g, int r)
{
    int k = g->top + r;
    if (k >= g->nrows)
        k -= g->nrows;
    return &g->rows[k];
}

static inline bool vt_cell_is_default_blank(const vt_cell *c)
{
    return c->ch == 0 && c->bg == VT_COLOR_DEFAULT;
}

void vt_grid_init(vt_grid *g, int rows, int cols);
void vt_grid_free(vt_grid *g);

/* Blank cells with the given background. */
void vt_grid_fill(vt_cell *c, int n, vt_color bg);
/* Blank a whole row in the given background (the erase colour). */
void vt_grid_blank_row(vt_row *r, int cols, vt_color bg);
/* Blank cells [sc, ec) of a row in the given background. */
void vt_grid_erase(vt_row *r, int sc, int ec, int cols, vt_color bg);
/* Keep wide characters whole at the boundary before col. */
void vt_grid_repair(vt_row *r, int col, int cols);
/* Number of cells up to the last one that is not a default blank. */
int vt_grid_trimmed(const vt_row *r);
/* Rotate visible rows [s, e) up by m (row s + m becomes row s). */
void vt_grid_rotate(vt_grid *g, int s, int e, int m);
/* New dimensions.  Rows above cursor_row go (to h, if not NULL) so that
 * it stays visible; with h, rows come back from history when the grid
 * gets taller.  Returns how many rows the content moved down. */
int vt_grid_resize(vt_grid *g, int rows, int cols, int cursor_row, vt_history *h);

void vt_history_init(vt_history *h, int max);
void vt_history_free(vt_history *h);
/* Save a row as the newest line (nothing if max is 0). */
void vt_history_push(vt_history *h, const vt_row *r);
/* Line k, 1 being the newest; NULL if out of range. */
const vt_hist_line *vt_history_line(const vt_history *h, int k);

void vt_comb_init(vt_comb_table *t);
void vt_comb_free(vt_comb_table *t);
/* The cell.comb value (1 + index) for up to VT_COMB_MARKS marks ending at
 * a 0; equal sequences share an entry, a full table recycles its oldest. */
uint8_t vt_comb_intern(vt_comb_table *t, const uint32_t *marks);
/* The marks of a cell.comb value; NULL for 0 or an unknown value. */
const vt_comb_entry *vt_comb_get(const vt_comb_table *t, uint8_t comb);

#endif
