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
 *   - saving and restoring the cursor is ours, one saved cursor per screen
 *     with the pen, origin mode and character sets (libvterm keeps one,
 *     shared, without the sets, and restores a never-saved one as black on
 *     black); a restore is carried out by feeding libvterm the SGR, CUP,
 *     designations and modes that make its state the saved one;
 *   - the alternate screen modes (47, 1047, 1049), RIS, DECSTR, DECALN and
 *     the queries DECRQM (for those modes) and DECRQSS (SGR).
 * libvterm 0.1.4 reports neither dim nor conceal and hides the DEC modes a
 * client needs; vt_scan tracks those (and keeps escape strings whole, see
 * vt_scan.h).
 */
#include "config.h"

#include "vt.h"

#include "util.h"
#include "vt_int.h"
#include "vt_reflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VT_MAX_ROWS 1000
#define VT_MAX_COLS 2000
#define VT_MAX_SCROLLBACK 1000000
#define VT_TITLE_MAX 256

/* The stand-ins: code points libvterm 0.1.4 places at 2 columns, 1 column
 * and as a combining mark, each one that libvterm itself gets wrong, so
 * that the scanner never lets it through as itself (it is written as a
 * stand-in too) and a glyph made of one always stands for something.  The
 * unit tests check them against the linked libvterm. */
#define STANDIN_WIDE 0x3FFFDu   /* unassigned (no width: one column) */
#define STANDIN_NARROW 0x1E94Au /* ADLAM NUKTA, a mark since Unicode 9 */
#define STANDIN_MARK 0x070Fu    /* SYRIAC ABBREVIATION MARK, spacing */

static const vt_cell empty_line[1] = { { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 } };

static void mark_dirty(vt_t *vt, int first, int end)
{
    if (end > first)
        memset(vt->dirty + first, 1, (size_t)(end - first));
}

/* Bytes straight to libvterm, past the scanner. */
static void vterm_feed(vt_t *vt, const char *bytes, size_t len)
{
    vterm_input_write(vt->vterm, bytes, len);
}

static void vterm_feed_str(vt_t *vt, const char *s)
{
    vterm_feed(vt, s, strlen(s));
}

/* Make the cursor wait to wrap after the last column of row (col is that
 * column), as it did before a resize or when it was saved: a glyph is
 * written there to make libvterm wait, and the cells it took are put back. */
static void wait_to_wrap(vt_t *vt, int row, int col)
{
    vt_row *r = vt_row_at(vt, row);
    int lead = col > 0 && r->cells[col].ch == VT_CH_WIDE_CONT ? col - 1 : col;
    vt_cell keep[2];
    int n = col - lead + 1, used = r->used;
    bool wrapped = r->wrapped;
    memcpy(keep, r->cells + lead, (size_t)n * sizeof *keep);
    int top = 1, left = 1, bottom, right;
    if (vt->scan.dec & VT_SCAN_ORIGIN) { /* CUP counts from the margins */
        vt_margins(vt, &top, &bottom, &left, &right);
        if (!(vt->scan.dec & VT_SCAN_LRMM))
            left = 1;
    }
    char b[48];
    int len = snprintf(b, sizeof b, "\033[%d;%dH", row + 2 - top, lead + 2 - left);
    len += (int)utf8_put_scalar(n == 2 ? STANDIN_WIDE : STANDIN_NARROW, b + len);
    vterm_feed(vt, b, (size_t)len);
    memcpy(r->cells + lead, keep, (size_t)n * sizeof *keep);
    r->used = used;
    r->wrapped = wrapped;
    vt->last_ch = keep[0].ch;
    vt->last_comb = keep[0].comb;
    vt->last_n = 0;
}

/* ---- libvterm state callbacks -------------------------------------------- */

static bool is_standin(uint32_t c)
{
    return c == STANDIN_WIDE || c == STANDIN_NARROW || c == STANDIN_MARK;
}

/* The characters of a glyph as they really are: a stand-in is the
 * character it stands for (the one being written, or, when libvterm adds
 * marks to the last glyph, the one it stood for then).  Returns how many,
 * real[n] = 0. */
