/*
 * vt_bytes.c - byte streams that recreate the terminal model: the redraw
 * for a real terminal (vt_redraw_bytes) and the sync for a client's copy
 * of the model (vt_sync_bytes), and the SGRs they and DECRQSS use.
 *
 * The sync writes every line, history and screen, from the top of a fresh
 * screen down, letting the screen scroll the oldest into history, so that
 * a line that wrapped wraps in the copy too: its last column is left
 * waiting to wrap and the next line's first glyph wraps there (a width
 * change reflows the copy as it does the model only if the copy knows
 * which lines wrapped).
 */
#include "config.h"

#include "vt/vt_int.h"

#include <string.h>

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

static const struct {
    unsigned bit;
    unsigned code;
} attr_codes[] = {
    { VT_ATTR_BOLD, 1 },  { VT_ATTR_DIM, 2 },     { VT_ATTR_ITALIC, 3 },  { VT_ATTR_UNDERLINE, 4 },
    { VT_ATTR_BLINK, 5 }, { VT_ATTR_REVERSE, 7 }, { VT_ATTR_CONCEAL, 8 }, { VT_ATTR_STRIKE, 9 },
};

/* The SGR for a complete style from a reset, in sequences of at most 16
 * parameters (what libvterm and st can take). */
void vt_put_sgr(buf_t *b, vt_color fg, vt_color bg, unsigned attrs)
{
    unsigned p[20];
    int n = 0, split;
    p[n++] = 0;
    for (size_t k = 0; k < sizeof attr_codes / sizeof attr_codes[0]; k++)
        if (attrs & attr_codes[k].bit)
            p[n++] = attr_codes[k].code;
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

/* One colour as xterm's DECRQSS reports it (xtermFormatSGR). */
static void decrqss_color(buf_t *b, vt_color c, int base)
{
    uint32_t v = c & 0xffffffu;
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_RGB)
        buf_printf(b, ";%d:2::%u:%u:%u", base + 8, v >> 16, (v >> 8) & 0xff, v & 0xff);
    else if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED && v >= 16)
        buf_printf(b, ";%d:5:%u", base + 8, v);
    else if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED)
        buf_printf(b, ";%u", (v < 8 ? (unsigned)base : (unsigned)base + 60) + (v & 7));
}

void vt_put_decrqss_sgr(buf_t *b, vt_color fg, vt_color bg, unsigned attrs)
{
    /* xterm's order: bold, underline, blink, inverse, invisible, faint,
     * italic, crossed out; then the colours. */
    static const struct {
        unsigned bit;
        const char *code;
    } order[] = {
        { VT_ATTR_BOLD, ";1" },    { VT_ATTR_UNDERLINE, ";4" }, { VT_ATTR_BLINK, ";5" },
        { VT_ATTR_REVERSE, ";7" }, { VT_ATTR_CONCEAL, ";8" },   { VT_ATTR_DIM, ";2" },
        { VT_ATTR_ITALIC, ";3" },  { VT_ATTR_STRIKE, ";9" },
    };
    buf_puts(b, "\033P1$r0");
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (attrs & order[k].bit)
            buf_puts(b, order[k].code);
    decrqss_color(b, fg, 30);
    decrqss_color(b, bg, 40);
    buf_puts(b, "m\033\\");
}

typedef struct style {
    vt_color fg, bg;
    unsigned attrs;
} style;

static void set_style(buf_t *b, style *cur, vt_color fg, vt_color bg, unsigned attrs)
{
    if (cur->fg == fg && cur->bg == bg && cur->attrs == attrs)
        return;
    vt_put_sgr(b, fg, bg, attrs);
    *cur = (style){ fg, bg, attrs };
}

static void put_glyph(const vt_t *vt, buf_t *b, style *st, const vt_cell *c)
{
    char tmp[VT_CELL_TEXT_MAX];
    set_style(b, st, c->fg, c->bg, c->attrs);
    buf_append(b, tmp, vt_cell_text(vt, c, tmp));
}

