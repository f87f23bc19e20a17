/*
 * vt_ops.c - what the terminal model does in place of libvterm 0.1.4,
 * where the scanner (vt_scan.h) hands it over: characters libvterm would
 * place at the wrong width (written as stand-ins), marks, REP, saving and
 * restoring the cursor (one saved cursor per screen, with the pen, origin
 * mode and character sets, as xterm keeps them), the alternate screen
 * modes, RIS, DECSTR, DECALN, DECSTBM and the queries DECRQM and
 * DECRQSS.  Each is carried out by feeding libvterm what makes its state
 * what xterm's would be (vt.c says why the model is built this way).
 */
#include "config.h"

#include "vt/vt_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vterm_feed_str(vt_t *vt, const char *s)
{
    vt_vterm_feed(vt, s, strlen(s));
}

/* The CUP that puts libvterm's cursor at row, col (0-based, on the
 * screen): with origin mode CUP counts from the margins. */
static int cup_bytes(vt_t *vt, int row, int col, char *b, size_t size)
{
    int top = 1, left = 1, bottom, right;
    if (vt->scan.dec & VT_SCAN_ORIGIN) {
        vt_margins(vt, &top, &bottom, &left, &right);
        if (!(vt->scan.dec & VT_SCAN_LRMM))
            left = 1;
    }
    return snprintf(b, size, "\033[%d;%dH", row + 2 - top, col + 2 - left);
}

/* ED, EL, ECH, ICH and DCH end a wait to wrap in xterm, not in libvterm:
 * a CUP ends libvterm's.  It goes to the last column of the glyph the
 * cursor waited after (libvterm keeps the cursor on the first of a wide
 * one, xterm on the last).  That glyph is gone from its cell, and a mark
 * has nothing to go on. */
static void end_wait_to_wrap(vt_t *vt)
{
    VTermPos p;
    vterm_state_get_cursorpos(vt->state, &p);
    if (!vt->pending_wrap || p.row != vt->wrap_pos.row || p.col != vt->wrap_pos.col)
        return;
    int col = vt->next_col - 1;
    char b[48];
    int len = cup_bytes(vt, p.row, col, b, sizeof b);
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt_vterm_feed(vt, b, (size_t)len);
    vt->next_row = p.row;
    vt->next_col = col;
    vt->next_pushes = vt->pushes;
}

/* Make the cursor wait to wrap after the last column of row (col is that
 * column), as it did before a resize or when it was saved: a glyph is
 * written there to make libvterm wait, and the cells it took are put back. */
void vt_wait_to_wrap(vt_t *vt, int row, int col)
{
    vt_row *r = vt_row_at(vt, row);
    int lead = col > 0 && r->cells[col].ch == VT_CH_WIDE_CONT ? col - 1 : col;
    vt_cell keep[2];
    int n = col - lead + 1, used = r->used;
    bool wrapped = r->wrapped;
    memcpy(keep, r->cells + lead, (size_t)n * sizeof *keep);
    char b[48];
    int len = cup_bytes(vt, row, lead, b, sizeof b);
    len += (int)utf8_put_scalar(n == 2 ? STANDIN_WIDE : STANDIN_NARROW, b + len);
    vt_vterm_feed(vt, b, (size_t)len);
    memcpy(r->cells + lead, keep, (size_t)n * sizeof *keep);
    r->used = used;
    r->wrapped = wrapped;
    vt->last_ch = keep[0].ch;
    vt->last_comb = keep[0].comb;
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
    vt->pen.attrs = vt->pen_vterm | vt->pen_extra;
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

/* A mark goes on the character in the cell of the last glyph, the cell
 * before the cursor (or the cursor's, while it waits to wrap), if nothing
 * moved the cursor since that glyph, and if a character is still there:
 * none is after an erase or a scroll took it away.  It changes the
 * character, not its rendition.  libvterm never sees a mark: it would put
 * its own idea of the last glyph back, erased or not, in the current pen,
 * and on the next line after a glyph in the last column. */
static void add_mark(vt_t *vt, uint32_t cp)
{
    if (!vt->glyph_last)
        return;
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
    vt->last_ch = c->ch;
    vt->last_comb = c->comb;
    vt->dirty[vt->wrap_pos.row] = 1;
}

/* A character libvterm would get wrong (see vt_scan.h). */
static void scan_glyph(void *user, uint32_t cp, int width, bool substitute, const char *bytes, size_t len)
{
    vt_t *vt = user;
    if (width == 0) {
        add_mark(vt, cp);
        return;
    }
    if (width == 2 && (vt->scan.dec & VT_SCAN_NOWRAP)) {
        /* Without autowrap xterm writes nothing it cannot fit. */
        VTermPos p;
        vterm_state_get_cursorpos(vt->state, &p);
        if (p.col + 2 > vt->cols)
            return;
    }
    if (!substitute) {
        vt_vterm_feed(vt, bytes, len);
        return;
    }
    uint32_t standin = width == 2 ? STANDIN_WIDE : STANDIN_NARROW;
    char b[4];
    size_t n = utf8_put_scalar(standin, b);
    vt->standin_for = cp;
    vt->standin_pending = true;
    vt_vterm_feed(vt, b, n);
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
    *s = (vt_saved){ true, p.row, p.col, vt->pen.fg, vt->pen.bg, vt->pen.attrs, (vt->scan.dec & VT_SCAN_ORIGIN) != 0, vt->scan.cs };
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
    vt_vterm_feed(vt, b.data, b.len);
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
            vt_wait_to_wrap(vt, p.row, p.col);
    }
}

