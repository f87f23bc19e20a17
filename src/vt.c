/*
 * vt.c - the terminal model on libvterm's VTermState layer.
 *
 * libvterm parses the stream and keeps the terminal's state (cursor, pen,
 * modes, scroll region); it tells us what changes through VTermState
 * callbacks and we keep the cells.  (Its VTermScreen layer would keep them
 * for us, but copies the whole screen for every scrolled line.)
 *
 * The cells live in vt_grid.c: visible rows in a ring of row pointers, so
 * a full-screen scroll by one line advances the ring, hands the departing
 * row to the history and blanks it as the new bottom row, O(used cells)
 * instead of O(rows x cols).  Scrolls of a full-width region rotate row
 * structs in place; anything narrower is declined, and libvterm falls back
 * to moverect + erase.  The alternate screen is a second grid, allocated
 * while it is shown, that never feeds the history.
 *
 * libvterm 0.1.4 reports neither dim nor conceal and hides the DEC modes a
 * client needs; vt_scan tracks those (and keeps escape strings whole, see
 * vt_scan.h).
 */
#include "config.h"

#include "vt.h"

#include "util.h"
#include "vt_grid.h"
#include "vt_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

#define VT_MAX_ROWS 1000
#define VT_MAX_COLS 2000
#define VT_MAX_SCROLLBACK 1000000
#define VT_TITLE_MAX 256

struct vt {
    VTerm *vterm;
    VTermState *state;
    vt_callbacks cb;
    void *user;
    int rows, cols;
    vt_grid primary, alt; /* alt.rows is NULL unless it is shown */
    vt_grid *cur;         /* the grid on show */
    bool altscreen;
    uint8_t *dirty; /* per visible row */

    vt_color fg, bg;    /* the pen */
    uint16_t pen_vterm; /* attributes libvterm reports */
    uint16_t pen_extra; /* dim, conceal from the scanner */
    uint16_t attrs;     /* both */

    vt_history hist;
    vt_comb_table comb;

    char *title;
    bool cursor_visible;
    uint32_t last_ch;  /* the last glyph written, for REP */
    uint8_t last_comb;
    bool pending_wrap; /* the last glyph ended in the last column ... */
    VTermPos wrap_pos; /* ... here, and the cursor has not left it */
    int mouse; /* VTERM_PROP_MOUSE_* */
    vt_scan scan;
};

static const vt_cell empty_line[1] = { { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 } };

static inline vt_row *row_at(const vt_t *vt, int r)
{
    return vt_grid_row(vt->cur, r);
}

static void mark_dirty(vt_t *vt, int first, int end)
{
    if (end > first)
        memset(vt->dirty + first, 1, (size_t)(end - first));
}

/* ---- libvterm state callbacks -------------------------------------------- */

/* A glyph in the pen's colours; halves of wide characters it breaks go. */
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
    c->comb = info->chars[0] && info->chars[1] ? vt_comb_intern(&vt->comb, info->chars + 1) : 0;
    if (w == 2) {
        c[1] = *c;
        c[1].ch = VT_CH_WIDE_CONT;
        c[1].width = 1;
        c[1].comb = 0;
    }
    if (!clean) {
        vt_grid_repair(r, pos.col, cols);
        vt_grid_repair(r, pos.col + w, cols);
    }
    if (pos.col + w > r->used)
        r->used = pos.col + w;
    vt->dirty[pos.row] = 1;
    vt->pending_wrap = pos.col + w == cols;
    vt->wrap_pos = pos;
    vt->last_ch = c->ch;
    vt->last_comb = c->comb;
    return 1;
}

/* After a glyph in the last column the cursor stays on it, waiting to wrap;
 * libvterm reports that position once, and any move elsewhere ends the wait.
 * (A cursor command to the very same cell also ends it, unseen: libvterm
 * does not report a move that goes nowhere.) */
