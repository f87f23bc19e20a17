/*
 * vt.c - the terminal model on libvterm's VTermState layer.
 *
 * libvterm parses the stream and keeps the terminal's state (cursor, pen,
 * modes, scroll region); it tells us what changes through VTermState
 * callbacks and we keep the cells.  (Its VTermScreen layer would keep them
 * for us, but copies the whole screen for every scrolled line.)
 *
 * The grid: each visible row is one cols-wide array of vt_cell plus "used",
 * a bound past which every cell is a default blank, so clearing a row or
 * saving it to history touches only its used part.  The rows form a ring
 * (top is the slot of visible row 0): a full-screen scroll by one line
 * advances top, hands the departing row to the scrollback and blanks it as
 * the new bottom row, O(used) instead of O(rows x cols).  Scrolls of a
 * region rotate row structs in place; anything else that is not full width
 * is declined, and libvterm falls back to moverect + erase.
 *
 * Invariants kept by every change: a blank cell (ch 0) has default fg, no
 * attributes, width 1 and only its background; a width-2 cell is always
 * followed by its VT_CH_WIDE_CONT cell and a continuation never stands
 * alone (repair() blanks broken halves); cells at or beyond a row's used are
 * default blanks.
 *
 * History is a ring of at most scrollback_max lines, each trimmed to its
 * last non-blank cell and allocated to exactly that size.  The alternate
 * screen is a second grid, allocated while it is shown, that never feeds
 * the history.  Combining marks live in a small per-vt table (cell.comb is
 * 1 + index); it holds up to 255 distinct mark sequences and then recycles
 * the oldest slot.
 *
 * libvterm 0.1.4 reports neither dim nor conceal and hides the DEC modes a
 * client needs; vt_scan tracks those (and keeps escape strings whole, see
 * vt_scan.h).
 */
#include "config.h"

#include "vt.h"

#include "util.h"
#include "vt_scan.h"

#include <stdlib.h>
#include <string.h>
#include <vterm.h>

#define VT_MAX_ROWS 1000
#define VT_MAX_COLS 2000
#define VT_MAX_SCROLLBACK 1000000
#define VT_TITLE_MAX 256
#define COMB_MAX 255
#define COMB_MARKS (VTERM_MAX_CHARS_PER_CELL - 1)

typedef struct vt_row {
    vt_cell *cells; /* cols cells */
    int used;       /* cells at or beyond used are default blanks */
} vt_row;

typedef struct vt_grid {
    vt_row *rows; /* ring of vt->rows rows */
    int top;      /* slot of visible row 0 */
} vt_grid;

typedef struct sb_line {
    vt_cell *cells;
    int len;
} sb_line;

typedef struct comb_entry {
    uint32_t cp[COMB_MARKS];
    int n;
} comb_entry;

struct vt {
    VTerm *vterm;
    VTermState *state;
    vt_callbacks cb;
    void *user;
    int rows, cols;
    vt_grid primary, alt;
    vt_grid *cur; /* the grid on show */
    bool altscreen;
    uint8_t *dirty; /* per visible row */

    vt_color fg, bg;    /* the pen */
    uint16_t pen_vterm; /* attributes libvterm reports */
    uint16_t pen_extra; /* dim, conceal from the scanner */
    uint16_t attrs;     /* both */

    sb_line *sb; /* ring of history lines, oldest at sb_head */
    int sb_cap, sb_len, sb_head, sb_max;

    comb_entry *comb;
    int comb_len, comb_cap, comb_next, comb_last;

    char *title;
    bool cursor_visible;
    int mouse; /* VTERM_PROP_MOUSE_* */
    vt_scan scan;
};

static const vt_cell blank_cell = { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };
static const vt_cell empty_line[1] = { { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 } };

/* ---- grid ---------------------------------------------------------------- */

static inline vt_row *grid_row(const vt_grid *g, int nrows, int r)
{
    int k = g->top + r;
    if (k >= nrows)
        k -= nrows;
    return &g->rows[k];
}

static inline vt_row *row_at(const vt_t *vt, int r)
{
    return grid_row(vt->cur, vt->rows, r);
}

static void fill_blank(vt_cell *c, int n, vt_color bg)
{
    vt_cell b = blank_cell;
    b.bg = bg;
    for (int k = 0; k < n; k++)
        c[k] = b;
}

