/*
 * vt_reflow.c - see vt_reflow.h.
 *
 * The work is done on a flat list: every history line and screen row, in
 * order, as source lines; logical lines are cut out of it, rewrapped into
 * a list of new lines (history lines that need no change are moved, not
 * copied), and the new list is split into history and screen.  Marks are
 * carried as offsets into their logical line.  Nothing here runs unless the
 * width changes.
 */
#include "config.h"

#include "vt/vt_reflow.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* A source line: a history line or a screen row. */
typedef struct src_line {
    vt_cell *cells;
    int len; /* cells up to the last one that is not a default blank */
    bool wrapped;
    bool owned; /* cells is a history line's own array, ours to move or free */
} src_line;

/* The lines being built. */
typedef struct line_list {
    vt_hist_line *v;
    int n, cap;
} line_list;

/* Where a mark went, before the screen is placed: index in the new list. */
typedef struct mark_pos {
    int line, col;
    bool pending, found;
} mark_pos;

static const vt_cell blank_cell = { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };

static vt_hist_line *list_add(line_list *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    vt_hist_line *x = &l->v[l->n++];
    memset(x, 0, sizeof *x);
    return x;
}

/* A new line holding cells [0, n) of c. */
static void list_add_copy(line_list *l, const vt_cell *c, int n, bool wrapped)
{
    vt_hist_line *x = list_add(l);
    x->len = n;
    x->wrapped = wrapped;
    if (n > 0) {
        x->cells = xmalloc((size_t)n * sizeof(vt_cell));
        memcpy(x->cells, c, (size_t)n * sizeof(vt_cell));
    }
}

/* Cells a source line gives its logical line (see vt_reflow.h): a wrapped
 * line all its columns, less an empty last one left by a wide character
 * that went on to the next line. */
static int contribution(const src_line *s, const src_line *next, int cols)
{
    if (!s->wrapped || !next)
        return s->len;
    bool last_empty = s->len < cols || vt_cell_is_default_blank(&s->cells[cols - 1]);
    bool next_wide = next->len > 0 && next->cells[0].width == 2;
    return last_empty && next_wide ? cols - 1 : cols;
}

/* Wrap the logical line t[0, n) into lines of cols cells; offsets[] lists
 * the cell offsets of marks (sorted or not) whose new positions go to
 * out[].  A cell offset at or past the end is "after the text". */
static void rewrap(line_list *l, const vt_cell *t, int n, int cols, bool last_wrapped, const int *offsets,
                   mark_pos *out, int noff)
{
    int last_text = n - 1; /* blanks after it that would open a row are dropped */
    while (last_text >= 0 && t[last_text].ch == 0)
        last_text--;
    int col = 0, start = 0;
    for (int i = 0; i < n;) {
        int w = t[i].width == 2 && i + 1 < n ? 2 : 1;
        if (col + w > cols) {
            if (i > last_text) {
                n = i;
                break;
            }
            list_add_copy(l, t + start, i - start, true);
            start = i;
            col = 0;
        }
        for (int k = 0; k < noff; k++) {
            if (offsets[k] == i || (w == 2 && offsets[k] == i + 1)) {
                out[k].line = l->n;
                out[k].col = col + (offsets[k] - i);
                out[k].found = true;
            }
        }
        col += w;
        i += w;
    }
    list_add_copy(l, t + start, n - start, last_wrapped);
    int last = l->n - 1, end = n - start;
    for (int k = 0; k < noff; k++) {
        if (out[k].found || offsets[k] < 0)
            continue;
        /* After the text: as far past its end as it was. */
        int c = end + (offsets[k] - n);
        out[k].line = last;
        out[k].found = true;
        out[k].pending = c >= cols;
        out[k].col = c >= cols ? cols - 1 : c;
    }
}