static int cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user)
{
    vt_t *vt = user;
    if (pos.row != vt->wrap_pos.row || pos.col != vt->wrap_pos.col)
        vt->pending_wrap = false;
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

/* Erase in the pen's background, as xterm does (BCE). */
static int cb_erase(VTermRect rect, int selective, void *user)
{
    vt_t *vt = user;
    if (!clip(vt, &rect))
        return 1;
    for (int row = rect.start_row; row < rect.end_row; row++)
        vt_grid_erase(row_at(vt, row), rect.start_col, rect.end_col, vt->cols, vt->bg); /* BCE */
    mark_dirty(vt, rect.start_row, rect.end_row);
    return 1;
}

/* Cells moving within rows (ICH, DCH, narrow regions); rows are walked so
 * that overlapping rects copy correctly. */
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
        vt_grid_repair(d, dest.start_col, vt->cols);
        vt_grid_repair(d, dest.end_col, vt->cols);
    }
    mark_dirty(vt, dest.start_row, dest.end_row);
    return 1;
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
        /* Lines leave for history when the cursor is at the bottom (line
         * feed, SU there); deleting lines elsewhere (DL) loses them. */
        VTermPos cur;
        vterm_state_get_cursorpos(vt->state, &cur);
        bool keep = !vt->altscreen && downward > 0 && cur.row == vt->rows - 1;
        for (int k = 0; k < n; k++) {
            if (downward > 0) {
                vt_row *r = row_at(vt, 0);
                if (keep)
                    vt_history_push(&vt->hist, r);
                vt_grid_blank_row(r, vt->cols, vt->bg);
                g->top = g->top + 1 == vt->rows ? 0 : g->top + 1;
            } else {
                g->top = g->top == 0 ? vt->rows - 1 : g->top - 1;
                vt_grid_blank_row(row_at(vt, 0), vt->cols, vt->bg);
            }
        }
    } else {
        int s = rect.start_row, e = rect.end_row;
        vt_grid_rotate(g, s, e, downward > 0 ? n : h - n);
        int b0 = downward > 0 ? e - n : s;
        for (int k = 0; k < n; k++)
            vt_grid_blank_row(row_at(vt, b0 + k), vt->cols, vt->bg);
    }
    mark_dirty(vt, rect.start_row, rect.end_row);
    return 1;
}

/* libvterm's colour as ours: default, indexed and RGB stay what they are. */
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

/* The pen cells are written with; dim and conceal come from the scanner. */
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
        vt_grid_init(&vt->alt, vt->rows, vt->cols);
        vt->cur = &vt->alt;
    } else {
        vt->cur = &vt->primary;
        vt_grid_free(&vt->alt);
    }
    vt->altscreen = on;
    mark_dirty(vt, 0, vt->rows);
}