static inline bool is_default_blank(const vt_cell *c)
{
    return c->ch == 0 && c->bg == VT_COLOR_DEFAULT;
}

/* Make the row blank with the given background (erase colour). */
static void blank_row(vt_row *r, int cols, vt_color bg)
{
    if (bg == VT_COLOR_DEFAULT) {
        fill_blank(r->cells, r->used, bg);
        r->used = 0;
    } else {
        fill_blank(r->cells, cols, bg);
        r->used = cols;
    }
}

static void grid_alloc(vt_grid *g, int rows, int cols)
{
    g->rows = xcalloc((size_t)rows, sizeof *g->rows);
    g->top = 0;
    for (int r = 0; r < rows; r++) {
        g->rows[r].cells = xmalloc((size_t)cols * sizeof(vt_cell));
        fill_blank(g->rows[r].cells, cols, VT_COLOR_DEFAULT);
    }
}

static void grid_free(vt_grid *g, int rows)
{
    if (!g->rows)
        return;
    for (int r = 0; r < rows; r++)
        free(g->rows[r].cells);
    free(g->rows);
    g->rows = NULL;
}

/* Keep wide characters whole at the boundary before col: a left half that
 * lost its right half, or a right half that lost its left, becomes blank. */
static void repair(vt_row *r, int col, int cols)
{
    vt_cell *c = r->cells;
    if (col > 0 && col <= cols && c[col - 1].width == 2 &&
        (col == cols || c[col].ch != VT_CH_WIDE_CONT))
        fill_blank(&c[col - 1], 1, c[col - 1].bg);
    if (col >= 0 && col < cols && c[col].ch == VT_CH_WIDE_CONT &&
        (col == 0 || c[col - 1].width != 2))
        fill_blank(&c[col], 1, c[col].bg);
}

static void mark_dirty(vt_t *vt, int first, int end)
{
    if (end > first)
        memset(vt->dirty + first, 1, (size_t)(end - first));
}

/* ---- scrollback ---------------------------------------------------------- */

/* Save a departing row as the newest history line, trimmed of default
 * blanks; when history is full the oldest line's memory is reused. */
static void sb_push(vt_t *vt, const vt_row *r)
{
    if (vt->sb_max == 0)
        return;
    int n = r->used;
    while (n > 0 && is_default_blank(&r->cells[n - 1]))
        n--;
    sb_line *l;
    if (vt->sb_len == vt->sb_max) {
        l = &vt->sb[vt->sb_head];
        vt->sb_head = vt->sb_head + 1 == vt->sb_cap ? 0 : vt->sb_head + 1;
    } else {
        if (vt->sb_len == vt->sb_cap) {
            int cap = vt->sb_cap ? vt->sb_cap * 2 : 64;
            if (cap > vt->sb_max)
                cap = vt->sb_max;
            sb_line *nl = xcalloc((size_t)cap, sizeof *nl);
            for (int k = 0; k < vt->sb_len; k++)
                nl[k] = vt->sb[(vt->sb_head + k) % vt->sb_cap];
            free(vt->sb);
            vt->sb = nl;
            vt->sb_cap = cap;
            vt->sb_head = 0;
        }
        l = &vt->sb[(vt->sb_head + vt->sb_len) % vt->sb_cap];
        vt->sb_len++;
    }
    if (l->len != n || !l->cells) {
        if (n == 0) {
            free(l->cells);
            l->cells = NULL;
        } else {
            l->cells = xrealloc(l->cells, (size_t)n * sizeof(vt_cell));
        }
    }
    if (n)
        memcpy(l->cells, r->cells, (size_t)n * sizeof(vt_cell));
    l->len = n;
}

/* Take the newest history line back as a visible row of cols cells. */
static void sb_pop(vt_t *vt, vt_row *r, int cols)
{
    sb_line *l = &vt->sb[(vt->sb_head + vt->sb_len - 1) % vt->sb_cap];
    int n = l->len < cols ? l->len : cols;
    r->cells = xmalloc((size_t)cols * sizeof(vt_cell));
    if (n)
        memcpy(r->cells, l->cells, (size_t)n * sizeof(vt_cell));
    fill_blank(r->cells + n, cols - n, VT_COLOR_DEFAULT);
    r->used = n;
    repair(r, n, cols);
    free(l->cells);
    l->cells = NULL;
    l->len = 0;
    vt->sb_len--;
}