void vt_reflow(vt_grid *g, vt_history *h, int rows, int cols, vt_reflow_mark *marks, int nmarks)
{
    int old_rows = g->nrows, old_cols = g->ncols, hn = h->len, total = hn + old_rows;
    src_line *src = xcalloc((size_t)total, sizeof *src);
    for (int k = 0; k < hn; k++) {
        vt_hist_line *x = &h->lines[(h->head + k) % h->cap];
        src[k] = (src_line){ x->cells, x->len, x->wrapped, true };
        x->cells = NULL;
        x->len = 0;
    }
    int last_text = -1; /* the last screen row with text */
    for (int r = 0; r < old_rows; r++) {
        vt_row *row = vt_grid_row(g, r);
        src[hn + r] = (src_line){ row->cells, vt_grid_trimmed(row), row->wrapped, false };
        if (src[hn + r].len > 0)
            last_text = r;
    }

    /* The marks, and two of our own: the top of the screen and the end of
     * its text. */
    int nm = nmarks + 2, m_top = nmarks, m_text = nmarks + 1;
    int *at_src = xcalloc((size_t)nm, sizeof *at_src); /* source line, -1: unset */
    int *at_col = xcalloc((size_t)nm, sizeof *at_col);
    mark_pos *pos = xcalloc((size_t)nm, sizeof *pos);
    for (int k = 0; k < nmarks; k++) {
        int s = marks[k].row + hn;
        at_src[k] = marks[k].set && s >= 0 && s < total ? s : -1;
        at_col[k] = marks[k].pending ? old_cols : marks[k].col;
    }
    at_src[m_top] = hn;
    at_col[m_top] = 0;
    at_src[m_text] = last_text >= 0 ? hn + last_text : -1;
    at_col[m_text] = last_text >= 0 ? src[hn + last_text].len - 1 : 0;

    line_list out = { 0 };
    vt_cell *t = NULL;
    size_t tcap = 0;
    int *offsets = xcalloc((size_t)nm, sizeof *offsets);
    for (int i = 0; i < total;) {
        int j = i;
        while (j + 1 < total && src[j].wrapped)
            j++;
        if (i == j && src[i].len <= cols) {
            /* One row that fits: moved across (a history line keeps its
             * array). */
            if (src[i].owned) {
                vt_hist_line *x = list_add(&out);
                x->cells = src[i].cells;
                x->len = src[i].len;
                x->wrapped = src[i].wrapped;
                src[i].cells = NULL;
            } else {
                list_add_copy(&out, src[i].cells, src[i].len, src[i].wrapped);
            }
            for (int k = 0; k < nm; k++) {
                if (at_src[k] != i)
                    continue;
                pos[k].line = out.n - 1;
                pos[k].found = true;
                pos[k].pending = at_col[k] >= cols;
                pos[k].col = at_col[k] >= cols ? cols - 1 : at_col[k];
            }
            i = j + 1;
            continue;
        }
        /* The logical line's cells end to end. */
        size_t n = 0;
        for (int p = i; p <= j; p++)
            n += (size_t)contribution(&src[p], p < j ? &src[p + 1] : NULL, old_cols);
        if (n > tcap) {
            tcap = n;
            t = xrealloc(t, tcap * sizeof *t);
        }
        size_t o = 0;
        for (int k = 0; k < nm; k++)
            offsets[k] = -1;
        for (int p = i; p <= j; p++) {
            int c = contribution(&src[p], p < j ? &src[p + 1] : NULL, old_cols);
            int have = src[p].len < c ? src[p].len : c;
            if (have > 0)
                memcpy(t + o, src[p].cells, (size_t)have * sizeof *t);
            for (int k = have; k < c; k++)
                t[o + (size_t)k] = blank_cell;
            for (int k = 0; k < nm; k++)
                if (at_src[k] == p)
                    offsets[k] = (int)o + at_col[k];
            o += (size_t)c;
        }
        rewrap(&out, t, (int)n, cols, src[j].wrapped, offsets, pos, nm);
        i = j + 1;
    }
    free(t);
    free(offsets);

    /* Which lines the screen shows (see vt_reflow.h). */
    const mark_pos *cur = marks[0].set && pos[0].found ? &pos[0] : NULL;
    int old_bottom = last_text;
    if (marks[0].set && marks[0].row >= 0 && marks[0].row > old_bottom)
        old_bottom = marks[0].row;
    int text_end = pos[m_text].found ? pos[m_text].line : -1;
    int bottom = text_end;
    if (cur && cur->line > bottom)
        bottom = cur->line;
    int top;
    if (old_bottom == old_rows - 1) {
        top = bottom - rows + 1;
    } else {
        top = pos[m_top].line - (rows > old_rows ? rows - old_rows : 0);
        if (bottom - rows + 1 > top)
            top = bottom - rows + 1;
    }
    if (cur && top > cur->line)
        top = cur->line;
    if (top < 0)
        top = 0;
    if (top > out.n)
        top = out.n;

    /* History: lines above the screen, the newest max of them. */
    int drop = top > h->max ? top - h->max : 0;
    for (int k = 0; k < drop; k++)
        free(out.v[k].cells);
    int kept = top - drop;
    free(h->lines);
    h->lines = NULL;
    h->cap = h->len = h->head = 0;
    if (kept > 0) {
        int cap = kept < 64 ? 64 : kept;
        if (cap > h->max)
            cap = h->max;
        h->lines = xcalloc((size_t)cap, sizeof *h->lines);
        memcpy(h->lines, out.v + drop, (size_t)kept * sizeof *h->lines);
        h->cap = cap;
        h->len = kept;
    }

    /* The screen. */
    vt_row *nr = xcalloc((size_t)rows, sizeof *nr);
    for (int r = 0; r < rows; r++) {
        nr[r].cells = xmalloc((size_t)cols * sizeof(vt_cell));
        int k = top + r, n = 0;
        if (k < out.n) {
            n = out.v[k].len;
            if (n > 0)
                memcpy(nr[r].cells, out.v[k].cells, (size_t)n * sizeof(vt_cell));
            nr[r].wrapped = out.v[k].wrapped;
            free(out.v[k].cells);
        }
        for (int c = n; c < cols; c++)
            nr[r].cells[c] = blank_cell;
        nr[r].used = n;
    }
    nr[rows - 1].wrapped = false; /* what it went on in is not kept */
    for (int k = top + rows; k < out.n; k++)
        free(out.v[k].cells);
    free(out.v);
    for (int r = 0; r < old_rows; r++)
        free(vt_grid_row(g, r)->cells);
    for (int k = 0; k < hn; k++)
        free(src[k].cells); /* history lines rewrapped */
    free(g->rows);
    g->rows = nr;
    g->nrows = rows;
    g->ncols = cols;
    g->top = 0;

    for (int k = 0; k < nmarks; k++) {
        if (!marks[k].set || !pos[k].found || pos[k].line < drop) {
            marks[k].set = false;
            continue;
        }
        int row = pos[k].line - top;
        marks[k].pending = pos[k].pending;
        marks[k].col = pos[k].col;
        if (row >= rows) { /* below the screen: its last row */
            row = rows - 1;
            marks[k].pending = false;
        }
        marks[k].row = row;
    }
    free(src);
    free(at_src);
    free(at_col);
    free(pos);
}