/* Cells [from, end) from the cursor on (at from): runs of default blanks
 * are skipped with CUF, coloured blanks are made with ECH (which keeps
 * them blank, unlike spaces). */
static void put_cells(const vt_t *vt, buf_t *b, style *st, const vt_cell *cells, int from, int end)
{
    for (int col = from; col < end;) {
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
            put_glyph(vt, b, st, c);
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
        put_cells(vt, b, st, r->cells, 0, end);
    }
}

/* Erase the glyph the cursor waits to wrap after and keep the wait.  ECH
 * ends a wait (as in xterm), but DECSC saves it, and DECRC brings it back
 * over the blank ECH left.  This takes the screen's saved cursor, and the
 * pen comes back as it was saved. */
static void erase_keeping_wait(buf_t *b, style *st, vt_color bg)
{
    style saved = *st;
    buf_puts(b, "\0337");
    set_style(b, st, VT_COLOR_DEFAULT, bg, 0);
    buf_puts(b, "\033[X\0338");
    *st = saved;
}

/* Leave the cursor waiting to wrap at col of a row of g, as it is after a
 * glyph in the last column (col is that glyph's first column): write that
 * glyph again, or, if it was erased since and the saved cursor may be
 * taken (may_save), a glyph that is erased keeping the wait.  Otherwise
 * the cursor is only placed there. */
static void redraw_pending_wrap(const vt_t *vt, const vt_grid *g, buf_t *b, style *st, int row, int col,
                                VTermPos origin, bool may_save)
{
    const vt_cell *c = &vt_grid_row(g, row)->cells[col];
    buf_printf(b, "\033[%d;%dH", row + 1 - origin.row, col + 1 - origin.col);
    if (c->ch && c->ch != VT_CH_WIDE_CONT && col + c->width == vt->cols) {
        put_glyph(vt, b, st, c);
        return;
    }
    if (!may_save)
        return;
    if (col + 1 < vt->cols) { /* an erased wide glyph: U+3000 is wide */
        set_style(b, st, VT_COLOR_DEFAULT, c[1].bg, 0);
        buf_puts(b, "\xe3\x80\x80");
    } else {
        set_style(b, st, VT_COLOR_DEFAULT, c->bg, 0);
        buf_putc(b, ' ');
    }
    erase_keeping_wait(b, st, c->bg);
}

/* The cursor (with a pending wrap over a glyph), the pen and the
 * cursor's visibility; origin is where CUP's home is (origin mode puts it
 * at the margins).  The saved cursors are made already: a wait over a
 * cell erased since is not made again. */
static void redraw_cursor_and_pen(const vt_t *vt, buf_t *b, style *st, VTermPos origin)
{
    int crow, ccol;
    vt_cursor(vt, &crow, &ccol);
    if (vt->pending_wrap && crow == vt->wrap_pos.row && ccol == vt->wrap_pos.col)
        redraw_pending_wrap(vt, vt->cur, b, st, crow, ccol, origin, false);
    else
        buf_printf(b, "\033[%d;%dH", crow + 1 - origin.row, ccol + 1 - origin.col);
    set_style(b, st, vt->pen.fg, vt->pen.bg, vt->pen.attrs);
    buf_printf(b, "\033[?25%c", vt->cursor_visible ? 'h' : 'l');
}

char *vt_redraw_bytes(const vt_t *vt, size_t *len)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "\033[0m\033[H\033[2J");
    style st = { VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0 };
    redraw_grid(vt, vt->cur, &b, &st);
    redraw_cursor_and_pen(vt, &b, &st, (VTermPos){ 0, 0 });
    if (len)
        *len = b.len;
    return buf_steal(&b);
}

/* ---- sync ------------------------------------------------------------------ */