/* ---- combining marks ----------------------------------------------------- */

static bool comb_equal(const comb_entry *e, const uint32_t *cp, int n)
{
    return e->n == n && memcmp(e->cp, cp, (size_t)n * sizeof *cp) == 0;
}

/* The table index (plus one) for a cell's marks, reusing equal entries. */
static uint8_t comb_intern(vt_t *vt, const uint32_t *marks)
{
    int n = 0;
    while (n < COMB_MARKS && marks[n])
        n++;
    if (vt->comb_last >= 0 && comb_equal(&vt->comb[vt->comb_last], marks, n))
        return (uint8_t)(vt->comb_last + 1);
    int i;
    for (i = 0; i < vt->comb_len; i++)
        if (comb_equal(&vt->comb[i], marks, n))
            break;
    if (i == vt->comb_len) {
        if (vt->comb_len < COMB_MAX) {
            if (vt->comb_len == vt->comb_cap) {
                vt->comb_cap = vt->comb_cap ? vt->comb_cap * 2 : 8;
                if (vt->comb_cap > COMB_MAX)
                    vt->comb_cap = COMB_MAX;
                vt->comb = xrealloc(vt->comb, (size_t)vt->comb_cap * sizeof *vt->comb);
            }
            vt->comb_len++;
        } else { /* full: recycle the oldest slot */
            i = vt->comb_next;
            vt->comb_next = (vt->comb_next + 1) % COMB_MAX;
        }
        memcpy(vt->comb[i].cp, marks, (size_t)n * sizeof *marks);
        vt->comb[i].n = n;
    }
    vt->comb_last = i;
    return (uint8_t)(i + 1);
}

/* ---- libvterm state callbacks -------------------------------------------- */

static int cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *user)
{
    vt_t *vt = user;
    int cols = vt->cols;
    if (pos.row < 0 || pos.row >= vt->rows || pos.col < 0 || pos.col >= cols)
        return 1;
    vt_row *r = row_at(vt, pos.row);
    vt_cell *c = r->cells + pos.col;
    int w = info->width == 2 && pos.col + 1 < cols ? 2 : 1;
    bool clean = c->width == 1 && c->ch != VT_CH_WIDE_CONT &&
                 (w == 1 || (c[1].width == 1 && c[1].ch != VT_CH_WIDE_CONT));
    c->ch = info->chars[0];
    c->fg = vt->fg;
    c->bg = vt->bg;
    c->attrs = vt->attrs;
    c->width = (uint8_t)w;
    c->comb = info->chars[0] && info->chars[1] ? comb_intern(vt, info->chars + 1) : 0;
    if (w == 2) {
        c[1] = *c;
        c[1].ch = VT_CH_WIDE_CONT;
        c[1].width = 1;
        c[1].comb = 0;
    }
    if (!clean) {
        repair(r, pos.col, cols);
        repair(r, pos.col + w, cols);
    }
    if (pos.col + w > r->used)
        r->used = pos.col + w;
    vt->dirty[pos.row] = 1;
    return 1;
}

/* Clip a rect to the grid; false if nothing is left. */
static bool clip(const vt_t *vt, VTermRect *rc)
{
    if (rc->start_row < 0)
        rc->start_row = 0;
    if (rc->start_col < 0)
        rc->start_col = 0;
    if (rc->end_row > vt->rows)
        rc->end_row = vt->rows;
    if (rc->end_col > vt->cols)
        rc->end_col = vt->cols;
    return rc->start_row < rc->end_row && rc->start_col < rc->end_col;
}

/* Blank cells [sc, ec) of a row in the pen's background (BCE). */
static void erase_cells(vt_t *vt, vt_row *r, int sc, int ec)
{
    vt_color bg = vt->bg;
    if (bg == VT_COLOR_DEFAULT) {
        int end = ec < r->used ? ec : r->used;
        if (sc < end)
            fill_blank(r->cells + sc, end - sc, bg);
        if (ec >= r->used && sc < r->used)
            r->used = sc;
    } else {
        fill_blank(r->cells + sc, ec - sc, bg);
        if (ec > r->used)
            r->used = ec;
    }
    repair(r, sc, vt->cols);
    repair(r, ec, vt->cols);
}

