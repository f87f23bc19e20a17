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
 * while it is shown, that never feeds the history.  A row remembers that
 * autowrap carried its text on to the next one, so that a change of width
 * joins and wraps such lines again (vt_reflow.c).
 *
 * Where libvterm 0.1.4 is not xterm, the scanner in front of it (vt_scan.c)
 * hands us what we do instead of it:
 *   - a character whose width libvterm gets wrong (width.h is the width)
 *     is written as a stand-in that libvterm places at the right width, a
 *     code point nobody writes because it is itself always written as a
 *     stand-in; the glyph callback puts the real character in the cell;
 *   - a combining mark goes on the character still in the cell of the
 *     last glyph, keeping its rendition (libvterm would write its own idea
 *     of that glyph again, erased or not, in the current pen);
 *   - saving and restoring the cursor is ours, one saved cursor per screen
 *     with the pen, origin mode and character sets (libvterm keeps one,
 *     shared, without the sets, and restores a never-saved one as black on
 *     black); a restore is carried out by feeding libvterm the SGR, CUP,
 *     designations and modes that make its state the saved one;
 *   - the alternate screen modes (47, 1047, 1049), RIS, DECSTR, DECALN and
 *     the queries DECRQM (for those modes) and DECRQSS (SGR);
 *   - the end of a wait to wrap that ED, EL, ECH, ICH and DCH bring in
 *     xterm and not in libvterm.
 * (vt_ops.c carries these out.)  libvterm 0.1.4 reports neither dim nor
 * conceal and hides the DEC modes a client needs; vt_scan tracks those
 * (and keeps escape strings whole, see vt_scan.h).  vt_bytes.c makes the
 * byte streams that recreate the model.
 */
#include "config.h"

#include "vt/vt.h"

#include "base/util.h"
#include "vt/vt_int.h"
#include "vt/vt_reflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VT_MAX_ROWS 1000
#define VT_MAX_COLS 2000
#define VT_MAX_SCROLLBACK 1000000
#define VT_TITLE_MAX 256

static const vt_cell empty_line[1] = { { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 } };

void vt_mark_dirty(vt_t *vt, int first, int end)
{
    if (end > first)
        memset(vt->dirty + first, 1, (size_t)(end - first));
}

/* Bytes straight to libvterm, past the scanner. */
void vt_vterm_feed(vt_t *vt, const char *bytes, size_t len)
{
    vterm_input_write(vt->vterm, bytes, len);
}

/* ---- libvterm state callbacks -------------------------------------------- */

static bool is_standin(uint32_t c)
{
    return c == STANDIN_WIDE || c == STANDIN_NARROW;
}

/* The character of a glyph as it really is: a stand-in is the character
 * it stands for (the one being written); anything no character is is
 * U+FFFD.  (libvterm's glyphs are one character each: every mark goes to
 * the model, which puts it on its cell itself, vt_ops.c.) */
static uint32_t real_char(vt_t *vt, uint32_t c)
{
    if (is_standin(c)) {
        c = vt->standin_pending ? vt->standin_for : 0xFFFD;
        vt->standin_pending = false;
    } else if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        c = 0xFFFD;
    }
    return c;
}

/* Autowrap carried the text from the row above onto this glyph's row. */
static void note_wrap(vt_t *vt, VTermPos pos)
{
    if (pos.row > 0) {
        vt_row_at(vt, pos.row - 1)->wrapped = true;
    } else if (vt->pushes != vt->next_pushes && vt->hist.len > 0) { /* it scrolled into history */
        vt_hist_line *l = (vt_hist_line *)vt_history_line(&vt->hist, 1);
        l->wrapped = true;
    }
}

/* Any glyph (stand-ins, wide characters, cells of a wide character it
 * breaks), in the pen's colours; halves of wide characters it breaks go.
 * Kept out of cb_putglyph so that the commonest glyph does not pay for
 * its stack frame. */
