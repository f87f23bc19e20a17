/*
 * paint.h - putting cells on the curses screen: theme styles and terminal
 * colours turned into curses pairs (exact RGB on a direct-colour terminal,
 * else the nearest of what it has), text clipped to a width, and a
 * session's terminal model drawn into a rectangle.
 *
 * Nothing a session printed reaches the real terminal except as cells
 * drawn here; control characters in cells or text become '?'.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_PAINT_H
#define CORRAL_UI_PAINT_H

#include <stdbool.h>
#include <stddef.h>

#include <curses.h>

#include "layout.h"
#include "theme.h"
#include "vt/vt.h"

/* [ui] truecolor, as conf.h has it. */
#define PAINT_TRUECOLOR_AUTO (-1)
#define PAINT_TRUECOLOR_OFF 0
#define PAINT_TRUECOLOR_ON 1

/* curses on the terminal (newterm on stdout and stdin), drawing exact RGB
 * when truecolor is on, or auto and the terminal says it takes 24-bit
 * colour (COLORTERM=truecolor or 24bit, terminfo RGB or Tc).  When that
 * was asked for but cannot be (no tic, a TERM without an entry), note says
 * why and the terminal's own description is used.  NULL: curses cannot
 * drive the terminal. */
SCREEN *paint_newterm(int truecolor, char *note, size_t notelen);
/* After start_color(): how many colours the terminal has. */
void paint_init(const theme_t *theme);
/* Set the drawing style of stdscr to a theme element (optionally as it
 * sits inside another element's row; pass under = e for none). */
void paint_set(theme_elem e, theme_elem under);
/* Write UTF-8 text at y,x in at most maxw columns with the current style;
 * returns the columns used. */
int paint_text(int y, int x, int maxw, const char *utf8);
/* How many bytes of utf8 fit in maxw columns (whole characters). */
size_t paint_fit(const char *utf8, int maxw);
/* Spaces over w columns with the current style. */
void paint_fill(int y, int x, int w);
/* Columns a UTF-8 string takes. */
int paint_width(const char *utf8);

/* A highlighted span on a vt line (search matches). */
typedef struct paint_mark {
    int line, col, len; /* vt_line numbering */
    bool current;
} paint_mark;

/* Draw rows of vt into r: the line at the top of r is first_line (vt_line
 * numbering: history is negative); only rows marked dirty unless all. */
/* held: another client holds the terminal smaller than r; what of r it
 * does not reach is dotted instead of blank. */
void paint_vt(const vt_t *vt, ui_rect r, int first_line, bool all, const paint_mark *marks, int nmarks,
              bool held);
/* While on, paint_vt draws every cell dimmed: the last screen of a
 * session whose machine's link is down (hosts.h). */
void paint_dim(bool on);
/* After curses drew a frame (refresh): the cells of it with more marks
 * than curses keeps in a cell (CCHARW_MAX - 1) written again whole, so
 * that every mark the terminal model keeps is shown; the cursor goes back
 * where curses left it. */
void paint_marks_flush(void);
/* The first screen row of vt a pane of h rows shows (before scrolling). */
int pane_first_row(const vt_t *vt, int h);

/* Glyphs: Unicode where the locale can show it (else ASCII stand-ins). */
bool paint_unicode(void);
/* A vertical separator of h rows: a box-drawing character rather than
 * the terminal's alternate character set, which some terminals garble. */
void paint_separator(int y, int x, int h);

#endif