static int cb_erase(VTermRect rect, int selective, void *user)
{
    vt_t *vt = user;
    if (!clip(vt, &rect))
        return 1;
    for (int row = rect.start_row; row < rect.end_row; row++)
        erase_cells(vt, row_at(vt, row), rect.start_col, rect.end_col);
    mark_dirty(vt, rect.start_row, rect.end_row);
    return 1;
}

static int cb_moverect(VTermRect dest, VTermRect src, void *user)
{
    vt_t *vt = user;
    int h = dest.end_row - dest.start_row, w = dest.end_col - dest.start_col;
    if (h <= 0 || w <= 0 || src.end_row - src.start_row != h || src.end_col - src.start_col != w)
        return 1;
    if (dest.start_row < 0 || src.start_row < 0 || dest.start_col < 0 || src.start_col < 0 ||
        dest.end_row > vt->rows || src.end_row > vt->rows || dest.end_col > vt->cols ||
        src.end_col > vt->cols)
        return 1;
    bool down = dest.start_row > src.start_row;
    for (int k = 0; k < h; k++) {
        int i = down ? h - 1 - k : k;
        vt_row *d = row_at(vt, dest.start_row + i);
        const vt_row *s = row_at(vt, src.start_row + i);
        int s_used = s->used;
        memmove(d->cells + dest.start_col, s->cells + src.start_col, (size_t)w * sizeof(vt_cell));
        if (s_used > src.start_col) {
            int n = s_used - src.start_col;
            int e = dest.start_col + (n < w ? n : w);
            if (e > d->used)
                d->used = e;
        }
        repair(d, dest.start_col, vt->cols);
        repair(d, dest.end_col, vt->cols);
    }
    mark_dirty(vt, dest.start_row, dest.end_row);
    return 1;
}

static void swap_rows(vt_t *vt, int a, int b)
{
    vt_row *ra = row_at(vt, a), *rb = row_at(vt, b), t = *ra;
    *ra = *rb;
    *rb = t;
}

static void reverse_rows(vt_t *vt, int a, int b) /* [a, b) */
{
    for (b--; a < b; a++, b--)
        swap_rows(vt, a, b);
}

/* Full-width vertical scroll.  The whole screen moving up rotates the ring
 * and feeds the history; a region rotates its row structs. */
static int cb_scrollrect(VTermRect rect, int downward, int rightward, void *user)
{
    vt_t *vt = user;
    if (rightward || downward == 0 || rect.start_col != 0 || rect.end_col != vt->cols)
        return 0;
    if (!clip(vt, &rect))
        return 1;
    int h = rect.end_row - rect.start_row;
    int n = downward > 0 ? downward : -downward;
    if (n > h)
        n = h;
    vt_grid *g = vt->cur;
    if (h == vt->rows) {
        for (int k = 0; k < n; k++) {
            if (downward > 0) {
                vt_row *r = row_at(vt, 0);
                if (!vt->altscreen)
                    sb_push(vt, r);
                blank_row(r, vt->cols, vt->bg);
                g->top = g->top + 1 == vt->rows ? 0 : g->top + 1;
            } else {
                g->top = g->top == 0 ? vt->rows - 1 : g->top - 1;
                blank_row(row_at(vt, 0), vt->cols, vt->bg);
            }
        }
    } else {
        int s = rect.start_row, e = rect.end_row;
        int m = downward > 0 ? n : h - n; /* rotate up by m */
        reverse_rows(vt, s, s + m);
        reverse_rows(vt, s + m, e);
        reverse_rows(vt, s, e);
        int b0 = downward > 0 ? e - n : s;
        for (int k = 0; k < n; k++)
            blank_row(row_at(vt, b0 + k), vt->cols, vt->bg);
    }
    mark_dirty(vt, rect.start_row, rect.end_row);
    return 1;
}

static vt_color color_of(const VTermColor *c, uint8_t default_flag)
{
    if (c->type & default_flag)
        return VT_COLOR_DEFAULT;
    if (VTERM_COLOR_IS_INDEXED(c))
        return VT_COLOR_INDEXED(c->indexed.idx);
    return VT_COLOR_RGB(c->rgb.red, c->rgb.green, c->rgb.blue);
}