__attribute__((noinline)) static int put_glyph(vt_t *vt, const VTermGlyphInfo *info, VTermPos pos)
{
    int cols = vt->cols;
    /* A glyph of no width (the scanner lets none through: marks go to
     * vt_ops.c) has no cell of its own, and goes. */
    if (info->width == 0)
        return 1;
    uint32_t ch = real_char(vt, info->chars[0]);
    vt_row *r = vt_row_at(vt, pos.row);
    vt_cell *c = r->cells + pos.col;
    int w = info->width == 2 && pos.col + 1 < cols ? 2 : 1;
    /* A glyph that did not fit where the cursor was went to the start of
     * the next row: autowrap. */
    if (pos.col == 0 && vt->next_col + w > cols)
        note_wrap(vt, pos);
    vt->next_row = pos.row;
    vt->next_col = pos.col + w;
    vt->next_pushes = vt->pushes;
    bool clean = c->width == 1 && c->ch != VT_CH_WIDE_CONT &&
                 (w == 1 || (c[1].width == 1 && c[1].ch != VT_CH_WIDE_CONT));
    *c = vt->pen;
    c->ch = ch;
    c->width = (uint8_t)w;
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
    vt->pending_wrap = pos.col + w == cols && !(vt->scan.dec & VT_SCAN_NOWRAP);
    vt->wrap_pos = pos;
    vt->glyph_last = true;
    vt->last_ch = ch;
    vt->last_comb = 0;
    return 1;
}

/* The glyph callback.  Most glyphs are one character of one column that
 * libvterm has as it is (no stand-in), written over a cell that holds no
 * part of a wide character, before the last column and not where autowrap
 * took the cursor: such a glyph is the pen's cell with its character, and
 * the bookkeeping put_glyph would do for it is done here directly,
 * without its call and stack frame.  Every other glyph goes to
 * put_glyph. */
static int cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *user)
{
    vt_t *vt = user;
    uint32_t ch = info->chars[0];
    int cols = vt->cols;
    if ((unsigned)pos.row >= (unsigned)vt->rows || (unsigned)pos.col >= (unsigned)cols)
        return 1;
    vt_row *r = vt_row_at(vt, pos.row);
    vt_cell *c = r->cells + pos.col;
    /* there is no stand-in below the surrogates */
    if (info->width != 1 || ch >= 0xD800 || c->width != 1 || c->ch == VT_CH_WIDE_CONT || pos.col + 1 == cols ||
        (pos.col == 0 && vt->next_col >= cols))
        return put_glyph(vt, info, pos);
    vt->next_row = pos.row;
    vt->next_col = pos.col + 1;
    vt->next_pushes = vt->pushes;
    *c = vt->pen;
    c->ch = ch;
    if (pos.col >= r->used)
        r->used = pos.col + 1;
    vt->dirty[pos.row] = 1;
    vt->pending_wrap = false; /* not in the last column */
    vt->wrap_pos = pos;
    vt->glyph_last = true;
    vt->last_ch = ch;
    vt->last_comb = 0;
    return 1;
}

/* After a glyph in the last column the cursor stays on it, waiting to wrap;
 * libvterm reports that position once, and any move elsewhere ends the wait.
 * (A cursor command to the very same cell also ends it, unseen: libvterm
 * does not report a move that goes nowhere.) */
