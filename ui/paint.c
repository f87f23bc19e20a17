/*
 * paint.c - see paint.h.
 */
#include "config.h"

#include "paint.h"
#include "utf8.h"
#include "width.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static const theme_t *theme;
static bool direct; /* the terminal takes 24-bit colour numbers */

void paint_init(const theme_t *t)
{
    theme = t;
    direct = COLORS >= 0x1000000;
}

/* A vt colour as a curses colour number for this terminal; -1: default. */
static int curses_color(vt_color c)
{
    if (c == VT_COLOR_DEFAULT || COLORS <= 0)
        return -1;
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_RGB && direct)
        return (int)(c & 0xffffff);
    if (COLORS >= 256)
        return theme_nearest_256(c);
    int n = theme_nearest_16(c);
    return COLORS >= 16 ? n : n & 7;
}

static int pair_for(vt_color fg, vt_color bg)
{
    if (!has_colors())
        return 0;
    int p = alloc_pair(curses_color(fg), curses_color(bg));
    return p < 0 ? 0 : p;
}

static attr_t curses_attrs(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & VT_ATTR_BOLD)
        r |= A_BOLD;
    if (a & VT_ATTR_DIM)
        r |= A_DIM;
    if (a & VT_ATTR_ITALIC)
        r |= A_ITALIC;
    if (a & VT_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & VT_ATTR_BLINK)
        r |= A_BLINK;
    if (a & VT_ATTR_REVERSE)
        r |= A_REVERSE;
    if (a & VT_ATTR_CONCEAL)
        r |= A_INVIS;
    return r;
}

void paint_set(theme_elem e, theme_elem under)
{
    theme_style st = e == under ? theme->style[e] : theme_style_over(theme, e, under);
    int pair = theme->mono ? 0 : pair_for(st.fg, st.bg);
    attr_set(curses_attrs(st.attrs), 0, &pair);
}

/* Decode one UTF-8 scalar at s (n bytes left); returns its length.  An
 * invalid subpart becomes one U+FFFD.  The decoder is corral's own, not
 * the C library's: the same in every locale. */
static int utf8_next(const char *s, size_t n, wchar_t *out)
{
    int32_t cp;
    size_t len = utf8_decode(s, n, &cp);
    *out = cp < 0 ? 0xFFFD : (wchar_t)cp;
    return (int)len;
}

/* Never a control character on the real terminal. */
static wchar_t safe(wchar_t c)
{
    return c < 0x20 || (c >= 0x7f && c < 0xa0) ? L'?' : c;
}

/* Widths are corral's one width function's (width.h), the model's, not the
 * C library's in whatever locale the screen runs: what the model put in
 * two columns is drawn in two. */
int paint_width(const char *utf8)
{
    return uc_text_width(utf8, strlen(utf8));
}

size_t paint_fit(const char *utf8, int maxw)
{
    return uc_text_fit(utf8, strlen(utf8), maxw, NULL);
}

int paint_text(int y, int x, int maxw, const char *utf8)
{
    int used = 0;
    size_t n = strlen(utf8);
    for (size_t i = 0; i < n && used < maxw;) {
        wchar_t c;
        i += (size_t)utf8_next(utf8 + i, n - i, &c);
        c = safe(c);
        int cw = uc_width((uint32_t)c);
        if (cw < 0) {
            c = L'?';
            cw = 1;
        }
        if (cw == 0)
            continue; /* combining marks are not worth the trouble in labels */
        if (used + cw > maxw)
            break;
        wchar_t s[2] = {c, 0};
        mvaddnwstr(y, x + used, s, 1);
        used += cw;
    }
    return used;
}

void paint_fill(int y, int x, int w)
{
    if (w > 0)
        mvhline(y, x, ' ', w);
}

static const paint_mark *mark_at(const paint_mark *m, int n, int line, int col)
{
    for (int i = 0; i < n; i++)
        if (m[i].line == line && col >= m[i].col && col < m[i].col + m[i].len)
            return &m[i];
    return NULL;
}

/* One cell as a cchar_t in its colours, or in a mark's. */
static void cell_cchar(const vt_t *vt, const vt_cell *c, const paint_mark *mark, cchar_t *out)
{
    wchar_t wc[CCHARW_MAX + 1];
    int n = 0;
    if (c->ch == 0) {
        wc[n++] = L' ';
    } else {
        char text[VT_CELL_TEXT_MAX];
        size_t len = vt_cell_text(vt, c, text);
        for (size_t i = 0; i < len && n < CCHARW_MAX;) {
            wchar_t ch;
            i += (size_t)utf8_next(text + i, len - i, &ch);
            if (n == 0) { /* a character without width shows as U+FFFD */
                ch = safe(ch);
                wc[n++] = uc_width((uint32_t)ch) < 0 ? 0xFFFD : ch;
            } else if (uc_width((uint32_t)ch) == 0) { /* curses takes marks only */
                wc[n++] = ch;
            }
        }
        if (n == 0)
            wc[n++] = L' ';
    }
    wc[n] = 0;
    theme_style normal = theme->style[TH_NORMAL];
    vt_color fg = c->fg == VT_COLOR_DEFAULT ? normal.fg : c->fg;
    vt_color bg = c->bg == VT_COLOR_DEFAULT ? normal.bg : c->bg;
    unsigned attrs = c->attrs;
    if (mark) {
        theme_style m = theme->style[mark->current ? TH_SEARCH_CURRENT : TH_SEARCH_MATCH];
        fg = m.fg;
        bg = m.bg;
        attrs = m.attrs;
    }
    int pair = pair_for(fg, bg);
    setcchar(out, wc, curses_attrs(attrs), 0, &pair);
}

static void paint_line(const vt_t *vt, int y, int x, int w, int line, const paint_mark *marks, int nmarks)
{
    int len = 0;
    const vt_cell *cells = vt_line(vt, line, &len);
    static const vt_cell blank = {0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0};
    for (int col = 0; col < w; col++) {
        const vt_cell *c = cells && col < len ? &cells[col] : &blank;
        if (c->ch == VT_CH_WIDE_CONT)
            continue; /* drawn with its left half */
        if (c->width == 2 && col + 1 >= w)
            c = &blank; /* half a wide character does not fit */
        cchar_t cc;
        cell_cchar(vt, c, mark_at(marks, nmarks, line, col), &cc);
        mvadd_wch(y, x + col, &cc);
    }
}

void paint_vt(const vt_t *vt, ui_rect r, int first_line, bool all, const paint_mark *marks, int nmarks)
{
    /* curses combines a cell's rendition with the window's current one:
     * start from nothing, or the last element drawn would tint the pane. */
    attr_set(A_NORMAL, 0, NULL);
    int cols = vt_cols(vt), w = r.w < cols ? r.w : cols;
    for (int k = 0; k < r.h; k++) {
        int line = first_line + k;
        if (!all && !(line >= 0 && vt_row_dirty(vt, line)))
            continue;
        if (line >= vt_rows(vt)) {
            paint_set(TH_NORMAL, TH_NORMAL);
            paint_fill(r.y + k, r.x, r.w);
            attr_set(A_NORMAL, 0, NULL);
            continue;
        }
        paint_line(vt, r.y + k, r.x, w, line, marks, nmarks);
        if (w < r.w) { /* a session narrower than its pane */
            paint_set(TH_NORMAL, TH_NORMAL);
            paint_fill(r.y + k, r.x + w, r.w - w);
            attr_set(A_NORMAL, 0, NULL);
        }
    }
}