static void set_flag(uint16_t *attrs, uint16_t bit, bool on)
{
    *attrs = on ? (uint16_t)(*attrs | bit) : (uint16_t)(*attrs & ~bit);
}

static int cb_setpenattr(VTermAttr attr, VTermValue *val, void *user)
{
    vt_t *vt = user;
    switch (attr) {
    case VTERM_ATTR_BOLD: set_flag(&vt->pen_vterm, VT_ATTR_BOLD, val->boolean); break;
    case VTERM_ATTR_UNDERLINE: set_flag(&vt->pen_vterm, VT_ATTR_UNDERLINE, val->number != 0); break;
    case VTERM_ATTR_ITALIC: set_flag(&vt->pen_vterm, VT_ATTR_ITALIC, val->boolean); break;
    case VTERM_ATTR_BLINK: set_flag(&vt->pen_vterm, VT_ATTR_BLINK, val->boolean); break;
    case VTERM_ATTR_REVERSE: set_flag(&vt->pen_vterm, VT_ATTR_REVERSE, val->boolean); break;
    case VTERM_ATTR_STRIKE: set_flag(&vt->pen_vterm, VT_ATTR_STRIKE, val->boolean); break;
    case VTERM_ATTR_FOREGROUND: vt->fg = color_of(&val->color, VTERM_COLOR_DEFAULT_FG); break;
    case VTERM_ATTR_BACKGROUND: vt->bg = color_of(&val->color, VTERM_COLOR_DEFAULT_BG); break;
    default: break;
    }
    vt->attrs = vt->pen_vterm | vt->pen_extra;
    return 1;
}

/* Show the alternate grid (fresh) or go back to the untouched primary. */
static void set_altscreen(vt_t *vt, bool on)
{
    if (on == vt->altscreen)
        return;
    if (on) {
        grid_alloc(&vt->alt, vt->rows, vt->cols);
        vt->cur = &vt->alt;
    } else {
        vt->cur = &vt->primary;
        grid_free(&vt->alt, vt->rows);
    }
    vt->altscreen = on;
    mark_dirty(vt, 0, vt->rows);
}

static void set_title(vt_t *vt, const char *s)
{
    free(vt->title);
    vt->title = sanitize_text(s ? s : "", s ? strlen(s) : 0, VT_TITLE_MAX);
    if (vt->cb.title)
        vt->cb.title(vt->user, vt->title);
}

static int cb_settermprop(VTermProp prop, VTermValue *val, void *user)
{
    vt_t *vt = user;
    switch (prop) {
    case VTERM_PROP_CURSORVISIBLE: vt->cursor_visible = val->boolean; break;
    case VTERM_PROP_ALTSCREEN: set_altscreen(vt, val->boolean); break;
    case VTERM_PROP_TITLE: set_title(vt, val->string); break;
    case VTERM_PROP_MOUSE: vt->mouse = val->number; break;
    default: break;
    }
    return 1;
}

static int cb_bell(void *user)
{
    vt_t *vt = user;
    if (vt->cb.bell)
        vt->cb.bell(vt->user);
    return 1;
}

/* Give a grid new dimensions.  On the grid on show the cursor's line stays
 * visible: rows above it are pushed to history when the screen gets shorter
 * and history lines come back when it gets taller.  Returns how far the
 * content moved down. */
static int grid_resize(vt_t *vt, vt_grid *g, int rows, int cols, int cursor_row, bool history)
{
    int old_rows = vt->rows, old_cols = vt->cols;
    vt_row *nr = xcalloc((size_t)rows, sizeof *nr);
    int skip = cursor_row >= rows ? cursor_row - rows + 1 : 0, pull = 0;
    if (history && rows > old_rows && cursor_row >= 0)
        pull = rows - old_rows < vt->sb_len ? rows - old_rows : vt->sb_len;
    for (int k = 0; k < pull; k++)
        sb_pop(vt, &nr[pull - 1 - k], cols);
    for (int k = 0; k < old_rows; k++) {
        vt_row *r = grid_row(g, old_rows, k);
        int to = pull + k - skip;
        if (k < skip && history)
            sb_push(vt, r);
        if (to >= 0 && to < rows)
            nr[to] = *r;
        else
            free(r->cells);
    }
    for (int k = 0; k < rows; k++) {
        vt_row *r = &nr[k];
        if (!r->cells) {
            r->cells = xmalloc((size_t)cols * sizeof(vt_cell));
            fill_blank(r->cells, cols, VT_COLOR_DEFAULT);
        } else if (k >= pull && cols != old_cols) {
            r->cells = xrealloc(r->cells, (size_t)cols * sizeof(vt_cell));
            if (cols > old_cols)
                fill_blank(r->cells + old_cols, cols - old_cols, VT_COLOR_DEFAULT);
            else if (r->used > cols)
                r->used = cols;
            repair(r, cols, cols);
        }
    }
    free(g->rows);
    g->rows = nr;
    g->top = 0;
    return pull - skip;
}