static int real_chars(vt_t *vt, const uint32_t *chars, VTermPos pos, uint32_t *real, bool *again)
{
    int n = 0;
    while (n < VT_GLYPH_CHARS - 1 && chars[n])
        n++;
    /* libvterm comes back to its last glyph to add marks that came in a
     * later write: the same position, its characters and more. */
    *again = vt->last_n > 0 && n > vt->last_n && pos.row == vt->last_pos.row && pos.col == vt->last_pos.col &&
             memcmp(chars, vt->last_vterm, (size_t)vt->last_n * sizeof *chars) == 0;
    int k = 0;
    if (*again) {
        memcpy(real, vt->last_real, (size_t)vt->last_n * sizeof *real);
        k = vt->last_n;
    }
    for (; k < n; k++) {
        uint32_t c = chars[k];
        if (is_standin(c)) {
            if (vt->standin_pending && k == n - 1) {
                c = vt->standin_for;
                vt->standin_pending = false;
            } else {
                c = 0xFFFD;
            }
        } else if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            c = 0xFFFD;
        }
        real[k] = c;
    }
    real[n] = 0;
    bool all = chars[n] == 0;
    vt->last_pos = pos;
    vt->last_n = all ? n : 0;
    memcpy(vt->last_vterm, chars, (size_t)n * sizeof *chars);
    memcpy(vt->last_real, real, (size_t)n * sizeof *real);
    return n;
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

/* A glyph in the pen's colours; halves of wide characters it breaks go. */
static int cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *user)
{
    vt_t *vt = user;
    int cols = vt->cols;
    if (pos.row < 0 || pos.row >= vt->rows || pos.col < 0 || pos.col >= cols)
        return 1;
    /* A mark with nothing to go on (the cursor moved since the last glyph)
     * is a glyph of no width to libvterm, which keeps the cursor where it
     * is: there is no cell for it, and it goes. */
    if (info->width == 0)
        return 1;
    uint32_t real[VT_GLYPH_CHARS];
    bool again;
    int n = real_chars(vt, info->chars, pos, real, &again);
    vt_row *r = vt_row_at(vt, pos.row);
    vt_cell *c = r->cells + pos.col;
    int w = info->width == 2 && pos.col + 1 < cols ? 2 : 1;
    if (!again) {
        /* A glyph that did not fit where the cursor was went to the start
         * of the next row: autowrap. */
        if (pos.col == 0 && vt->next_col + w > cols)
            note_wrap(vt, pos);
        vt->next_row = pos.row;
        vt->next_col = pos.col + w;
        vt->next_pushes = vt->pushes;
    }
    bool clean = c->width == 1 && c->ch != VT_CH_WIDE_CONT &&
                 (w == 1 || (c[1].width == 1 && c[1].ch != VT_CH_WIDE_CONT));
    c->ch = real[0];
    c->fg = vt->fg;
    c->bg = vt->bg;
    c->attrs = vt->attrs;
    c->width = (uint8_t)w;
    c->comb = real[0] && n > 1 ? vt_comb_intern(&vt->comb, real + 1) : 0;
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
    vt->last_marks = n - 1;
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
        vt_grid_erase(r, rect.start_col, rect.end_col, vt->cols, vt->bg); /* BCE */
        if (whole)
            r->wrapped = false;
    }
    if (whole && rect.start_row > 0)
        vt_row_at(vt, rect.start_row - 1)->wrapped = false;
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
                vt_row *r = vt_row_at(vt, 0);
                if (keep) {
                    vt_history_push(&vt->hist, r);
                    vt->pushes++;
                }
                vt_grid_blank_row(r, vt->cols, vt->bg);
                g->top = g->top + 1 == vt->rows ? 0 : g->top + 1;
            } else {
                g->top = g->top == 0 ? vt->rows - 1 : g->top - 1;
                vt_grid_blank_row(vt_row_at(vt, 0), vt->cols, vt->bg);
            }
        }
    } else {
        int s = rect.start_row, e = rect.end_row;
        vt_grid_rotate(g, s, e, downward > 0 ? n : h - n);
        int b0 = downward > 0 ? e - n : s;
        for (int k = 0; k < n; k++)
            vt_grid_blank_row(vt_row_at(vt, b0 + k), vt->cols, vt->bg);
        if (s > 0) /* the row above no longer goes on in the first */
            vt_row_at(vt, s - 1)->wrapped = false;
    }
    /* The last row that moved no longer goes on in the row after it. */
    int last = downward > 0 ? rect.end_row - n - 1 : rect.end_row - 1;
    if (last >= rect.start_row)
        vt_row_at(vt, last)->wrapped = false;
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