int vt_cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user)
{
    vt_t *vt = user;
    if (pos.row != vt->wrap_pos.row || pos.col != vt->wrap_pos.col)
        vt->pending_wrap = false;
    /* libvterm reports where a glyph left the cursor; a move elsewhere
     * leaves a mark nothing to go on. */
    if (!vt->pending_wrap && (pos.row != vt->next_row || pos.col != vt->next_col))
        vt->glyph_last = false;
    if (!vt->pending_wrap) {
        vt->next_row = pos.row;
        vt->next_col = pos.col;
        vt->next_pushes = vt->pushes;
    }
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

/* Erase in the pen's background, as xterm does (BCE).  Whole rows erased
 * end the wrap of the row above them, and their own. */
static int cb_erase(VTermRect rect, int selective, void *user)
{
    vt_t *vt = user;
    if (!clip(vt, &rect))
        return 1;
    bool whole = rect.start_col == 0 && rect.end_col == vt->cols;
    for (int row = rect.start_row; row < rect.end_row; row++) {
        vt_row *r = vt_row_at(vt, row);
        vt_grid_erase(r, rect.start_col, rect.end_col, vt->cols, vt->pen.bg); /* BCE */
        if (whole)
            r->wrapped = false;
    }
    if (whole && rect.start_row > 0)
        vt_row_at(vt, rect.start_row - 1)->wrapped = false;
    vt_mark_dirty(vt, rect.start_row, rect.end_row);
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
        vt_row *d = vt_row_at(vt, dest.start_row + i);
        const vt_row *s = vt_row_at(vt, src.start_row + i);
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
    vt_mark_dirty(vt, dest.start_row, dest.end_row);
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
                vt_row *r = vt_row_at(vt, 0);
                if (keep) {
                    vt_history_push(&vt->hist, r);
                    vt->pushes++;
                }
                vt_grid_blank_row(r, vt->cols, vt->pen.bg);
                g->top = g->top + 1 == vt->rows ? 0 : g->top + 1;
            } else {
                g->top = g->top == 0 ? vt->rows - 1 : g->top - 1;
                vt_grid_blank_row(vt_row_at(vt, 0), vt->cols, vt->pen.bg);
            }
        }
    } else {
        int s = rect.start_row, e = rect.end_row;
        vt_grid_rotate(g, s, e, downward > 0 ? n : h - n);
        int b0 = downward > 0 ? e - n : s;
        for (int k = 0; k < n; k++)
            vt_grid_blank_row(vt_row_at(vt, b0 + k), vt->cols, vt->pen.bg);
        if (s > 0) /* the row above no longer goes on in the first */
            vt_row_at(vt, s - 1)->wrapped = false;
    }
    /* The last row that moved no longer goes on in the row after it. */
    int last = downward > 0 ? rect.end_row - n - 1 : rect.end_row - 1;
    if (last >= rect.start_row)
        vt_row_at(vt, last)->wrapped = false;
    vt_mark_dirty(vt, rect.start_row, rect.end_row);
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
    case VTERM_ATTR_FOREGROUND: vt->pen.fg = color_of(&val->color, VTERM_COLOR_DEFAULT_FG); break;
    case VTERM_ATTR_BACKGROUND: vt->pen.bg = color_of(&val->color, VTERM_COLOR_DEFAULT_BG); break;
    default: break;
    }
    vt->pen.attrs = vt->pen_vterm | vt->pen_extra;
    return 1;
}

/* Show the alternate grid (fresh) or go back to the untouched primary;
 * the alternate screen's saved cursor goes with it. */