static int cb_resize(int rows, int cols, VTermPos *delta, void *user)
{
    vt_t *vt = user;
    VTermPos cur;
    vterm_state_get_cursorpos(vt->state, &cur);
    int moved = grid_resize(vt, vt->cur, rows, cols, cur.row, !vt->altscreen);
    if (vt->altscreen)
        grid_resize(vt, &vt->primary, rows, cols, -1, false);
    vt->rows = rows;
    vt->cols = cols;
    free(vt->dirty);
    vt->dirty = xmalloc((size_t)rows);
    mark_dirty(vt, 0, rows);
    delta->row += moved;
    return 1;
}

static const VTermStateCallbacks state_callbacks = {
    .putglyph = cb_putglyph,
    .scrollrect = cb_scrollrect,
    .moverect = cb_moverect,
    .erase = cb_erase,
    .setpenattr = cb_setpenattr,
    .settermprop = cb_settermprop,
    .bell = cb_bell,
    .resize = cb_resize,
};

static void cb_output(const char *s, size_t len, void *user)
{
    vt_t *vt = user;
    if (vt->cb.reply)
        vt->cb.reply(vt->user, s, len);
}

/* ---- scanner hooks ------------------------------------------------------- */

static void scan_feed(void *user, const char *bytes, size_t len)
{
    vt_t *vt = user;
    vterm_input_write(vt->vterm, bytes, len);
}

static void scan_osc(void *user, int number, const char *payload, size_t len)
{
    vt_t *vt = user;
    if (vt->cb.osc)
        vt->cb.osc(vt->user, number, payload, len);
}

static void scan_sgr_extra(void *user, unsigned attrs)
{
    vt_t *vt = user;
    vt->pen_extra = (uint16_t)attrs;
    vt->attrs = vt->pen_vterm | vt->pen_extra;
}

static const vt_scan_ops scan_ops = { scan_feed, scan_osc, scan_sgr_extra };

/* ---- public API ---------------------------------------------------------- */

vt_t *vt_new(int rows, int cols, int scrollback_max, const vt_callbacks *cb, void *user)
{
    if (rows < 1 || cols < 2 || rows > VT_MAX_ROWS || cols > VT_MAX_COLS || scrollback_max < 0)
        return NULL;
    VTerm *term = vterm_new(rows, cols);
    if (!term)
        return NULL;
    vt_t *vt = xcalloc(1, sizeof *vt);
    vt->vterm = term;
    vterm_set_utf8(term, 1);
    vt->state = vterm_obtain_state(term);
    if (cb)
        vt->cb = *cb;
    vt->user = user;
    vt->rows = rows;
    vt->cols = cols;
    vt->sb_max = scrollback_max < VT_MAX_SCROLLBACK ? scrollback_max : VT_MAX_SCROLLBACK;
    vt->comb_last = -1;
    vt->cursor_visible = true;
    grid_alloc(&vt->primary, rows, cols);
    vt->cur = &vt->primary;
    vt->dirty = xmalloc((size_t)rows);
    mark_dirty(vt, 0, rows);
    vt_scan_init(&vt->scan, &scan_ops, vt);
    vterm_output_set_callback(term, cb_output, vt);
    vterm_state_set_callbacks(vt->state, &state_callbacks, vt);
    vterm_state_reset(vt->state, 1);
    return vt;
}

void vt_free(vt_t *vt)
{
    if (!vt)
        return;
    vterm_free(vt->vterm);
    grid_free(&vt->primary, vt->rows);
    grid_free(&vt->alt, vt->rows);
    for (int k = 0; k < vt->sb_cap; k++)
        free(vt->sb[k].cells);
    free(vt->sb);
    free(vt->comb);
    free(vt->title);
    free(vt->dirty);
    vt_scan_free(&vt->scan);
    free(vt);
}