/* Show the alternate grid (fresh) or go back to the untouched primary;
 * the alternate screen's saved cursor goes with it. */
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
        vt->saved[1].valid = false;
    }
    vt->altscreen = on;
    vt->last_n = 0;
    vt->glyph_last = false;
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
    vt->last_n = 0;
    free(vt->dirty);
    vt->dirty = xmalloc((size_t)rows);
    mark_dirty(vt, 0, rows);
    (void)delta;
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

/* ---- what the scanner hands over ---------------------------------------- */

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

static void set_pen_extra(vt_t *vt, unsigned attrs)
{
    vt->pen_extra = (uint16_t)attrs;
    vt->attrs = vt->pen_vterm | vt->pen_extra;
}

static void scan_sgr_extra(void *user, unsigned attrs)
{
    set_pen_extra(user, attrs);
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
            vt_scan_text(&vt->scan, buf, used);
            used = 0;
        }
        memcpy(buf + used, one, n);
        used += n;
    }
    vt_scan_text(&vt->scan, buf, used);
}

/* A mark on the glyph in the last column while the cursor waits to wrap
 * after it, which libvterm would put on the next line on its own. */
static void add_mark(vt_t *vt, uint32_t cp)
{
    vt_row *r = vt_row_at(vt, vt->wrap_pos.row);
    vt_cell *c = &r->cells[vt->wrap_pos.col];
    if (!c->ch || c->ch == VT_CH_WIDE_CONT)
        return;
    uint32_t marks[VT_COMB_MARKS + 1];
    int n = 0;
    const vt_comb_entry *e = vt_comb_get(&vt->comb, c->comb);
    for (int k = 0; e && k < e->n; k++)
        marks[n++] = e->cp[k];
    if (n == VT_COMB_MARKS)
        return;
    marks[n++] = cp;
    marks[n] = 0;
    c->comb = vt_comb_intern(&vt->comb, marks);
    vt->last_comb = c->comb;
    vt->last_marks = n;
    vt->last_n = 0; /* libvterm's idea of the glyph no longer matches */
    vt->dirty[vt->wrap_pos.row] = 1;
}

/* A character libvterm would get wrong (see vt_scan.h). */
static void scan_glyph(void *user, uint32_t cp, int width, bool substitute, const char *bytes, size_t len)
{
    vt_t *vt = user;
    if (width == 0) {
        /* A mark goes on the glyph just written, or nowhere: libvterm
         * would put it on whatever glyph it wrote last wherever the cursor
         * went since, if the cursor came back next to it. */
        if (!vt->glyph_last || vt->last_marks >= VT_COMB_MARKS)
            return; /* (libvterm would go on collecting marks for ever) */
        VTermPos p;
        vterm_state_get_cursorpos(vt->state, &p);
        if (vt->pending_wrap && p.row == vt->wrap_pos.row && p.col == vt->wrap_pos.col) {
            add_mark(vt, cp);
            return;
        }
    }
    if (width == 2 && (vt->scan.dec & VT_SCAN_NOWRAP)) {
        /* Without autowrap xterm writes nothing it cannot fit. */
        VTermPos p;
        vterm_state_get_cursorpos(vt->state, &p);
        if (p.col + 2 > vt->cols)
            return;
    }
    if (!substitute) {
        vterm_feed(vt, bytes, len);
        return;
    }
    uint32_t standin = width == 2 ? STANDIN_WIDE : width == 1 ? STANDIN_NARROW : STANDIN_MARK;
    char b[4];
    size_t n = utf8_put_scalar(standin, b);
    vt->standin_for = cp;
    vt->standin_pending = true;
    vterm_feed(vt, b, n);
    vt->standin_pending = false;
}