void vt_set_altscreen(vt_t *vt, bool on)
{
    if (on == vt->altscreen)
        return;
    if (on) {
        vt_grid_init(&vt->alt, vt->rows, vt->cols);
        vt->cur = &vt->alt;
    } else {
        vt->cur = &vt->primary;
        vt_grid_free(&vt->alt);
        vt->saved[1].valid = false;
    }
    vt->altscreen = on;
    vt->glyph_last = false;
    vt_mark_dirty(vt, 0, vt->rows);
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
    case VTERM_PROP_ALTSCREEN: vt_set_altscreen(vt, val->boolean); break;
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

/* A saved cursor as a mark for the reflow, and back (a saved column of
 * cols is a cursor that waited to wrap). */
static vt_reflow_mark mark_of_saved(const vt_t *vt, const vt_saved *s)
{
    return (vt_reflow_mark){ s->valid, s->col >= vt->cols, s->row, s->col };
}

static void saved_from_mark(vt_saved *s, const vt_reflow_mark *m, int cols)
{
    if (!m->set)
        return;
    s->row = m->row < 0 ? 0 : m->row;
    s->col = m->pending ? cols : m->col;
}

static void clamp_saved(vt_saved *s, int rows, int cols)
{
    if (s->row >= rows)
        s->row = rows - 1;
    if (s->col > cols)
        s->col = cols;
}

/* A new size.  A new width reflows the primary screen and its history
 * (vt_reflow.c): the live cursor stays on its character, and so does a
 * saved one.  Behind the alternate screen the primary is reflowed too, its
 * cursor being the one saved on entering; the alternate screen itself is
 * only cut or padded, as in tmux.  A new height alone keeps the cursor's
 * line on screen: the rows above it go to history, and history lines come
 * back when the screen grows.  The cursor's place is left for vt_resize. */
static int cb_resize(int rows, int cols, VTermPos *delta, void *user)
{
    vt_t *vt = user;
    VTermPos cur;
    vterm_state_get_cursorpos(vt->state, &cur);
    bool pending = vt->pending_wrap && cur.row == vt->wrap_pos.row && cur.col == vt->wrap_pos.col;
    vt->resize_pending = false;
    vt->glyph_last = false;
    if (!vt->altscreen && cols != vt->cols) {
        vt_reflow_mark m[2] = { { true, pending, cur.row, cur.col }, mark_of_saved(vt, &vt->saved[0]) };
        vt_reflow(&vt->primary, &vt->hist, rows, cols, m, 2);
        vt->resize_row = m[0].row;
        vt->resize_col = m[0].col;
        vt->resize_pending = m[0].pending;
        saved_from_mark(&vt->saved[0], &m[1], cols);
    } else if (!vt->altscreen) {
        int moved = vt_grid_resize(&vt->primary, rows, cols, cur.row, &vt->hist);
        vt->resize_row = cur.row + moved;
        vt->resize_col = cur.col;
        vt->saved[0].row += moved;
        if (vt->saved[0].row < 0)
            vt->saved[0].row = 0;
    } else {
        vt_reflow_mark m[1] = { mark_of_saved(vt, &vt->saved[0]) };
        vt_reflow(&vt->primary, &vt->hist, rows, cols, m, 1);
        saved_from_mark(&vt->saved[0], &m[0], cols);
        int moved = vt_grid_resize(&vt->alt, rows, cols, cur.row, NULL);
        vt->resize_row = cur.row + moved;
        vt->resize_col = cur.col;
        vt->saved[1].row += moved;
        if (vt->saved[1].row < 0)
            vt->saved[1].row = 0;
    }
    if (vt->resize_row >= rows)
        vt->resize_row = rows - 1;
    if (vt->resize_row < 0)
        vt->resize_row = 0;
    if (vt->resize_col >= cols)
        vt->resize_col = cols - 1;
    clamp_saved(&vt->saved[0], rows, cols);
    clamp_saved(&vt->saved[1], rows, cols);
    vt->rows = rows;
    vt->cols = cols;
    vt->pending_wrap = false;
    free(vt->dirty);
    vt->dirty = xmalloc((size_t)rows);
    vt_mark_dirty(vt, 0, rows);
    (void)delta;
    return 1;
}

static const VTermStateCallbacks state_callbacks = {
    .putglyph = cb_putglyph,
    .movecursor = vt_cb_movecursor,
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
    if (vt->capture)
        buf_append(vt->capture, s, len);
    else if (vt->cb.reply)
        vt->cb.reply(vt->user, s, len);
}

/* libvterm's answer to a DECRQSS for margins: "DCS 1 $ r A ; B F ST". */
static void ask_margins(struct vt *vt, const char *request, int *a, int *b, int dflt_b)
{
    buf_t out;
    buf_init(&out);
    vt->capture = &out;
    vterm_input_write(vt->vterm, request, strlen(request));
    vt->capture = NULL;
    buf_putc(&out, '\0');
    *a = 1;
    *b = dflt_b;
    const char *p = strstr(out.data, "1$r");
    if (p && sscanf(p + 3, "%d;%d", a, b) != 2) {
        *a = 1;
        *b = dflt_b;
    }
    buf_free(&out);
}

void vt_margins(const vt_t *vt, int *top, int *bottom, int *left, int *right)
{
    /* Asking changes nothing in libvterm. */
    struct vt *m = (struct vt *)vt;
    ask_margins(m, "\033P$qr\033\\", top, bottom, vt->rows);
    ask_margins(m, "\033P$qs\033\\", left, right, vt->cols);
}

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
    vt->pen = (vt_cell){ 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };
    vt_charsets_reset(&vt->saved[0].cs);
    vt_charsets_reset(&vt->saved[1].cs);
    vt_grid_init(&vt->primary, rows, cols);
    vt->cur = &vt->primary;
    vt->dirty = xmalloc((size_t)rows);
    vt_mark_dirty(vt, 0, rows);
    vt_scan_init(&vt->scan, &vt_model_ops, vt);
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
 * and libvterm's own saved cursor (ours are in vt->saved) is made the
 * current position.  The cursor goes where cb_resize put its character. */
int vt_resize(vt_t *vt, int rows, int cols)
{
    if (rows < 1 || cols < 2 || rows > VT_MAX_ROWS || cols > VT_MAX_COLS)
        return -1;
    if (rows == vt->rows && cols == vt->cols)
        return 0;
    vterm_set_size(vt->vterm, rows, cols);
    char fix[48];
    int n = snprintf(fix, sizeof fix, "\033[r\033[%d;%dH\0337", vt->resize_row + 1, vt->resize_col + 1);
    vt_vterm_feed(vt, fix, (size_t)n);
    if (vt->resize_pending && !(vt->scan.dec & VT_SCAN_NOWRAP))
        vt_wait_to_wrap(vt, vt->resize_row, vt->resize_col);
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

unsigned vt_history_pushes(const vt_t *vt)
{
    return vt->pushes;
}

bool vt_take_history(vt_t *dst, vt_t *src)
{
    if (dst == src || dst->cols != src->cols || dst->hist.len > 0)
        return false;
    /* The lines change hands: a frame comes 25 to 60 times a second, and
     * a copy of a long history each time would cost more than the bytes
     * the frame saved. */
    int max = dst->hist.max;
    vt_history_free(&dst->hist);
    dst->hist = src->hist;
    vt_history_init(&src->hist, src->hist.max);
    while (dst->hist.len > max) { /* dst keeps less (the scrollback setting changed) */
        vt_hist_line *l = &dst->hist.lines[dst->hist.head];
        free(l->cells);
        l->cells = NULL;
        l->len = 0;
        dst->hist.head = (dst->hist.head + 1) % dst->hist.cap;
        dst->hist.len--;
    }
    dst->hist.max = max;
    /* A cell's marks are an index into its own model's table.  A fresh
     * model has none of its own: it takes src's table whole.  One that
     * has some enters each line's marks in its own. */
    if (dst->comb.len == 0) {
        vt_comb_table empty = dst->comb;
        dst->comb = src->comb;
        src->comb = empty;
        src->last_comb = 0;
        return true;
    }
    for (int k = 0; k < dst->hist.len; k++) {
        vt_hist_line *l = &dst->hist.lines[(dst->hist.head + k) % dst->hist.cap];
        for (int i = 0; i < l->len; i++) {
            if (!l->cells[i].comb)
                continue;
            const vt_comb_entry *e = vt_comb_get(&src->comb, l->cells[i].comb);
            uint32_t marks[VT_COMB_MARKS + 1];
            int n = e ? e->n : 0;
            for (int j = 0; j < n; j++)
                marks[j] = e->cp[j];
            marks[n] = 0;
            l->cells[i].comb = n ? vt_comb_intern(&dst->comb, marks) : 0;
        }
    }
    return true;
}

const vt_cell *vt_line(const vt_t *vt, int row, int *len)
{
    if (row >= 0 && row < vt->rows) {
        if (len)
            *len = vt->cols;
        return vt_row_at(vt, row)->cells;
    }
    const vt_hist_line *l = row < 0 ? vt_history_line(&vt->hist, -row) : NULL;
    if (!l)
        return NULL;
    if (len)
        *len = l->len;
    return l->cells ? l->cells : empty_line;
}

bool vt_line_wrapped(const vt_t *vt, int row)
{
    if (row >= 0 && row < vt->rows)
        return vt_row_at(vt, row)->wrapped;
    const vt_hist_line *l = row < 0 ? vt_history_line(&vt->hist, -row) : NULL;
    return l && l->wrapped;
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

bool vt_row_dirty(const vt_t *vt, int row)
{
    return row >= 0 && row < vt->rows && vt->dirty[row];
}

void vt_clear_damage(vt_t *vt)
{
    memset(vt->dirty, 0, (size_t)vt->rows);
}