void vt_write(vt_t *vt, const char *bytes, size_t len)
{
    vt_scan_write(&vt->scan, bytes, len);
}

int vt_resize(vt_t *vt, int rows, int cols)
{
    if (rows < 1 || cols < 2 || rows > VT_MAX_ROWS || cols > VT_MAX_COLS)
        return -1;
    if (rows != vt->rows || cols != vt->cols)
        vterm_set_size(vt->vterm, rows, cols);
    return 0;
}

int vt_rows(const vt_t *vt)
{
    return vt->rows;
}

int vt_cols(const vt_t *vt)
{
    return vt->cols;
}

int vt_scrollback_len(const vt_t *vt)
{
    return vt->sb_len;
}

const vt_cell *vt_line(const vt_t *vt, int row, int *len)
{
    if (row >= 0 && row < vt->rows) {
        if (len)
            *len = vt->cols;
        return row_at(vt, row)->cells;
    }
    if (row >= 0 || -row > vt->sb_len)
        return NULL;
    const sb_line *l = &vt->sb[(vt->sb_head + vt->sb_len + row) % vt->sb_cap];
    if (len)
        *len = l->len;
    return l->cells ? l->cells : empty_line;
}

static size_t utf8_put(uint32_t c, char *out)
{
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        c = 0xfffd;
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

size_t vt_cell_text(const vt_t *vt, const vt_cell *cell, char *out)
{
    size_t n = 0;
    if (cell->ch != 0 && cell->ch != VT_CH_WIDE_CONT) {
        n = utf8_put(cell->ch, out);
        if (cell->comb && cell->comb <= vt->comb_len) {
            const comb_entry *e = &vt->comb[cell->comb - 1];
            for (int k = 0; k < e->n; k++)
                n += utf8_put(e->cp[k], out + n);
        }
    }
    out[n] = '\0';
    return n;
}

void vt_cursor(const vt_t *vt, int *row, int *col)
{
    VTermPos p;
    vterm_state_get_cursorpos(vt->state, &p);
    if (p.row < 0)
        p.row = 0;
    if (p.row >= vt->rows)
        p.row = vt->rows - 1;
    if (p.col < 0)
        p.col = 0;
    if (p.col >= vt->cols)
        p.col = vt->cols - 1;
    if (row)
        *row = p.row;
    if (col)
        *col = p.col;
}

unsigned vt_modes(const vt_t *vt)
{
    unsigned m = vt_scan_modes(&vt->scan);
    if (vt->cursor_visible)
        m |= VT_MODE_CURSOR_VISIBLE;
    if (vt->altscreen)
        m |= VT_MODE_ALTSCREEN;
    if (vt->mouse >= VTERM_PROP_MOUSE_CLICK)
        m |= VT_MODE_MOUSE_CLICK;
    if (vt->mouse >= VTERM_PROP_MOUSE_DRAG)
        m |= VT_MODE_MOUSE_DRAG;
    if (vt->mouse >= VTERM_PROP_MOUSE_MOVE)
        m |= VT_MODE_MOUSE_MOVE;
    return m;
}

const char *vt_title(const vt_t *vt)
{
    return vt->title ? vt->title : "";
}

char *vt_text(const vt_t *vt, int first, int last, size_t *len)
{
    buf_t b;
    buf_init(&b);
    if (first < -vt->sb_len)
        first = -vt->sb_len;
    if (last >= vt->rows)
        last = vt->rows - 1;
    for (int row = first; row <= last; row++) {
        int n = 0;
        const vt_cell *cells = vt_line(vt, row, &n);
        size_t keep = b.len; /* end of the line's text without trailing blanks */
        for (int k = 0; cells && k < n; k++) {
            char tmp[VT_CELL_TEXT_MAX];
            if (cells[k].ch == VT_CH_WIDE_CONT)
                continue;
            size_t t = vt_cell_text(vt, &cells[k], tmp);
            if (t == 0 || (t == 1 && tmp[0] == ' ')) {
                buf_putc(&b, ' ');
            } else {
                buf_append(&b, tmp, t);
                keep = b.len;
            }
        }
        b.len = keep;
        buf_putc(&b, '\n');
    }
    if (len)
        *len = b.len;
    return buf_steal(&b);
}

static void put_color(buf_t *b, vt_color c, int base)
{
    uint32_t v = c & 0xffffffu;
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED && v < 8)
        buf_printf(b, ";%u", (unsigned)(base + (int)v));
    else if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED)
        buf_printf(b, ";%d;5;%u", base + 8, (unsigned)v);
    else if (VT_COLOR_KIND(c) == VT_COLOR_KIND_RGB)
        buf_printf(b, ";%d;2;%u;%u;%u", base + 8, (unsigned)(v >> 16), (unsigned)((v >> 8) & 0xff),
                   (unsigned)(v & 0xff));
}