/* Titles come from the session: sanitised and cut before anyone sees them. */
static void set_title(vt_t *vt, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    free(vt->title);
    vt->title = sanitize_text(s, len, VT_TITLE_MAX);
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

/* Only a reset (RIS, DECSTR) starts a new pen; libvterm then reports every
 * property but the mouse mode, which it turns off too. */
static int cb_initpen(void *user)
{
    vt_t *vt = user;
    vt->mouse = VTERM_PROP_MOUSE_NONE;
    return 1;
}

static int cb_bell(void *user)
{
    vt_t *vt = user;
    if (vt->cb.bell)
        vt->cb.bell(vt->user);
    return 1;
}

/* The grid on show keeps the cursor's line visible (rows above it go to
 * history, and come back when the screen grows); the primary grid behind
 * the alternate screen is only cut or padded. */
static int cb_resize(int rows, int cols, VTermPos *delta, void *user)
{
    vt_t *vt = user;
    VTermPos cur;
    vterm_state_get_cursorpos(vt->state, &cur);
    int moved = vt_grid_resize(vt->cur, rows, cols, cur.row, vt->altscreen ? NULL : &vt->hist);
    if (vt->altscreen)
        vt_grid_resize(&vt->primary, rows, cols, -1, NULL);
    vt->rows = rows;
    vt->cols = cols;
    vt->pending_wrap = false;
    free(vt->dirty);
    vt->dirty = xmalloc((size_t)rows);
    mark_dirty(vt, 0, rows);
    delta->row += moved;
    return 1;
}

static const VTermStateCallbacks state_callbacks = {
    .putglyph = cb_putglyph,
    .movecursor = cb_movecursor,
    .scrollrect = cb_scrollrect,
    .moverect = cb_moverect,
    .erase = cb_erase,
    .initpen = cb_initpen,
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

/* What the scanner lets through goes to libvterm. */
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

/* REP: the last glyph written, again, as text (wrapping like xterm), at
 * most a screenful. */
static void scan_rep(void *user, unsigned count)
{
    vt_t *vt = user;
    if (!vt->last_ch)
        return;
    vt_cell last = { vt->last_ch, 0, 0, 0, 1, vt->last_comb };
    char one[VT_CELL_TEXT_MAX], buf[4096];
    size_t n = vt_cell_text(vt, &last, one), used = 0;
    if (count > (unsigned)(vt->rows * vt->cols))
        count = (unsigned)(vt->rows * vt->cols);
    for (unsigned k = 0; k < count; k++) {
        if (used + n > sizeof buf) {
            vterm_input_write(vt->vterm, buf, used);
            used = 0;
        }
        memcpy(buf + used, one, n);
        used += n;
    }
    vterm_input_write(vt->vterm, buf, used);
}

static const vt_scan_ops scan_ops = { scan_feed, scan_osc, scan_sgr_extra, scan_rep };

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
    vt_history_init(&vt->hist, scrollback_max < VT_MAX_SCROLLBACK ? scrollback_max : VT_MAX_SCROLLBACK);
    vt_comb_init(&vt->comb);
    vt->cursor_visible = true;
    vt_grid_init(&vt->primary, rows, cols);
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
    vt_grid_free(&vt->primary);
    vt_grid_free(&vt->alt);
    vt_history_free(&vt->hist);
    vt_comb_free(&vt->comb);
    free(vt->title);
    free(vt->dirty);
    vt_scan_free(&vt->scan);
    free(vt);
}

void vt_write(vt_t *vt, const char *bytes, size_t len)
{
    vt_scan_write(&vt->scan, bytes, len);
}

/* libvterm 0.1.4's resize keeps the scroll region and the saved cursor as
 * they were, and the next scroll or DECRC past the new size writes outside
 * its line array.  Like xterm and tmux we reset the region after a resize,
 * and after a shrink the saved cursor becomes the current position. */
int vt_resize(vt_t *vt, int rows, int cols)
{
    if (rows < 1 || cols < 2 || rows > VT_MAX_ROWS || cols > VT_MAX_COLS)
        return -1;
    if (rows == vt->rows && cols == vt->cols)
        return 0;
    bool shrink = rows < vt->rows || cols < vt->cols;
    vterm_set_size(vt->vterm, rows, cols);
    VTermPos p;
    vterm_state_get_cursorpos(vt->state, &p);
    char fix[48];
    int n = snprintf(fix, sizeof fix, "\033[r\033[%d;%dH%s", p.row + 1, p.col + 1, shrink ? "\0337" : "");
    vterm_input_write(vt->vterm, fix, (size_t)n);
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
    return vt->hist.len;
}

const vt_cell *vt_line(const vt_t *vt, int row, int *len)
{
    if (row >= 0 && row < vt->rows) {
        if (len)
            *len = vt->cols;
        return row_at(vt, row)->cells;
    }
    const vt_hist_line *l = row < 0 ? vt_history_line(&vt->hist, -row) : NULL;
    if (!l)
        return NULL;
    if (len)
        *len = l->len;
    return l->cells ? l->cells : empty_line;
}

size_t vt_cell_text(const vt_t *vt, const vt_cell *cell, char *out)
{
    size_t n = 0;
    if (cell->ch != 0 && cell->ch != VT_CH_WIDE_CONT) {
        n = utf8_put_scalar(cell->ch, out);
        const vt_comb_entry *e = vt_comb_get(&vt->comb, cell->comb);
        for (int k = 0; e && k < e->n; k++)
            n += utf8_put_scalar(e->cp[k], out + n);
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
    if (first < -vt->hist.len)
        first = -vt->hist.len;
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

/* SGR parameters for a colour; returns how many. */
static int color_params(vt_color c, int base, unsigned out[5])
{
    uint32_t v = c & 0xffffffu;
    switch (VT_COLOR_KIND(c)) {
    case VT_COLOR_KIND_INDEXED:
        if (v < 8) {
            out[0] = (unsigned)base + v;
            return 1;
        }
        out[0] = (unsigned)base + 8;
        out[1] = 5;
        out[2] = v;
        return 3;
    case VT_COLOR_KIND_RGB:
        out[0] = (unsigned)base + 8;
        out[1] = 2;
        out[2] = v >> 16;
        out[3] = (v >> 8) & 0xff;
        out[4] = v & 0xff;
        return 5;
    default:
        return 0;
    }
}

/* The SGR for a complete style from a reset, in sequences of at most 16
 * parameters (what libvterm and st can take). */
static void put_sgr(buf_t *b, vt_color fg, vt_color bg, unsigned attrs)
{
    static const struct { unsigned bit; unsigned code; } codes[] = {
        { VT_ATTR_BOLD, 1 }, { VT_ATTR_DIM, 2 }, { VT_ATTR_ITALIC, 3 }, { VT_ATTR_UNDERLINE, 4 },
        { VT_ATTR_BLINK, 5 }, { VT_ATTR_REVERSE, 7 }, { VT_ATTR_CONCEAL, 8 }, { VT_ATTR_STRIKE, 9 },
    };
    unsigned p[20];
    int n = 0, split;
    p[n++] = 0;
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
        if (attrs & codes[k].bit)
            p[n++] = codes[k].code;
    split = n;
    n += color_params(fg, 30, p + n);
    n += color_params(bg, 40, p + n);
    if (n <= 16)
        split = n;
    buf_puts(b, "\033[");
    for (int k = 0; k < n; k++) {
        if (k == split)
            buf_puts(b, "m\033[");
        else if (k > 0)
            buf_putc(b, ';');
        buf_printf(b, "%u", p[k]);
    }
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

/* Cells [0, end) from the cursor on: runs of default blanks are skipped
 * with CUF, coloured blanks are made with ECH (which keeps them blank,
 * unlike spaces). */
static void put_cells(const vt_t *vt, buf_t *b, style *st, const vt_cell *cells, int end)
{
    for (int col = 0; col < end;) {
        const vt_cell *c = &cells[col];
        if (c->ch == 0) {
            int k = col;
            while (k < end && cells[k].ch == 0 && cells[k].bg == c->bg)
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

/* Every non-blank row of grid g, each placed with CUP. */
static void redraw_grid(const vt_t *vt, const vt_grid *g, buf_t *b, style *st)
{
    for (int row = 0; row < vt->rows; row++) {
        const vt_row *r = vt_grid_row(g, row);
        int end = vt_grid_trimmed(r);
        if (end == 0)
            continue;
        buf_printf(b, "\033[%d;1H", row + 1);
        put_cells(vt, b, st, r->cells, end);
    }
}

/* Leave the cursor waiting to wrap, as it is after a glyph in the last
 * column: write that glyph again, or, if it was erased since, a glyph that
 * ECH then erases (ECH keeps the wait). */
static void redraw_pending_wrap(const vt_t *vt, buf_t *b, style *st, int row, int col)
{
    const vt_cell *c = &row_at(vt, row)->cells[col];
    buf_printf(b, "\033[%d;%dH", row + 1, col + 1);
    if (c->ch && c->ch != VT_CH_WIDE_CONT && col + c->width == vt->cols) {
        char tmp[VT_CELL_TEXT_MAX];
        set_style(b, st, c->fg, c->bg, c->attrs);
        buf_append(b, tmp, vt_cell_text(vt, c, tmp));
        return;
    }
    if (col + 1 < vt->cols) { /* an erased wide glyph: U+3000 is wide */
        set_style(b, st, VT_COLOR_DEFAULT, c[1].bg, 0);
        buf_puts(b, "\xe3\x80\x80");
    } else {
        set_style(b, st, VT_COLOR_DEFAULT, c->bg, 0);
        buf_putc(b, ' ');
    }
    set_style(b, st, VT_COLOR_DEFAULT, c->bg, 0);
    buf_puts(b, "\033[X");
}

/* The cursor (with a pending wrap), the pen and the cursor's visibility. */
static void redraw_cursor_and_pen(const vt_t *vt, buf_t *b, style *st)
{
    int crow, ccol;
    vt_cursor(vt, &crow, &ccol);
    if (vt->pending_wrap && crow == vt->wrap_pos.row && ccol == vt->wrap_pos.col)
        redraw_pending_wrap(vt, b, st, crow, ccol);
    else
        buf_printf(b, "\033[%d;%dH", crow + 1, ccol + 1);
    set_style(b, st, vt->fg, vt->bg, vt->attrs);
    buf_printf(b, "\033[?25%c", vt->cursor_visible ? 'h' : 'l');
}

char *vt_redraw_bytes(const vt_t *vt, size_t *len)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "\033[0m\033[H\033[2J");
    style st = { VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0 };
    redraw_grid(vt, vt->cur, &b, &st);
    redraw_cursor_and_pen(vt, &b, &st);
    if (len)
        *len = b.len;
    return buf_steal(&b);
}

/* History lines go through the bottom of a fresh screen: each is written
 * and ended with CRLF, then enough line feeds at the bottom row push the
 * last of them off the top, leaving a blank screen. */
static void sync_history(const vt_t *vt, buf_t *b, style *st, int max_history)
{
    int n = vt->hist.len < max_history ? vt->hist.len : max_history;
    for (int k = n; k >= 1; k--) {
        const vt_hist_line *l = vt_history_line(&vt->hist, k);
        if (l && l->cells)
            put_cells(vt, b, st, l->cells, l->len);
        set_style(b, st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
        buf_puts(b, "\r\n");
    }
    if (n == 0)
        return;
    buf_printf(b, "\033[%d;1H", vt->rows);
    for (int k = 0; k < (n < vt->rows - 1 ? n : vt->rows - 1); k++)
        buf_putc(b, '\n');
}

/* Modes that change how keys and the mouse are encoded. */
static void sync_modes(const vt_t *vt, buf_t *b)
{
    unsigned m = vt_modes(vt);
    if (m & VT_MODE_APP_CURSOR)
        buf_puts(b, "\033[?1h");
    if (m & VT_MODE_APP_KEYPAD)
        buf_puts(b, "\033=");
    if (m & VT_MODE_BRACKETED_PASTE)
        buf_puts(b, "\033[?2004h");
    if (m & VT_MODE_MOUSE_MOVE)
        buf_puts(b, "\033[?1003h");
    else if (m & VT_MODE_MOUSE_DRAG)
        buf_puts(b, "\033[?1002h");
    else if (m & VT_MODE_MOUSE_CLICK)
        buf_puts(b, "\033[?1000h");
    if (m & VT_MODE_MOUSE_SGR)
        buf_puts(b, "\033[?1006h");
}

char *vt_sync_bytes(const vt_t *vt, int max_history, size_t *len)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "\033[0m\033[H\033[2J");
    style st = { VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0 };
    sync_history(vt, &b, &st, max_history < 0 ? 0 : max_history);
    redraw_grid(vt, &vt->primary, &b, &st);
    if (vt->altscreen) {
        set_style(&b, &st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
        buf_puts(&b, "\033[?1049h");
        redraw_grid(vt, &vt->alt, &b, &st);
    }
    redraw_cursor_and_pen(vt, &b, &st);
    sync_modes(vt, &b);
    if (vt->title && vt->title[0])
        buf_printf(&b, "\033]2;%s\a", vt->title);
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