/* DECSC: into the saved cursor of the screen on show. */
static void save_cursor(vt_t *vt)
{
    vt_saved *s = &vt->saved[vt->altscreen];
    VTermPos p;
    vterm_state_get_cursorpos(vt->state, &p);
    if (vt->pending_wrap && p.row == vt->wrap_pos.row && p.col == vt->wrap_pos.col)
        p.col = vt->cols; /* waiting to wrap, which xterm saves too */
    *s = (vt_saved){ true, p.row, p.col, vt->fg, vt->bg, vt->attrs, (vt->scan.dec & VT_SCAN_ORIGIN) != 0, vt->scan.cs };
}

static void reset_saved(vt_saved *s)
{
    *s = (vt_saved){ .valid = true, .fg = VT_COLOR_DEFAULT, .bg = VT_COLOR_DEFAULT };
    vt_charsets_reset(&s->cs);
}

/* DECRC: libvterm is fed what makes its state the saved one.  With origin
 * mode the position is taken relative to the margins and kept inside them,
 * as xterm's CursorRestore does. */
static void restore_cursor(vt_t *vt)
{
    vt_saved s = vt->saved[vt->altscreen];
    if (!s.valid)
        reset_saved(&s); /* xterm: home, default rendition and sets */
    if (s.row >= vt->rows)
        s.row = vt->rows - 1;
    bool wait = s.col >= vt->cols;
    if (wait)
        s.col = vt->cols - 1;
    buf_t b;
    buf_init(&b);
    vt_put_sgr(&b, s.fg, s.bg, s.attrs);
    if (s.origin) {
        int top, bottom, left, right;
        vt_margins(vt, &top, &bottom, &left, &right);
        if (!(vt->scan.dec & VT_SCAN_LRMM))
            left = 1;
        int row = s.row + 2 - top, col = s.col + 2 - left;
        buf_printf(&b, "\033[?6h\033[%d;%dH", row < 1 ? 1 : row, col < 1 ? 1 : col);
    } else {
        buf_printf(&b, "\033[?6l\033[%d;%dH", s.row + 1, s.col + 1);
    }
    static const char which[4] = { '(', ')', '*', '+' };
    for (int k = 0; k < 4; k++)
        if (vt->scan.cs.g[k] != s.cs.g[k])
            buf_printf(&b, "\033%c%c", which[k], s.cs.g[k]);
    if (vt->scan.cs.gl != s.cs.gl) {
        static const char *const shift[4] = { "\x0f", "\x0e", "\033n", "\033o" };
        buf_puts(&b, shift[s.cs.gl & 3]);
    }
    unsigned extra = s.attrs & (VT_ATTR_DIM | VT_ATTR_CONCEAL);
    vt->scan.sgr_extra = extra;
    set_pen_extra(vt, extra);
    vt->scan.cs = s.cs;
    vt->scan.dec = s.origin ? vt->scan.dec | VT_SCAN_ORIGIN : vt->scan.dec & ~VT_SCAN_ORIGIN;
    vterm_feed(vt, b.data, b.len);
    buf_free(&b);
    /* CUP ends a wait to wrap even where the cursor already was, and
     * libvterm reports no move then. */
    VTermPos p;
    vterm_state_get_cursorpos(vt->state, &p);
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt->next_row = p.row;
    vt->next_col = p.col;
    vt->next_pushes = vt->pushes;
    if (wait && !(vt->scan.dec & VT_SCAN_NOWRAP)) { /* where it went: the margins may move it */
        if (p.col == vt->cols - 1)
            wait_to_wrap(vt, p.row, p.col);
    }
}