/* The SGR sequence for a complete style, from a reset. */
static void put_sgr(buf_t *b, vt_color fg, vt_color bg, unsigned attrs)
{
    static const struct { unsigned bit; int code; } codes[] = {
        { VT_ATTR_BOLD, 1 }, { VT_ATTR_DIM, 2 }, { VT_ATTR_ITALIC, 3 }, { VT_ATTR_UNDERLINE, 4 },
        { VT_ATTR_BLINK, 5 }, { VT_ATTR_REVERSE, 7 }, { VT_ATTR_CONCEAL, 8 }, { VT_ATTR_STRIKE, 9 },
    };
    buf_puts(b, "\033[0");
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
        if (attrs & codes[k].bit)
            buf_printf(b, ";%d", codes[k].code);
    put_color(b, fg, 30);
    put_color(b, bg, 40);
    buf_putc(b, 'm');
}

typedef struct style {
    vt_color fg, bg;
    unsigned attrs;
} style;

static void set_style(buf_t *b, style *cur, vt_color fg, vt_color bg, unsigned attrs)
{
    if (cur->fg == fg && cur->bg == bg && cur->attrs == attrs)
        return;
    put_sgr(b, fg, bg, attrs);
    *cur = (style){ fg, bg, attrs };
}

/* One visible row: runs of default blanks are skipped with CUF, coloured
 * blanks are made with ECH (which keeps them blank, unlike spaces). */
static void redraw_row(const vt_t *vt, buf_t *b, style *st, int row)
{
    const vt_row *r = row_at(vt, row);
    int end = r->used;
    while (end > 0 && is_default_blank(&r->cells[end - 1]))
        end--;
    if (end == 0)
        return;
    buf_printf(b, "\033[%d;1H", row + 1);
    for (int col = 0; col < end;) {
        const vt_cell *c = &r->cells[col];
        if (c->ch == 0) {
            int k = col;
            while (k < end && r->cells[k].ch == 0 && r->cells[k].bg == c->bg)
                k++;
            if (c->bg != VT_COLOR_DEFAULT) {
                set_style(b, st, VT_COLOR_DEFAULT, c->bg, 0);
                buf_printf(b, "\033[%dX", k - col);
            }
            if (k < end)
                buf_printf(b, "\033[%dC", k - col);
            col = k;
        } else if (c->ch == VT_CH_WIDE_CONT) {
            col++;
        } else {
            char tmp[VT_CELL_TEXT_MAX];
            set_style(b, st, c->fg, c->bg, c->attrs);
            buf_append(b, tmp, vt_cell_text(vt, c, tmp));
            col += c->width;
        }
    }
}

char *vt_redraw_bytes(const vt_t *vt, size_t *len)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "\033[0m\033[H\033[2J");
    style st = { VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0 };
    for (int row = 0; row < vt->rows; row++)
        redraw_row(vt, &b, &st, row);
    set_style(&b, &st, vt->fg, vt->bg, vt->attrs);
    int crow, ccol;
    vt_cursor(vt, &crow, &ccol);
    buf_printf(&b, "\033[%d;%dH\033[?25%c", crow + 1, ccol + 1, vt->cursor_visible ? 'h' : 'l');
    if (len)
        *len = b.len;
    return buf_steal(&b);
}

bool vt_row_dirty(const vt_t *vt, int row)
{
    return row >= 0 && row < vt->rows && vt->dirty[row];
}

void vt_clear_damage(vt_t *vt)
{
    memset(vt->dirty, 0, (size_t)vt->rows);
}
