/*
 * layout.h - where panes go: the main area split for one, two or a grid of
 * sessions, like dvtm's layouts.  Each pane rect includes its title row.
 *
 * Included by the files of ui/ (through tui_int.h) and by the unit tests
 * (tests/unit/test_ui.c); not for other modules.
 */
#ifndef CORRAL_UI_LAYOUT_H
#define CORRAL_UI_LAYOUT_H

typedef enum ui_layout { LAYOUT_SINGLE, LAYOUT_VSPLIT, LAYOUT_HSPLIT, LAYOUT_GRID, LAYOUT_COUNT } ui_layout;

typedef struct ui_rect {
    int y, x, h, w;
} ui_rect;

#define LAYOUT_MAX_PANES 9

const char *layout_name(ui_layout l);
/* The name the server keeps a layout under (docs/protocol.md, "layout"):
 * single, vsplit, hsplit, grid; and back (-1: none of them). */
const char *layout_key(ui_layout l);
int layout_from_key(const char *key);
/* How many of n sessions the layout shows. */
int layout_capacity(ui_layout l, int n);
/* Rects for k panes (k <= layout_capacity) in area; a pane is at least 2
 * rows (title and one line) by 8 columns, so fewer may fit: returns how
 * many were placed.  One column (side by side) separates panes. */
int layout_panes(ui_layout l, ui_rect area, int k, ui_rect *out);

#endif