/* RIS, as xterm: the primary screen, cleared, a reset pen, sets and
 * modes, and a saved cursor at home. */
static void full_reset(vt_t *vt)
{
    vt_set_altscreen(vt, false);
    vterm_feed_str(vt, "\033c");
    reset_saved(&vt->saved[0]);
    vt->saved[1].valid = false;
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt->last_ch = 0;
    vt->last_comb = 0;
}

/* DECALN: the screen full of E (in the default rendition) from home,
 * with origin mode, the margins and the attributes reset; the colours
 * stay, as in xterm (libvterm fills the screen in the pen but leaves the
 * rest). */
static void align(vt_t *vt)
{
    vt_color fg = vt->pen.fg, bg = vt->pen.bg;
    vt->scan.dec &= ~VT_SCAN_ORIGIN;
    vt->scan.sgr_extra = 0;
    set_pen_extra(vt, 0);
    vterm_feed_str(vt, "\033[?6l\033[0m\033[r\033[s\033#8\033[H");
    buf_t b;
    buf_init(&b);
    vt_put_sgr(&b, fg, bg, 0);
    vt_vterm_feed(vt, b.data, b.len);
    buf_free(&b);
    /* libvterm wrote the E's without moving its cursor from home. */
    vt->pending_wrap = false;
    vt->glyph_last = false;
    vt->next_row = vt->next_col = 0;
    vt->next_pushes = vt->pushes;
}

/* DECSTBM as xterm takes it: a missing or too large bottom is the last
 * row, and a region of fewer than two lines is ignored, the cursor left
 * where it is (libvterm takes one line). */
static void set_region(vt_t *vt, unsigned arg)
{
    int top = (int)(arg >> 16), bottom = (int)(arg & 0xffffu);
    if (top == 0)
        top = 1;
    if (bottom == 0 || bottom > vt->rows)
        bottom = vt->rows;
    if (bottom <= top)
        return;
    char b[32];
    int n = snprintf(b, sizeof b, "\033[%d;%dr", top, bottom);
    vt_vterm_feed(vt, b, (size_t)n);
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
            vt_cb_movecursor(p, p, 1, vt);
        }
        break;
    case VT_SCAN_SET_REGION:
        set_region(vt, arg);
        break;
    case VT_SCAN_WRAP_ENDED:
        end_wait_to_wrap(vt);
        break;
    case VT_SCAN_QUERY_SGR: {
        buf_t b;
        buf_init(&b);
        vt_put_decrqss_sgr(&b, vt->pen.fg, vt->pen.bg, vt->pen.attrs);
        reply(vt, b.data, b.len);
        buf_free(&b);
        break;
    }
    default:
        break;
    }
}

const vt_scan_ops vt_model_ops = { scan_feed, scan_osc, scan_sgr_extra, scan_rep, scan_glyph, scan_action };
