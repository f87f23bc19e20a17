/*
 * replaydraw.c - drawing a window of a terminal model on a real terminal
 * (replaydraw.h).
 */
#include "config.h"

#include "vt/replaydraw.h"

#include <string.h>

typedef struct pen {
    vt_color fg, bg;
    unsigned attrs;
    bool known;
} pen;

static void set_pen(buf_t *out, pen *p, const vt_cell *c)
{
    if (p->known && p->fg == c->fg && p->bg == c->bg && p->attrs == c->attrs)
        return;
    vt_put_sgr(out, c->fg, c->bg, c->attrs); /* the model's own SGR writer */
    *p = (pen){c->fg, c->bg, c->attrs, true};
}

/* A cell's text, or "?" if it holds anything a terminal would act on (the
 * model never stores controls; this makes sure). */
static size_t cell_text(const vt_t *vt, const vt_cell *c, char *out)
{
    size_t n = vt_cell_text(vt, c, out);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)out[i];
        if (b < 0x20 || b == 0x7f || (b == 0xc2 && i + 1 < n && (unsigned char)out[i + 1] < 0xa0)) {
            out[0] = '?';
            return 1;
        }
    }
    return n;
}

static void draw_row(buf_t *out, const vt_t *vt, const replaydraw_view *v, int row, pen *p)
{
    static const vt_cell blank = {0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0};
    int len = 0;
    const vt_cell *cells = vt_line(vt, v->top + row, &len);
    buf_printf(out, "\033[%d;1H", row + 1);
    int end = v->left + v->cols;
    /* Blanks at the end of the row are erased rather than written. */
    int stop = end;
    while (stop > v->left) {
        const vt_cell *c = cells && stop - 1 < len ? &cells[stop - 1] : &blank;
        if (c->ch != 0 || c->bg != VT_COLOR_DEFAULT || (c->attrs & VT_ATTR_REVERSE))
            break;
        stop--;
    }
    for (int col = v->left; col < stop;) {
        const vt_cell *c = cells && col < len ? &cells[col] : &blank;
        char text[VT_CELL_TEXT_MAX];
        size_t n;
        int w = 1;
        if (c->ch == VT_CH_WIDE_CONT) {
            n = 1; /* the right half of a character cut off at the left edge */
            text[0] = ' ';
        } else if (c->ch == 0) {
            n = 1;
            text[0] = ' ';
        } else {
            w = c->width == 2 ? 2 : 1;
            if (col + w > end) { /* cut off at the right edge */
                w = 1;
                n = 1;
                text[0] = ' ';
            } else {
                n = cell_text(vt, c, text);
                if (n == 0) {
                    n = 1;
                    text[0] = ' ';
                }
            }
        }
        set_pen(out, p, c);
        buf_append(out, text, n);
        col += w;
    }
    if (stop < end || v->cols < v->term_cols) {
        /* The rest of the row, and past the model's width: blank.  (Not
         * after a glyph in the terminal's last column, where the cursor
         * waits to wrap and EL would erase that glyph.) */
        buf_puts(out, "\033[0m\033[K");
        *p = (pen){VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, true};
    }
}

bool replaydraw_damaged(const vt_t *vt)
{
    for (int r = 0; r < vt_rows(vt); r++)
        if (vt_row_dirty(vt, r))
            return true;
    return false;
}

bool replaydraw_fit(replaydraw_view *v, const vt_t *vt, int term_rows, int term_cols)
{
    replaydraw_view old = *v;
    int mrows = vt_rows(vt), mcols = vt_cols(vt);
    if (term_rows < 1)
        term_rows = 1;
    if (term_cols < 1)
        term_cols = 1;
    v->rows = mrows < term_rows ? mrows : term_rows;
    v->cols = mcols < term_cols ? mcols : term_cols;
    v->term_cols = term_cols;
    int crow, ccol;
    vt_cursor(vt, &crow, &ccol);
    if (ccol >= mcols)
        ccol = mcols - 1;
    if (crow < v->top)
        v->top = crow;
    if (crow >= v->top + v->rows)
        v->top = crow - v->rows + 1;
    if (ccol < v->left)
        v->left = ccol;
    if (ccol >= v->left + v->cols)
        v->left = ccol - v->cols + 1;
    if (v->top > mrows - v->rows)
        v->top = mrows - v->rows;
    if (v->left > mcols - v->cols)
        v->left = mcols - v->cols;
    if (v->top < 0)
        v->top = 0;
    if (v->left < 0)
        v->left = 0;
    return memcmp(&old, v, sizeof *v) != 0;
}

void replaydraw_frame(buf_t *out, vt_t *vt, const replaydraw_view *v, bool all)
{
    buf_puts(out, "\033[?25l");
    pen p = {0};
    for (int row = 0; row < v->rows; row++)
        if (all || vt_row_dirty(vt, v->top + row))
            draw_row(out, vt, v, row, &p);
    vt_clear_damage(vt);
    buf_puts(out, "\033[0m");
    int crow, ccol;
    vt_cursor(vt, &crow, &ccol);
    bool in_view = crow >= v->top && crow < v->top + v->rows && ccol >= v->left && ccol < v->left + v->cols;
    if (in_view)
        buf_printf(out, "\033[%d;%dH", crow - v->top + 1, ccol - v->left + 1);
    if (in_view && (vt_modes(vt) & VT_MODE_CURSOR_VISIBLE))
        buf_puts(out, "\033[?25h");
}
