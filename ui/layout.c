/*
 * layout.c - see layout.h.
 */
#include "config.h"

#include "layout.h"

#include <string.h>

#define MIN_H 2
#define MIN_W 8

const char *layout_name(ui_layout l)
{
    static const char *const names[LAYOUT_COUNT] = {"single", "vertical split", "horizontal split", "grid"};
    return l < LAYOUT_COUNT ? names[l] : "?";
}

static const char *const keys[LAYOUT_COUNT] = {"single", "vsplit", "hsplit", "grid"};

const char *layout_key(ui_layout l)
{
    return l < LAYOUT_COUNT ? keys[l] : "single";
}

int layout_from_key(const char *key)
{
    for (int l = 0; key && l < LAYOUT_COUNT; l++)
        if (strcmp(keys[l], key) == 0)
            return l;
    return -1;
}

int layout_capacity(ui_layout l, int n)
{
    int cap = l == LAYOUT_SINGLE ? 1 : l == LAYOUT_GRID ? LAYOUT_MAX_PANES : 2;
    return n < cap ? n : cap;
}

/* Split length len into parts with gap cells between them; part i starts
 * at *start and is *size long. */
static void split(int len, int parts, int gap, int i, int *start, int *size)
{
    int avail = len - gap * (parts - 1);
    int base = avail / parts, extra = avail % parts;
    *start = i * (base + gap) + (i < extra ? i : extra);
    *size = base + (i < extra ? 1 : 0);
}

int layout_panes(ui_layout l, ui_rect area, int k, ui_rect *out)
{
    if (k <= 0 || area.h < MIN_H || area.w < MIN_W)
        return 0;
    int cols = 1, rows = 1;
    switch (l) {
    case LAYOUT_VSPLIT: cols = k; break;
    case LAYOUT_HSPLIT: rows = k; break;
    case LAYOUT_GRID:
        while (cols * cols < k)
            cols++;
        rows = (k + cols - 1) / cols;
        break;
    default: k = 1; break;
    }
    /* Fewer panes when they would be too small. */
    while (cols > 1 && (area.w - (cols - 1)) / cols < MIN_W)
        cols--;
    while (rows > 1 && area.h / rows < MIN_H)
        rows--;
    if (k > cols * rows)
        k = cols * rows;
    int placed = 0;
    for (int r = 0; r < rows && placed < k; r++) {
        int in_row = k - placed < cols ? k - placed : cols;
        /* The last row of a grid may hold fewer panes: they share its width. */
        int y, h;
        split(area.h, rows, 0, r, &y, &h);
        for (int c = 0; c < in_row; c++) {
            int x, w;
            split(area.w, in_row, 1, c, &x, &w);
            out[placed++] = (ui_rect){area.y + y, area.x + x, h, w};
        }
    }
    return placed;
}
