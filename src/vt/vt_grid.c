/*
 * vt_grid.c - rows, history and combining marks of the terminal model.
 *
 * See vt_grid.h for the layout and the invariants.  Nothing here knows about
 * libvterm: vt.c turns its callbacks into these operations.
 */
#include "config.h"

#include "vt/vt_grid.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static const vt_cell blank_cell = { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };

/* ---- rows ---------------------------------------------------------------- */

void vt_grid_fill(vt_cell *c, int n, vt_color bg)
{
    vt_cell b = blank_cell;
    b.bg = bg;
    for (int k = 0; k < n; k++)
        c[k] = b;
}

void vt_grid_blank_row(vt_row *r, int cols, vt_color bg)
{
    r->wrapped = false;
    if (bg == VT_COLOR_DEFAULT) {
        vt_grid_fill(r->cells, r->used, bg);
        r->used = 0;
    } else {
        vt_grid_fill(r->cells, cols, bg);
        r->used = cols;
    }
}

void vt_grid_repair(vt_row *r, int col, int cols)
{
    vt_cell *c = r->cells;
    if (col > 0 && col <= cols && c[col - 1].width == 2 &&
        (col == cols || c[col].ch != VT_CH_WIDE_CONT))
        vt_grid_fill(&c[col - 1], 1, c[col - 1].bg);
    if (col >= 0 && col < cols && c[col].ch == VT_CH_WIDE_CONT &&
        (col == 0 || c[col - 1].width != 2))
        vt_grid_fill(&c[col], 1, c[col].bg);
}

void vt_grid_erase(vt_row *r, int sc, int ec, int cols, vt_color bg)
{
    if (bg == VT_COLOR_DEFAULT) {
        /* cells past used are blank already */
        int end = ec < r->used ? ec : r->used;
        if (sc < end)
            vt_grid_fill(r->cells + sc, end - sc, bg);
        if (ec >= r->used && sc < r->used)
            r->used = sc;
    } else {
        vt_grid_fill(r->cells + sc, ec - sc, bg);
        if (ec > r->used)
            r->used = ec;
    }
    vt_grid_repair(r, sc, cols);
    vt_grid_repair(r, ec, cols);
}

int vt_grid_trimmed(const vt_row *r)
{
    int n = r->used;
    while (n > 0 && vt_cell_is_default_blank(&r->cells[n - 1]))
        n--;
    return n;
}

void vt_grid_init(vt_grid *g, int rows, int cols)
{
    g->rows = xcalloc((size_t)rows, sizeof *g->rows);
    g->nrows = rows;
    g->ncols = cols;
    g->top = 0;
    for (int r = 0; r < rows; r++) {
        g->rows[r].cells = xmalloc((size_t)cols * sizeof(vt_cell));
        vt_grid_fill(g->rows[r].cells, cols, VT_COLOR_DEFAULT);
    }
}

void vt_grid_free(vt_grid *g)
{
    if (!g->rows)
        return;
    for (int r = 0; r < g->nrows; r++)
        free(g->rows[r].cells);
    free(g->rows);
    g->rows = NULL;
}

static void reverse_rows(vt_grid *g, int a, int b) /* [a, b) */
{
    for (b--; a < b; a++, b--) {
        vt_row *ra = vt_grid_row(g, a), *rb = vt_grid_row(g, b), t = *ra;
        *ra = *rb;
        *rb = t;
    }
}

/* Three reversals rotate in place, moving row structs, not cells. */
void vt_grid_rotate(vt_grid *g, int s, int e, int m)
{
    reverse_rows(g, s, s + m);
    reverse_rows(g, s + m, e);
    reverse_rows(g, s, e);
}

/* ---- history ------------------------------------------------------------- */

void vt_history_init(vt_history *h, int max)
{
    memset(h, 0, sizeof *h);
    h->max = max;
}

void vt_history_free(vt_history *h)
{
    for (int k = 0; k < h->cap; k++)
        free(h->lines[k].cells);
    free(h->lines);
    memset(h, 0, sizeof *h);
}

/* Room for one more line: the ring doubles up to max (kept in order). */
static void history_grow(vt_history *h)
{
    int cap = h->cap ? h->cap * 2 : 64;
    if (cap > h->max)
        cap = h->max;
    vt_hist_line *nl = xcalloc((size_t)cap, sizeof *nl);
    for (int k = 0; k < h->len; k++)
        nl[k] = h->lines[(h->head + k) % h->cap];
    free(h->lines);
    h->lines = nl;
    h->cap = cap;
    h->head = 0;
}

/* When history is full the oldest line's memory is reused (realloc keeps
 * it in place when the length is the same or shrinks). */
void vt_history_push(vt_history *h, const vt_row *r)
{
    if (h->max == 0)
        return;
    int n = vt_grid_trimmed(r);
    vt_hist_line *l;
    if (h->len == h->max) {
        l = &h->lines[h->head];
        h->head = h->head + 1 == h->cap ? 0 : h->head + 1;
    } else {
        if (h->len == h->cap)
            history_grow(h);
        l = &h->lines[(h->head + h->len) % h->cap];
        h->len++;
    }
    if (n == 0) {
        free(l->cells);
        l->cells = NULL;
    } else if (l->len != n || !l->cells) {
        l->cells = xrealloc(l->cells, (size_t)n * sizeof(vt_cell));
    }
    if (n)
        memcpy(l->cells, r->cells, (size_t)n * sizeof(vt_cell));
    l->len = n;
    l->wrapped = r->wrapped;
}