/* RIS, as xterm: the primary screen, cleared, a reset pen, sets and
 * modes, and a saved cursor at home. */
static void full_reset(vt_t *vt)
{
    set_altscreen(vt, false);
    vterm_feed_str(vt, "\033c");
    reset_saved(&vt->saved[0]);
    vt->saved[1].valid = false;
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt->last_ch = 0;
    vt->last_comb = 0;
    vt->last_n = 0;
}

/* DECALN: the screen full of E from home, with origin mode, the margins
 * and the rendition reset (libvterm fills the screen but leaves the rest). */
static void align(vt_t *vt)
{
    vt->scan.dec &= ~VT_SCAN_ORIGIN;
    vt->scan.sgr_extra = 0;
    set_pen_extra(vt, 0);
    vterm_feed_str(vt, "\033[?6l\033[0m\033[r\033[s\033#8\033[H");
    /* libvterm wrote the E's without moving its cursor from home. */
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt->next_row = vt->next_col = 0;
    vt->next_pushes = vt->pushes;
}

static void reply(vt_t *vt, const char *bytes, size_t len)
{
    if (vt->cb.reply)
        vt->cb.reply(vt->user, bytes, len);
}

static void scan_action(void *user, int what, unsigned arg)
{
    vt_t *vt = user;
    switch (what) {
    case VT_SCAN_SAVE_CURSOR:
        save_cursor(vt);
        break;
    case VT_SCAN_RESTORE_CURSOR:
        restore_cursor(vt);
        break;
    case VT_SCAN_ALT_ENTER: /* 1049 saves first; the screen is cleared */
        if (arg == 1049)
            save_cursor(vt);
        vterm_feed_str(vt, "\033[?1047h");
        break;
    case VT_SCAN_ALT_LEAVE: /* 1049 restores after, even from the primary */
        vterm_feed_str(vt, "\033[?1047l");
        if (arg == 1049)
            restore_cursor(vt);
        break;
    case VT_SCAN_RESET:
        full_reset(vt);
        break;
    case VT_SCAN_SOFT_RESET:
        /* What xterm's DECSTR resets and libvterm 0.1.4's leaves: origin
         * mode and the margins (the cursor staying where it is), insert
         * mode, autowrap (on), the rendition, the character sets; the
         * saved cursor is home, reset. */
        vterm_feed_str(vt, "\0337\033[?6l\033[?69l\033[r\0338\033[0m\033[4l\033[?7h\033[?25h"
                           "\033(B\033)B\033*B\033+B\x0f");
        reset_saved(&vt->saved[vt->altscreen]);
        break;
    case VT_SCAN_ALIGN:
        align(vt);
        break;
    case VT_SCAN_QUERY_MODE: {
        char r[32];
        int n = snprintf(r, sizeof r, "\033[?%u;%d$y", arg, vt->altscreen ? 1 : 2);
        reply(vt, r, (size_t)n);
        break;
    }
    case VT_SCAN_CURSOR_MOVED:
        vt->glyph_last = false;
        if (vt->pending_wrap) {
            VTermPos p;
            vterm_state_get_cursorpos(vt->state, &p);
            vt->pending_wrap = false;
            cb_movecursor(p, p, 1, vt);
        }
        break;
    case VT_SCAN_QUERY_SGR: {
        buf_t b;
        buf_init(&b);
        vt_put_decrqss_sgr(&b, vt->fg, vt->bg, vt->attrs);
        reply(vt, b.data, b.len);
        buf_free(&b);
        break;
    }
    default:
        break;
    }
}

static const vt_scan_ops scan_ops = { scan_feed, scan_osc, scan_sgr_extra, scan_rep, scan_glyph, scan_action };

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
    vt_charsets_reset(&vt->saved[0].cs);
    vt_charsets_reset(&vt->saved[1].cs);
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
    vterm_feed(vt, fix, (size_t)n);
    if (vt->resize_pending && !(vt->scan.dec & VT_SCAN_NOWRAP))
        wait_to_wrap(vt, vt->resize_row, vt->resize_col);
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