typedef struct sync_line {
    const vt_cell *cells;
    int len;
    bool wrapped;
} sync_line;

static const vt_cell blank_cell = { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };

static const vt_cell *cell_of(const sync_line *l, int col)
{
    return col < l->len ? &l->cells[col] : &blank_cell;
}

/* Lines written from the cursor at the start of a row down, each on the
 * next row (the screen scrolls at the bottom), wrapped ones wrapping.
 * Returns whether the screen's saved cursor was taken to do it. */
static bool put_lines(const vt_t *vt, buf_t *b, style *st, const sync_line *l, int n)
{
    bool saved = false;
    for (int i = 0; i < n; i++) {
        const sync_line *x = &l[i];
        int from = 0;
        if (i > 0 && l[i - 1].wrapped) {
            /* The first glyph wraps from the line before.  A blank first
             * cell is a space that wraps, erased again; a glyph with a
             * background filled the row the wrap scrolled in with it, which
             * is erased behind it. */
            const vt_cell *c = cell_of(x, 0);
            if (c->ch && c->ch != VT_CH_WIDE_CONT) {
                put_glyph(vt, b, st, c);
                from = c->width;
                if (st->bg != VT_COLOR_DEFAULT && from < vt->cols) {
                    set_style(b, st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
                    buf_puts(b, "\033[K");
                }
            } else { /* (erasing from column 1 on: a whole row erased
                      * would end the wrap) */
                set_style(b, st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
                buf_puts(b, " \r");
                set_style(b, st, VT_COLOR_DEFAULT, c->bg, 0);
                buf_puts(b, "\033[X\033[C");
                from = 1;
            }
        }
        int end = x->len;
        while (end > 0 && vt_cell_is_default_blank(&x->cells[end - 1]))
            end--;
        put_cells(vt, b, st, x->cells, from, end);
        if (i == n - 1)
            break;
        if (x->wrapped) {
            /* Left waiting to wrap: after a glyph in the last column, or
             * made so with a space there, erased again. */
            const vt_cell *last = cell_of(x, vt->cols - 1);
            if (end < vt->cols || last->ch == 0) {
                buf_printf(b, "\033[%dG", vt->cols);
                set_style(b, st, VT_COLOR_DEFAULT, last->bg, 0);
                buf_putc(b, ' ');
                erase_keeping_wait(b, st, last->bg);
                saved = true;
            }
        } else {
            /* CR ends a wait to wrap only when it moves the cursor: not
             * after a wide glyph that fills a row of two columns. */
            set_style(b, st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
            buf_puts(b, end == vt->cols ? "\033[G\n" : "\r\n");
        }
    }
    return saved;
}

/* The newest max_history history lines and then the rows of grid g;
 * whether the screen's saved cursor was taken (put_lines). */
static bool put_screen(const vt_t *vt, buf_t *b, style *st, const vt_grid *g, int max_history)
{
    int nh = g == &vt->primary ? (vt->hist.len < max_history ? vt->hist.len : max_history) : 0;
    sync_line *l = xcalloc((size_t)(nh + vt->rows), sizeof *l);
    for (int k = 0; k < nh; k++) {
        const vt_hist_line *h = vt_history_line(&vt->hist, nh - k);
        l[k] = (sync_line){ h->cells, h->len, h->wrapped };
    }
    for (int r = 0; r < vt->rows; r++) {
        const vt_row *row = vt_grid_row(g, r);
        l[nh + r] = (sync_line){ row->cells, row->used, row->wrapped };
    }
    bool saved = put_lines(vt, b, st, l, nh + vt->rows);
    free(l);
    return saved;
}

/* Designations and the shift that make the copy's sets cs. */
static void put_charsets(buf_t *b, vt_charsets *have, const vt_charsets *cs)
{
    static const char which[4] = { '(', ')', '*', '+' };
    for (int k = 0; k < 4; k++)
        if (have->g[k] != cs->g[k])
            buf_printf(b, "\033%c%c", which[k], cs->g[k]);
    if (have->gl != cs->gl) {
        static const char *const shift[4] = { "\x0f", "\x0e", "\033n", "\033o" };
        buf_puts(b, shift[cs->gl & 3]);
    }
    *have = *cs;
}

/* A saved cursor, made in the copy by saving it there (DECSC) with the
 * screen of grid g on show; the copy's sets are ASCII again after.  One
 * never saved is left so, unless drawing the screen took the copy's
 * (taken): then it is saved as a restore finds one never saved, at home
 * in the default rendition. */
static void put_saved(const vt_t *vt, const vt_grid *g, buf_t *b, style *st, vt_charsets *have, const vt_saved *s,
                      bool taken)
{
    if (!s->valid && taken) {
        set_style(b, st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
        buf_puts(b, "\033[H\0337");
        return;
    }
    if (!s->valid)
        return;
    if (s->origin) /* before the cursor: it homes the cursor */
        buf_puts(b, "\033[?6h");
    if (s->col >= vt->cols) { /* it was waiting to wrap */
        const vt_cell *last = &vt_grid_row(g, s->row)->cells[vt->cols - 1];
        redraw_pending_wrap(vt, g, b, st, s->row, vt->cols - (last->ch == VT_CH_WIDE_CONT ? 2 : 1),
                            (VTermPos){ 0, 0 }, true);
    } else {
        buf_printf(b, "\033[%d;%dH", s->row + 1, s->col + 1);
    }
    put_charsets(b, have, &s->cs);
    set_style(b, st, s->fg, s->bg, s->attrs);
    buf_puts(b, "\0337");
    if (s->origin)
        buf_puts(b, "\033[?6l");
    vt_charsets ascii;
    vt_charsets_reset(&ascii);
    put_charsets(b, have, &ascii);
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
    vt_charsets have;
    vt_charsets_reset(&have);
    bool taken = put_screen(vt, &b, &st, &vt->primary, max_history < 0 ? 0 : max_history);
    put_saved(vt, &vt->primary, &b, &st, &have, &vt->saved[0], taken);
    if (vt->altscreen) {
        set_style(&b, &st, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0);
        buf_puts(&b, "\033[?1047h\033[H");
        taken = put_screen(vt, &b, &st, &vt->alt, 0);
        put_saved(vt, &vt->alt, &b, &st, &have, &vt->saved[1], taken);
    }
    /* Margins, left/right margin mode and origin mode: each homes the
     * cursor, which is placed after. */
    unsigned dec = vt->scan.dec;
    int top, bottom, left, right;
    vt_margins(vt, &top, &bottom, &left, &right);
    if (dec & VT_SCAN_LRMM)
        buf_puts(&b, "\033[?69h");
    if (top != 1 || bottom != vt->rows)
        buf_printf(&b, "\033[%d;%dr", top, bottom);
    if ((dec & VT_SCAN_LRMM) && (left != 1 || right != vt->cols))
        buf_printf(&b, "\033[%d;%ds", left, right);
    VTermPos origin = { 0, 0 };
    if (dec & VT_SCAN_ORIGIN) {
        buf_puts(&b, "\033[?6h");
        origin = (VTermPos){ top - 1, dec & VT_SCAN_LRMM ? left - 1 : 0 };
    }
    redraw_cursor_and_pen(vt, &b, &st, origin);
    put_charsets(&b, &have, &vt->scan.cs); /* after the last glyph */
    if (dec & VT_SCAN_NOWRAP)
        buf_puts(&b, "\033[?7l");
    sync_modes(vt, &b);
    if (vt->title && vt->title[0])
        buf_printf(&b, "\033]2;%s\a", vt->title);
    vt_scan_unfinished(&vt->scan, &b); /* last: the input goes on from there */
    if (len)
        *len = b.len;
    return buf_steal(&b);
}