const vt_hist_line *vt_history_line(const vt_history *h, int k)
{
    if (k < 1 || k > h->len)
        return NULL;
    return &h->lines[(h->head + h->len - k) % h->cap];
}

/* Take the newest line back as a row of cols cells. */
static void history_pop(vt_history *h, vt_row *r, int cols)
{
    vt_hist_line *l = &h->lines[(h->head + h->len - 1) % h->cap];
    int n = l->len < cols ? l->len : cols;
    r->cells = xmalloc((size_t)cols * sizeof(vt_cell));
    if (n)
        memcpy(r->cells, l->cells, (size_t)n * sizeof(vt_cell));
    vt_grid_fill(r->cells + n, cols - n, VT_COLOR_DEFAULT);
    r->used = n;
    r->wrapped = l->wrapped;
    vt_grid_repair(r, n, cols);
    free(l->cells);
    l->cells = NULL;
    l->len = 0;
    l->wrapped = false;
    h->len--;
}

/* ---- resize -------------------------------------------------------------- */

/* Cut or pad a row that keeps its place to the new width. */
static void row_set_width(vt_row *r, int old_cols, int cols)
{
    if (cols == old_cols)
        return;
    r->cells = xrealloc(r->cells, (size_t)cols * sizeof(vt_cell));
    if (cols > old_cols)
        vt_grid_fill(r->cells + old_cols, cols - old_cols, VT_COLOR_DEFAULT);
    else if (r->used > cols)
        r->used = cols;
    vt_grid_repair(r, cols, cols);
}

int vt_grid_resize(vt_grid *g, int rows, int cols, int cursor_row, vt_history *h)
{
    int old_rows = g->nrows, old_cols = g->ncols;
    vt_row *nr = xcalloc((size_t)rows, sizeof *nr);
    int skip = cursor_row >= rows ? cursor_row - rows + 1 : 0, pull = 0;
    if (h && rows > old_rows && cursor_row >= 0)
        pull = rows - old_rows < h->len ? rows - old_rows : h->len;
    for (int k = 0; k < pull; k++)
        history_pop(h, &nr[pull - 1 - k], cols);
    for (int k = 0; k < old_rows; k++) {
        vt_row *r = vt_grid_row(g, k);
        int to = pull + k - skip;
        if (k < skip && h)
            vt_history_push(h, r);
        if (to >= 0 && to < rows) {
            nr[to] = *r;
            row_set_width(&nr[to], old_cols, cols);
        } else {
            free(r->cells);
        }
    }
    for (int k = 0; k < rows; k++) {
        if (!nr[k].cells) {
            nr[k].cells = xmalloc((size_t)cols * sizeof(vt_cell));
            vt_grid_fill(nr[k].cells, cols, VT_COLOR_DEFAULT);
        }
    }
    if (rows < old_rows - skip + pull) /* the row it went on in was cut */
        nr[rows - 1].wrapped = false;
    free(g->rows);
    g->rows = nr;
    g->nrows = rows;
    g->ncols = cols;
    g->top = 0;
    return pull - skip;
}

/* ---- combining marks ----------------------------------------------------- */

void vt_comb_init(vt_comb_table *t)
{
    memset(t, 0, sizeof *t);
    t->last = -1;
}

void vt_comb_free(vt_comb_table *t)
{
    free(t->entries);
    vt_comb_init(t);
}

static bool comb_equal(const vt_comb_entry *e, const uint32_t *cp, int n)
{
    return e->n == n && memcmp(e->cp, cp, (size_t)n * sizeof *cp) == 0;
}

uint8_t vt_comb_intern(vt_comb_table *t, const uint32_t *marks)
{
    int n = 0;
    while (n < VT_COMB_MARKS && marks[n])
        n++;
    if (t->last >= 0 && comb_equal(&t->entries[t->last], marks, n))
        return (uint8_t)(t->last + 1);
    int i;
    for (i = 0; i < t->len; i++)
        if (comb_equal(&t->entries[i], marks, n))
            break;
    if (i == t->len) {
        if (t->len < VT_COMB_MAX) {
            if (t->len == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 8;
                if (t->cap > VT_COMB_MAX)
                    t->cap = VT_COMB_MAX;
                t->entries = xrealloc(t->entries, (size_t)t->cap * sizeof *t->entries);
            }
            t->len++;
        } else { /* full: recycle the oldest slot */
            i = t->next;
            t->next = (t->next + 1) % VT_COMB_MAX;
        }
        memcpy(t->entries[i].cp, marks, (size_t)n * sizeof *marks);
        t->entries[i].n = n;
    }
    t->last = i;
    return (uint8_t)(i + 1);
}

const vt_comb_entry *vt_comb_get(const vt_comb_table *t, uint8_t comb)
{
    return comb && comb <= t->len ? &t->entries[comb - 1] : NULL;
}
