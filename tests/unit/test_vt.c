/*
 * test_vt.c - the terminal model as a user of corral sees it: what a stream
 * of PTY bytes leaves on the screen and in history, which OSC marks reach
 * the owner, and that the redraw bytes reproduce the screen.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "vt/vt.h"
#include "vt_helpers.h"
#include "vt/vt_int.h" /* the random sync test looks at the cursor's wait */

/* ---- text, wrap, history ------------------------------------------------- */

static void test_bad_sizes(void **state)
{
    (void)state;
    assert_null(vt_new(0, 80, 10, NULL, NULL));
    assert_null(vt_new(24, 0, 10, NULL, NULL));
    assert_null(vt_new(24, 80, -1, NULL, NULL));
    vt_t *vt = vt_new(24, 80, 0, NULL, NULL);
    assert_non_null(vt);
    assert_int_equal(vt_rows(vt), 24);
    assert_int_equal(vt_cols(vt), 80);
    assert_int_not_equal(vt_resize(vt, 0, 10), 0);
    vt_free(vt);
}

static void test_plain_text_and_wrap(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 100);
    w(vt, "hello\r\nworld");
    assert_row(vt, 0, "hello");
    assert_row(vt, 1, "world");
    assert_cursor(vt, 1, 5);
    w(vt, "\r\n0123456789AB");
    assert_row(vt, 2, "0123456789");
    assert_row(vt, 3, "AB");
    assert_cursor(vt, 3, 2);
    assert_int_equal(cell(vt, 0, 0)->ch, 'h');
    assert_int_equal(cell(vt, 0, 5)->ch, 0);
    assert_int_equal(vt_scrollback_len(vt), 0);
    vt_free(vt);
}

static void test_scrollback_order(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 100);
    w(vt, "1\r\n2\r\n3\r\n4\r\n5\r\n6");
    assert_row(vt, 0, "4");
    assert_row(vt, 2, "6");
    assert_int_equal(vt_scrollback_len(vt), 3);
    assert_row(vt, -1, "3");
    assert_row(vt, -3, "1");
    int len = -1;
    const vt_cell *l = vt_line(vt, -1, &len);
    assert_non_null(l);
    assert_int_equal(len, 1); /* stored trimmed */
    assert_int_equal(l[0].ch, '3');
    assert_null(vt_line(vt, -4, &len));
    assert_null(vt_line(vt, 3, &len));
    size_t n;
    char *all = vt_text(vt, -3, 2, &n);
    assert_string_equal(all, "1\n2\n3\n4\n5\n6\n");
    assert_int_equal(n, strlen(all));
    free(all);
    /* Clamped range. */
    all = vt_text(vt, -100, 100, NULL);
    assert_string_equal(all, "1\n2\n3\n4\n5\n6\n");
    free(all);
    vt_free(vt);
}

static void test_scrollback_bound(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 20, 5);
    char line[32];
    for (int i = 1; i <= 100; i++) {
        snprintf(line, sizeof line, "line %d\r\n", i);
        w(vt, line);
    }
    /* Lines 1..97 scrolled off; the newest five of them remain. */
    assert_int_equal(vt_scrollback_len(vt), 5);
    assert_row(vt, -1, "line 97");
    assert_row(vt, -5, "line 93");
    assert_row(vt, 0, "line 98");
    assert_row(vt, 2, "line 100");
    vt_free(vt);

    vt = mk(2, 10, 0);
    w(vt, "a\r\nb\r\nc\r\nd");
    assert_int_equal(vt_scrollback_len(vt), 0);
    assert_row(vt, 1, "d");
    vt_free(vt);
}

static void test_coloured_history_keeps_colour(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 10);
    w(vt, "\033[31mred\033[0m\r\n\033[44m\033[K\033[0mx\r\n\r\n");
    int len;
    const vt_cell *l = vt_line(vt, -2, &len);
    assert_non_null(l);
    assert_int_equal(len, 3);
    assert_int_equal(l[0].fg, VT_COLOR_INDEXED(1));
    l = vt_line(vt, -1, &len);
    assert_non_null(l);
    assert_int_equal(len, 10); /* the blue background reaches the edge */
    assert_int_equal(l[9].bg, VT_COLOR_INDEXED(4));
    assert_int_equal(l[9].ch, 0);
    vt_free(vt);
}

/* ---- characters ---------------------------------------------------------- */

static void test_wide_chars(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 0);
    w(vt, "\xe6\xbc\xa2x");
    const vt_cell *c = cell(vt, 0, 0);
    assert_int_equal(c->ch, 0x6f22);
    assert_int_equal(c->width, 2);
    assert_int_equal(cell(vt, 0, 1)->ch, VT_CH_WIDE_CONT);
    assert_int_equal(cell(vt, 0, 2)->ch, 'x');
    assert_cursor(vt, 0, 3);
    assert_row(vt, 0, "\xe6\xbc\xa2x");
    char buf[VT_CELL_TEXT_MAX];
    assert_int_equal(vt_cell_text(vt, cell(vt, 0, 1), buf), 0);
    assert_int_equal(vt_cell_text(vt, cell(vt, 0, 0), buf), 3);
    assert_string_equal(buf, "\xe6\xbc\xa2");

    /* Overwriting the right half leaves no half character behind. */
    w(vt, "\033[1;2Hy");
    assert_int_equal(cell(vt, 0, 0)->ch, 0);
    assert_int_equal(cell(vt, 0, 0)->width, 1);
    assert_int_equal(cell(vt, 0, 1)->ch, 'y');

    /* A wide character that does not fit wraps whole. */
    w(vt, "\033[2;10H\xe6\xbc\xa2");
    assert_int_equal(cell(vt, 1, 9)->ch, 0);
    assert_int_equal(cell(vt, 2, 0)->ch, 0x6f22);
    vt_free(vt);
}

static void test_utf8_split_everywhere(void **state)
{
    (void)state;
    const char *s = "a\xe6\xbc\xa2\xf0\x9f\x98\x80z";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(2, 10, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_row(vt, 0, s);
        assert_cursor(vt, 0, 6);
        vt_free(vt);
    }
}

static void test_combining(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "e\xcc\x81!");
    const vt_cell *c = cell(vt, 0, 0);
    assert_int_equal(c->ch, 'e');
    assert_int_not_equal(c->comb, 0);
    char buf[VT_CELL_TEXT_MAX];
    assert_int_equal(vt_cell_text(vt, c, buf), 3);
    assert_string_equal(buf, "e\xcc\x81");
    assert_int_equal(cell(vt, 0, 1)->ch, '!');
    assert_cursor(vt, 0, 2);
    /* Split between base and mark, and the same marks share one entry. */
    w(vt, "\r\ne");
    w(vt, "\xcc\x81");
    assert_int_equal(cell(vt, 1, 0)->comb, c->comb);
    assert_row(vt, 1, "e\xcc\x81");
    vt_free(vt);
}

static void test_many_combining_sequences_recycle(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 80, 0);
    char s[16];
    /* 300 distinct marks: more than the table holds. */
    for (unsigned m = 0; m < 300; m++) {
        unsigned cp = 0x300 + (m % 0x70);
        unsigned cp2 = 0x300 + (m / 0x70);
        snprintf(s, sizeof s, "\ra%c%c%c%c", 0xc0 | (cp >> 6), 0x80 | (cp & 0x3f),
                 0xc0 | (cp2 >> 6), 0x80 | (cp2 & 0x3f));
        w(vt, s);
        char buf[VT_CELL_TEXT_MAX];
        size_t n = vt_cell_text(vt, cell(vt, 0, 0), buf);
        assert_int_equal(n, 5);
        assert_memory_equal(buf, s + 1, 5);
    }
    vt_free(vt);
}

/* ---- colours and attributes ---------------------------------------------- */

static void test_sgr_colours_and_attrs(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 20, 0);
    w(vt, "\033[1;3;4;5;7;9;38;5;200;48;2;1;2;3mA"
          "\033[0;2;8;31;42mB"
          "\033[22;28;39;49mC"
          "\033[38;5;2mD"
          "\033[0;38;2;10;20;30;92;103mE"
          "\033[2mF\033[mG");
    const vt_cell *a = cell(vt, 0, 0);
    assert_int_equal(a->attrs, VT_ATTR_BOLD | VT_ATTR_ITALIC | VT_ATTR_UNDERLINE | VT_ATTR_BLINK |
                                   VT_ATTR_REVERSE | VT_ATTR_STRIKE);
    assert_int_equal(a->fg, VT_COLOR_INDEXED(200));
    assert_int_equal(a->bg, VT_COLOR_RGB(1, 2, 3));
    const vt_cell *b = cell(vt, 0, 1);
    assert_int_equal(b->attrs, VT_ATTR_DIM | VT_ATTR_CONCEAL);
    assert_int_equal(b->fg, VT_COLOR_INDEXED(1));
    assert_int_equal(b->bg, VT_COLOR_INDEXED(2));
    const vt_cell *c = cell(vt, 0, 2);
    assert_int_equal(c->attrs, 0);
    assert_int_equal(c->fg, VT_COLOR_DEFAULT);
    assert_int_equal(c->bg, VT_COLOR_DEFAULT);
    const vt_cell *d = cell(vt, 0, 3);
    assert_int_equal(d->attrs, 0); /* the 2 of 38;5;2 is not dim */
    assert_int_equal(d->fg, VT_COLOR_INDEXED(2));
    const vt_cell *e = cell(vt, 0, 4);
    assert_int_equal(VT_COLOR_KIND(e->fg), VT_COLOR_KIND_INDEXED);
    assert_int_equal(e->fg, VT_COLOR_INDEXED(10));
    assert_int_equal(e->bg, VT_COLOR_INDEXED(11));
    assert_int_equal(cell(vt, 0, 5)->attrs, VT_ATTR_DIM);
    assert_int_equal(cell(vt, 0, 6)->attrs, 0);
    vt_free(vt);
}

static void test_sgr_split_everywhere(void **state)
{
    (void)state;
    const char *s = "\033[2;38;2;255;0;7mX\033[22mY";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(2, 10, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_row(vt, 0, "XY");
        assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_RGB(255, 0, 7));
        assert_int_equal(cell(vt, 0, 0)->attrs, VT_ATTR_DIM);
        assert_int_equal(cell(vt, 0, 1)->attrs, 0);
        vt_free(vt);
    }
}

/* The scanner skips plain text eight bytes at a time: every kind of byte
 * that stops it (ESC, SO and SI, a character from outside ASCII, a C1
 * control in UTF-8), at every offset in a word, is found exactly as by
 * one-byte writes, which never take the eight-byte path.  (SO matters to
 * the scanner where a character from outside ASCII follows it: the
 * line-drawing set stays for the ASCII after that character.) */
static void test_stops_at_every_offset(void **state)
{
    (void)state;
    const char *stops[] = { "\033[2;31m", "\016q\303\251q\017", "\303\251", "\342\224\200", "\302\205" };
    const int glyphs[] = { 0, 3, 1, 1, 0 }; /* the stop's own glyphs: the C1 control is dropped */
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++)
        for (int off = 0; off < 18; off++) {
            char line[64];
            int n = snprintf(line, sizeof line, "%.*s%s%.*s", off, "aaaaaaaaaaaaaaaaaaaa", stops[k], 20 - off,
                             "bbbbbbbbbbbbbbbbbbbb");
            vt_t *whole = mk(2, 40, 0), *bytes = mk(2, 40, 0);
            w(whole, "\033)0"); /* G1 is the line-drawing set */
            w(bytes, "\033)0");
            vt_write(whole, line, (size_t)n);
            for (int i = 0; i < n; i++)
                vt_write(bytes, line + i, 1);
            int len_w, len_b;
            const vt_cell *cw = vt_line(whole, 0, &len_w), *cb = vt_line(bytes, 0, &len_b);
            assert_int_equal(len_w, len_b);
            assert_memory_equal(cw, cb, (size_t)len_w * sizeof *cw);
            if (k == 1) /* line drawing before and after the e acute */
                assert_true(cw[off].ch == 0x2500 && cw[off + 2].ch == 0x2500);
            int rw, colw, rb, colb;
            vt_cursor(whole, &rw, &colw);
            vt_cursor(bytes, &rb, &colb);
            assert_int_equal(rw, rb);
            assert_int_equal(colw, colb);
            assert_int_equal(colw, 20 + glyphs[k]);
            vt_free(whole);
            vt_free(bytes);
        }
}

static void test_erase_uses_background(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "abcdef\033[1;3H\033[41m\033[K\033[0m");
    assert_row(vt, 0, "ab");
    assert_int_equal(cell(vt, 0, 2)->ch, 0);
    assert_int_equal(cell(vt, 0, 2)->bg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 9)->bg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 1)->bg, VT_COLOR_DEFAULT);
    vt_free(vt);
}

/* ---- editing --------------------------------------------------------------- */

static void test_insert_delete_and_regions(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 10);
    w(vt, "abcdef\033[1;2H\033[2P");
    assert_row(vt, 0, "adef");
    w(vt, "\033[2@");
    assert_row(vt, 0, "a  def");
    w(vt, "\033[2J\033[H1\r\n2\r\n3\r\n4\r\n5");
    /* Scroll region rows 2-4: a line feed at its bottom scrolls only it. */
    w(vt, "\033[2;4r\033[4;1H\n");
    assert_row(vt, 0, "1");
    assert_row(vt, 1, "3");
    assert_row(vt, 2, "4");
    assert_row(vt, 3, "");
    assert_row(vt, 4, "5");
    assert_int_equal(vt_scrollback_len(vt), 0);
    /* Reverse index at the region's top scrolls it down. */
    w(vt, "\033[2;1H\033M");
    assert_row(vt, 1, "");
    assert_row(vt, 2, "3");
    assert_row(vt, 3, "4");
    /* Insert and delete lines. */
    w(vt, "\033[r\033[1;1H\033[L");
    assert_row(vt, 0, "");
    assert_row(vt, 1, "1");
    w(vt, "\033[M");
    assert_row(vt, 0, "1");
    assert_int_equal(vt_scrollback_len(vt), 0); /* deleted, not scrolled off */
    /* Scroll up the whole screen by two from the bottom: both lines go to
     * history. */
    w(vt, "\033[5;1H\033[2S");
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_row(vt, -2, "1");
    vt_free(vt);
}

/* ---- alternate screen ---------------------------------------------------- */

static void test_altscreen(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 100);
    w(vt, "h1\r\nh2\r\np1\r\np2\r\np3");
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_cursor(vt, 2, 2);
    w(vt, "\033[?1049h");
    assert_true(vt_modes(vt) & VT_MODE_ALTSCREEN);
    assert_row(vt, 0, "");
    assert_row(vt, 2, "");
    w(vt, "\033[HALT\r\na\r\nb\r\nc\r\nd");
    assert_row(vt, 2, "d");
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_row(vt, -1, "h2");
    w(vt, "\033[?1049l");
    assert_false(vt_modes(vt) & VT_MODE_ALTSCREEN);
    assert_row(vt, 0, "p1");
    assert_row(vt, 1, "p2");
    assert_row(vt, 2, "p3");
    assert_cursor(vt, 2, 2);
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_row(vt, -2, "h1");
    vt_free(vt);
}

/* ---- resize -------------------------------------------------------------- */

static void test_resize(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 100);
    w(vt, "1\r\n2\r\n3\r\n4\r\n5");
    assert_cursor(vt, 4, 1);
    assert_int_equal(vt_resize(vt, 3, 10), 0);
    assert_int_equal(vt_rows(vt), 3);
    assert_row(vt, 0, "3");
    assert_row(vt, 2, "5");
    assert_cursor(vt, 2, 1);
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_row(vt, -1, "2");
    /* Taller again: the lines come back from history. */
    assert_int_equal(vt_resize(vt, 5, 10), 0);
    assert_row(vt, 0, "1");
    assert_row(vt, 4, "5");
    assert_cursor(vt, 4, 1);
    assert_int_equal(vt_scrollback_len(vt), 0);
    /* Still taller than the content: blank rows below. */
    assert_int_equal(vt_resize(vt, 8, 20), 0);
    assert_row(vt, 4, "5");
    assert_row(vt, 7, "");
    assert_cursor(vt, 4, 1);
    w(vt, "xyz");
    assert_row(vt, 4, "5xyz");
    /* Narrower: rows are cut, a wide character on the edge goes whole. */
    w(vt, "\033[1;1H123\xe6\xbc\xa2");
    assert_int_equal(vt_resize(vt, 8, 4), 0);
    assert_row(vt, 0, "123");
    assert_int_equal(cell(vt, 0, 3)->ch, 0);
    int r, c;
    vt_cursor(vt, &r, &c);
    assert_true(r >= 0 && r < 8 && c >= 0 && c < 4);
    w(vt, "\033[8;4Hx");
    assert_row(vt, 7, "   x");
    vt_free(vt);
}

static void test_resize_on_altscreen(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 100);
    w(vt, "p1\r\np2\033[?1049h\033[4;1Halt");
    assert_int_equal(vt_resize(vt, 2, 6), 0);
    assert_row(vt, 1, "alt");
    w(vt, "\033[?1049l");
    assert_row(vt, 0, "p1");
    assert_row(vt, 1, "p2");
    int r, c;
    vt_cursor(vt, &r, &c);
    assert_true(r >= 0 && r < 2 && c >= 0 && c < 6);
    vt_free(vt);
}

/* ---- escape strings ------------------------------------------------------- */

static void check_osc_split(const char *s, int number, const char *payload, const char *screen)
{
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(2, 20, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_int_equal(rec.osc_count, 1);
        assert_int_equal(rec.osc_number[0], number);
        assert_string_equal(rec.osc_payload[0], payload);
        assert_row(vt, 0, screen);
        assert_int_equal(rec.bells, 0);
        vt_free(vt);
    }
}

static void test_osc133_split_everywhere(void **state)
{
    (void)state;
    check_osc_split("ab\033]133;A\007cd", 133, "A", "abcd");
    check_osc_split("ab\033]133;D;0\033\\cd", 133, "D;0", "abcd");
}

static void test_osc_7_9_777(void **state)
{
    (void)state;
    check_osc_split("\033]7;file://host/tmp/x\033\\$ ", 7, "file://host/tmp/x", "$");
    check_osc_split("\033]777;notify;Done;build ok\007", 777, "notify;Done;build ok", "");
    check_osc_split("\033]9;hello\007", 9, "hello", "");
    vt_t *vt = mk(2, 20, 0);
    w(vt, "\033]133\007");
    assert_int_equal(rec.osc_count, 1);
    assert_int_equal(rec.osc_number[0], 133);
    assert_string_equal(rec.osc_payload[0], "");
    vt_free(vt);
}

static void test_title_split_everywhere(void **state)
{
    (void)state;
    const char *s = "\033]2;hello world\007x";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(2, 20, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_string_equal(vt_title(vt), "hello world");
        assert_int_equal(rec.titles, 1);
        assert_string_equal(rec.title, "hello world");
        assert_row(vt, 0, "x");
        vt_free(vt);
    }
    vt_t *vt = mk(2, 20, 0);
    assert_string_equal(vt_title(vt), "");
    w(vt, "\033]2;x\007\033]2;\007");
    assert_string_equal(vt_title(vt), "");
    assert_string_equal(rec.title, "");
    w(vt, "\033]0;bad\xff\x7f" "byte\033\\");
    const char *t = vt_title(vt);
    assert_int_equal(strncmp(t, "bad?", 4), 0);
    assert_int_equal(strcmp(t + strlen(t) - 4, "byte"), 0);
    for (const char *p = t; *p; p++)
        assert_true(*p >= 0x20 && *p < 0x7f);
    char big[1200];
    memcpy(big, "\033]2;", 4);
    memset(big + 4, 'a', 1000);
    memcpy(big + 1004, "\007", 2);
    w(vt, big);
    assert_true(strlen(vt_title(vt)) <= 256);
    assert_true(strlen(vt_title(vt)) > 0);
    assert_row(vt, 0, "");
    vt_free(vt);
}

static void test_other_strings_never_show(void **state)
{
    (void)state;
    const char *s = "a\033]52;c;aGVsbG8gd29ybGQ=\007"
                    "b\033_apc text\033\\"
                    "c\033^pm text\033\\"
                    "d\033Xsos text\033\\"
                    "e\033P1$rtext\033\\"
                    "f\033]4;1;rgb:00/00/00\033\\g";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(2, 20, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_row(vt, 0, "abcdefg");
        assert_int_equal(rec.osc_count, 0);
        vt_free(vt);
    }
}

static void test_long_string_capped(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 20, 0);
    size_t n = 100 * 1024;
    char *s = xmalloc(n);
    memset(s, 'z', n);
    w(vt, "a\033]133;");
    vt_write(vt, s, n);
    w(vt, "\007b\033]133;B\007c");
    assert_row(vt, 0, "abc");
    assert_int_equal(rec.osc_count, 1);
    assert_string_equal(rec.osc_payload[0], "B");
    /* ESC in a string ends it unfinished and starts a new sequence. */
    w(vt, "\033]133;C\033[1mX");
    assert_int_equal(rec.osc_count, 1);
    assert_int_equal(cell(vt, 0, 3)->attrs, VT_ATTR_BOLD);
    free(s);
    vt_free(vt);
}

/* ---- libvterm 0.1.4 defects kept away ------------------------------------- */

static void test_csi_with_many_parameters(void **state)
{
    (void)state;
    /* libvterm 0.1.4 writes a 17th CSI parameter past its array.  An SGR
     * that long still means what it says; other CSIs keep 16 parameters. */
    const char *s = "\033[0;1;2;3;4;5;7;8;9;38;5;43;48;2;112;5;6;1;1;1;1mX"
                    "\033[2;3;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1HY";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(4, 10, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        const vt_cell *x = cell(vt, 0, 0);
        assert_int_equal(x->ch, 'X');
        assert_int_equal(x->attrs, VT_ATTR_BOLD | VT_ATTR_DIM | VT_ATTR_ITALIC | VT_ATTR_UNDERLINE |
                                       VT_ATTR_BLINK | VT_ATTR_REVERSE | VT_ATTR_CONCEAL |
                                       VT_ATTR_STRIKE);
        assert_int_equal(x->fg, VT_COLOR_INDEXED(43));
        assert_int_equal(x->bg, VT_COLOR_RGB(112, 5, 6));
        assert_int_equal(cell(vt, 1, 2)->ch, 'Y');
        vt_free(vt);
    }
    /* Nor do bytes that libvterm ignores between ESC and '['. */
    vt_t *hi = mk(4, 10, 0);
    w(hi, "\033\xc7[;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;L"
          "\033\xc7[?2004h\033\xc7[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;2mZ");
    assert_true(vt_modes(hi) & VT_MODE_BRACKETED_PASTE);
    assert_int_equal(cell(hi, 0, 0)->attrs, VT_ATTR_BOLD | VT_ATTR_DIM);
    vt_free(hi);
    /* Nor does a CSI opened after more intermediates than are held, fed a
     * byte at a time. */
    char lng[200];
    size_t ln = 0;
    lng[ln++] = '\033';
    memset(lng + ln, ' ', 80);
    ln += 80;
    lng[ln++] = '[';
    for (int k = 0; k < 30; k++)
        lng[ln++] = ';';
    memcpy(lng + ln, "1mZ", 3);
    ln += 3;
    hi = mk(4, 10, 0);
    for (size_t k = 0; k < ln; k++)
        vt_write(hi, lng + k, 1);
    assert_int_equal(cell(hi, 0, 0)->ch, 'Z');
    assert_int_equal(cell(hi, 0, 0)->attrs, VT_ATTR_BOLD);
    vt_free(hi);
    /* Controls inside a long CSI do not hide separators from the count. */
    vt_t *c0 = mk(4, 10, 0);
    w(c0, "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1\n;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1"
          ";1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1mZ");
    assert_int_equal(cell(c0, 0, 0)->ch, 'Z');
    assert_int_equal(cell(c0, 0, 0)->attrs, VT_ATTR_BOLD);
    vt_free(c0);
    /* Separators without end, and a CSI longer than the cap: nothing shows,
     * nothing breaks. */
    vt_t *vt = mk(4, 10, 0);
    char big[3000];
    memcpy(big, "\033[", 2);
    memset(big + 2, ';', sizeof big - 2);
    vt_write(vt, big, sizeof big);
    memset(big + 2, '1', sizeof big - 2);
    vt_write(vt, big, sizeof big);
    w(vt, "mok");
    assert_row(vt, 0, "ok");
    vt_free(vt);
}

static void test_escape_with_high_bytes(void **state)
{
    (void)state;
    /* libvterm ignores bytes >= 0x80 after ESC (so "ESC 0xd2 P" opens a
     * DCS), but ends a CSI at them.  Fed a byte at a time, a string it
     * opened would span writes and be read from a stale buffer. */
    char s[200] = "\033\xd2[31mX\033\xd2Pq\0\033\0\\Y\033[3\xc3\xa9";
    size_t n = strlen(s) + 6; /* through the NULs */
    /* libvterm opens CSI, OSC and DCS after intermediates as well. */
    for (size_t cut = 1; cut <= 2; cut++) {
        const char *t = "\033+]2;ti\007\033 \x19[32mA\033++P$qz\033\\B";
        vt_t *vt = mk(2, 10, 0);
        for (size_t off = 0; off < strlen(t); off += cut)
            vt_write(vt, t + off, strlen(t) - off < cut ? strlen(t) - off : cut);
        assert_string_equal(vt_title(vt), "ti");
        assert_row(vt, 0, "AB");
        assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(2));
        vt_free(vt);
    }
    /* An ESC sequence longer than what is held still ends where it ends. */
    memset(s + n, ' ', 100);
    memcpy(s + n - 1, "\033", 1);
    memcpy(s + n + 100, "B]Z", 3);
    n += 103;
    for (size_t cut = 1; cut <= 3; cut++) {
        vt_t *vt = mk(2, 10, 0);
        for (size_t off = 0; off < n; off += cut)
            vt_write(vt, s + off, n - off < cut ? n - off : cut);
        assert_int_equal(cell(vt, 0, 0)->ch, 'X');
        assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(1));
        assert_int_equal(cell(vt, 0, 1)->ch, 'Y');
        assert_row(vt, 0, "XY]Z"); /* the long ESC sequence ended at B */
        vt_free(vt);
    }
    /* The byte that ends a CSI is part of it, not text, even when it
     * starts a character the scanner would take out of the stream (a C1
     * control in UTF-8): libvterm is never left inside the CSI, where the
     * text after it would be read as its parameters (the fuzzer found the
     * overflow that follows). */
    for (size_t cut = 1; cut <= 4; cut++) {
        /* (a long CSI, which is held and dropped, loses the byte too) */
        const char *t = "\033[;;;;\xc2\x85" "ab\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1\xe2\x80\xa6" "cd";
        vt_t *vt = mk(2, 10, 0);
        for (size_t off = 0; off < strlen(t); off += cut)
            vt_write(vt, t + off, strlen(t) - off < cut ? strlen(t) - off : cut);
        assert_row(vt, 0, "\xef\xbf\xbd" "ab\xef\xbf\xbd\xef\xbf\xbd" "cd");
        vt_free(vt);
    }
}

static void test_rep(void **state)
{
    (void)state;
    /* libvterm 0.1.4 loops for ever on REP with nothing (or a zero-width
     * glyph) to repeat; REP of a real glyph repeats it. */
    vt_t *vt = mk(3, 10, 0);
    w(vt, "\033[b\033[5b\xe2\x80\x8b\033[3b\033#8\033[2J\033[H\033[b");
    w(vt, "\033[Hab\033[3bc\xe6\xbc\xa2\033[2b\033[31mx\033[;b");
    assert_row(vt, 0, "abbbbc\xe6\xbc\xa2\xe6\xbc\xa2");
    assert_row(vt, 1, "\xe6\xbc\xa2xx");
    assert_int_equal(cell(vt, 1, 3)->fg, VT_COLOR_INDEXED(1));
    vt_free(vt);
    vt = mk(3, 10, 0); /* nothing written yet: a long REP is no REP either */
    w(vt, "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1b");
    assert_row(vt, 0, "");
    vt_free(vt);
}

static void test_interrupted_sequences(void **state)
{
    (void)state;
    /* A sequence cut short by ESC must not leave libvterm inside it when
     * what follows never reaches libvterm (REP, OSC 133, a title). */
    const char *s = "\033[;\033[1;3b33b\033\033]133;A\007c\033[1\033]2;t\007xy";
    size_t n = strlen(s);
    for (size_t k = 0; k <= n; k++) {
        vt_t *vt = mk(3, 2, 0);
        vt_write(vt, s, k);
        vt_write(vt, s + k, n - k);
        assert_row(vt, 0, "33");
        assert_row(vt, 1, "bc");
        assert_row(vt, 2, "xy");
        assert_int_equal(rec.osc_count, 1);
        assert_string_equal(vt_title(vt), "t");
        vt_free(vt);
    }
}

static void test_huge_single_write(void **state)
{
    (void)state;
    /* libvterm 0.1.4 overflows its stack on one write of a megabyte.  Here
     * a million euro signs: 100000 full lines of 10. */
    size_t n = 3000000;
    char *s = xmalloc(n);
    for (size_t k = 0; k < n; k++)
        s[k] = k % 3 == 0 ? '\xe2' : k % 3 == 1 ? '\x82' : '\xac'; /* U+20AC */
    vt_t *vt = mk(3, 10, 10);
    vt_write(vt, s, n);
    assert_row(vt, 2, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                      "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
    assert_int_equal(vt_scrollback_len(vt), 10);
    /* A base character and 1.5 million combining marks. */
    s[0] = 'e';
    for (size_t k = 1; k + 1 < n; k += 2) {
        s[k] = '\xcc';
        s[k + 1] = '\x81';
    }
    w(vt, "\033[2J\033[H");
    vt_write(vt, s, n - 1);
    char buf[VT_CELL_TEXT_MAX];
    assert_true(vt_cell_text(vt, cell(vt, 0, 0), buf) >= 3);
    assert_memory_equal(buf, "e\xcc\x81", 3);
    free(s);
    vt_free(vt);
}

static void test_resize_with_scroll_region_and_saved_cursor(void **state)
{
    (void)state;
    /* libvterm 0.1.4 keeps a scroll region and a saved cursor past a
     * smaller size and then writes outside its line array (valgrind sees
     * it); the region is reset on resize, as xterm and tmux do. */
    vt_t *vt = mk(24, 80, 100);
    w(vt, "\033[5;20r\033[20;70H\0337");
    assert_int_equal(vt_resize(vt, 3, 10), 0);
    w(vt, "\0338a\r\nb\r\nc\r\nd\033[L\033[M");
    int r, c;
    vt_cursor(vt, &r, &c);
    assert_true(r >= 0 && r < 3 && c >= 0 && c < 10);
    assert_row(vt, 1, "c");
    assert_row(vt, 2, ""); /* d went down and out with IL, DL took the blank */
    /* The region is the whole screen again: a line feed at the bottom
     * scrolls everything into history. */
    int before = vt_scrollback_len(vt);
    w(vt, "\033[3;1H\n");
    assert_int_equal(vt_scrollback_len(vt), before + 1);
    vt_free(vt);
}

/* ---- bell, replies, modes ------------------------------------------------ */

static void test_bell(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "a\007b");
    assert_int_equal(rec.bells, 1);
    assert_row(vt, 0, "ab");
    w(vt, "\033]0;t\007");
    assert_int_equal(rec.bells, 1);
    vt_free(vt);
}

static void test_replies(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 0);
    w(vt, "\033[c");
    assert_true(rec.reply_len >= 4);
    assert_memory_equal(rec.reply, "\033[?", 3);
    assert_int_equal(rec.reply[rec.reply_len - 1], 'c');
    rec.reply_len = 0;
    w(vt, "\033[3;4H\033[6n");
    assert_string_equal(rec.reply, "\033[3;4R");
    /* DECRQSS for the scroll region, split; an unknown one gets nothing. */
    rec.reply_len = 0;
    rec.reply[0] = '\0';
    w(vt, "\033[2;4r\033P$");
    w(vt, "qr\033\\\033P$qx\033\\");
    assert_string_equal(rec.reply, "\033P1$r2;4r\033\\");
    vt_free(vt);
}

static void test_modes(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    unsigned m = vt_modes(vt);
    assert_true(m & VT_MODE_CURSOR_VISIBLE);
    assert_false(m & (VT_MODE_APP_CURSOR | VT_MODE_BRACKETED_PASTE | VT_MODE_MOUSE_CLICK));
    w(vt, "\033[?1h\033[?2004h\033=\033[?1002;1006h\033[?25l");
    m = vt_modes(vt);
    assert_true(m & VT_MODE_APP_CURSOR);
    assert_true(m & VT_MODE_BRACKETED_PASTE);
    assert_true(m & VT_MODE_APP_KEYPAD);
    assert_true(m & VT_MODE_MOUSE_CLICK);
    assert_true(m & VT_MODE_MOUSE_DRAG);
    assert_false(m & VT_MODE_MOUSE_MOVE);
    assert_true(m & VT_MODE_MOUSE_SGR);
    assert_false(m & VT_MODE_CURSOR_VISIBLE);
    w(vt, "\033[?1l\033[?2004l\033>\033[?1002l\033[?1006l\033[?25h");
    m = vt_modes(vt);
    assert_false(m & (VT_MODE_APP_CURSOR | VT_MODE_BRACKETED_PASTE | VT_MODE_APP_KEYPAD |
                      VT_MODE_MOUSE_CLICK | VT_MODE_MOUSE_DRAG | VT_MODE_MOUSE_SGR));
    assert_true(m & VT_MODE_CURSOR_VISIBLE);
    w(vt, "\033[?1003h");
    assert_true(vt_modes(vt) & VT_MODE_MOUSE_MOVE);
    /* Split mode sequence; RIS resets. */
    w(vt, "\033[?20");
    w(vt, "04h");
    assert_true(vt_modes(vt) & VT_MODE_BRACKETED_PASTE);
    w(vt, "\033c");
    assert_false(vt_modes(vt) & (VT_MODE_BRACKETED_PASTE | VT_MODE_MOUSE_MOVE));
    /* libvterm ignores a byte >= 0x80 after ESC: this is still RIS. */
    w(vt, "\033[?2004h\033\xd2" "c");
    assert_false(vt_modes(vt) & VT_MODE_BRACKETED_PASTE);
    vt_free(vt);
}

/* ---- text and redraw ------------------------------------------------------ */

static void test_vt_text(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 10);
    w(vt, "a  b   \r\n\r\n \xe6\xbc\xa2 x\033[4;10Hz");
    size_t len;
    char *t = vt_text(vt, 0, 3, &len);
    assert_string_equal(t, "a  b\n\n \xe6\xbc\xa2 x\n         z\n");
    assert_int_equal(len, strlen(t));
    free(t);
    t = vt_text(vt, 2, 1, NULL);
    assert_string_equal(t, "");
    free(t);
    vt_free(vt);
}

static void assert_same_screen(vt_t *a, vt_t *b)
{
    assert_int_equal(vt_rows(a), vt_rows(b));
    for (int row = 0; row < vt_rows(a); row++) {
        for (int col = 0; col < vt_cols(a); col++) {
            const vt_cell *x = cell(a, row, col), *y = cell(b, row, col);
            char tx[VT_CELL_TEXT_MAX], ty[VT_CELL_TEXT_MAX];
            vt_cell_text(a, x, tx);
            vt_cell_text(b, y, ty);
            if (x->ch != y->ch || x->fg != y->fg || x->bg != y->bg || x->attrs != y->attrs ||
                x->width != y->width || strcmp(tx, ty) != 0)
                fail_msg("cell %d,%d differs: ch %x/%x fg %x/%x bg %x/%x attrs %x/%x", row, col,
                         x->ch, y->ch, x->fg, y->fg, x->bg, y->bg, x->attrs, y->attrs);
        }
    }
    int r1, c1, r2, c2;
    vt_cursor(a, &r1, &c1);
    vt_cursor(b, &r2, &c2);
    assert_int_equal(r1, r2);
    assert_int_equal(c1, c2);
    assert_int_equal(vt_modes(a) & VT_MODE_CURSOR_VISIBLE, vt_modes(b) & VT_MODE_CURSOR_VISIBLE);
}

static void round_trip(vt_t *vt)
{
    size_t len;
    char *bytes = vt_redraw_bytes(vt, &len);
    assert_int_equal(len, strlen(bytes));
    vt_t *copy = vt_new(vt_rows(vt), vt_cols(vt), 0, NULL, NULL);
    vt_write(copy, bytes, len);
    assert_same_screen(vt, copy);
    /* The pen carries over too: text written next looks the same. */
    vt_write(vt, "Q", 1);
    vt_write(copy, "Q", 1);
    assert_same_screen(vt, copy);
    vt_free(copy);
    free(bytes);
}

static void test_redraw_round_trip(void **state)
{
    (void)state;
    vt_t *vt = mk(6, 20, 10);
    w(vt, "plain \033[1;31mbold red\033[0m \033[2;3;4mdim it ul\033[0m\r\n"
          "\033[38;5;123;48;2;9;8;7mrgb\033[0m   \033[7mrev\033[0m \033[8mhid\033[9mst\033[0m\r\n"
          "\xe6\xbc\xa2\xe5\xad\x97 e\xcc\x81 \033[44m\033[K\033[0m\r\n"
          "\033[5;3H\033[45m   \033[0m gap \033[42m\033[2X\033[0m\033[3C end"
          "\033[6;20Hq\033[1;5m\033[3;4H\033[?25l");
    round_trip(vt);
    vt_free(vt);
    /* The cursor waiting to wrap after the last column, and no longer
     * waiting once the glyph there was erased (on the last column, also
     * after a wide glyph). */
    const char *waits[] = { "0123456789", "01234567\xe6\xbc\xa2", "0123456789\033[1X",
                            "01234567\xe6\xbc\xa2\033[44m\033[1X" };
    const int q_row[] = { 1, 1, 0, 0 };
    for (size_t k = 0; k < sizeof waits / sizeof waits[0]; k++) {
        vt = mk(3, 10, 0);
        w(vt, waits[k]);
        round_trip(vt);
        assert_int_equal(cell(vt, q_row[k], q_row[k] ? 0 : 9)->ch, 'Q');
        vt_free(vt);
    }
    /* Random screens: text, colours, attributes and cursor moves. */
    for (int iter = 0; iter < 50; iter++) {
        vt_t *r = mk(8, 30, 0);
        buf_t b;
        buf_init(&b);
        for (int k = 0; k < 200; k++) {
            switch (random_range(0, 8)) {
            case 0: buf_printf(&b, "\033[%u;%uH", random_range(1, 9), random_range(1, 30)); break;
            case 1: buf_printf(&b, "\033[%um", random_range(0, 10)); break;
            case 2: buf_printf(&b, "\033[38;5;%um", random_range(0, 256)); break;
            case 3: buf_printf(&b, "\033[48;2;%u;%u;%um", random_range(0, 256), 5u, 6u); break;
            case 4: buf_puts(&b, "\xe6\xbc\xa2"); break;
            case 5: buf_printf(&b, "\033[%uX", random_range(1, 5)); break;
            case 6: buf_puts(&b, "o\xcc\x88"); break;
            default: buf_printf(&b, "%c", (char)random_range('!', '~' + 1)); break;
            }
        }
        vt_write(r, b.data, b.len);
        buf_free(&b);
        round_trip(r);
        vt_free(r);
    }
}


/* The same history, line by line and cell by cell. */
static void assert_same_history(vt_t *a, vt_t *b)
{
    assert_int_equal(vt_scrollback_len(a), vt_scrollback_len(b));
    for (int k = 1; k <= vt_scrollback_len(a); k++) {
        int la, lb;
        const vt_cell *x = vt_line(a, -k, &la), *y = vt_line(b, -k, &lb);
        int n = la > lb ? la : lb;
        for (int col = 0; col < n; col++) {
            vt_cell blank = { 0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0 };
            const vt_cell *cx = col < la ? &x[col] : &blank, *cy = col < lb ? &y[col] : &blank;
            if (cx->ch != cy->ch || cx->fg != cy->fg || cx->bg != cy->bg || cx->attrs != cy->attrs)
                fail_msg("history line -%d cell %d differs: ch %x/%x fg %x/%x bg %x/%x", k, col, cx->ch,
                         cy->ch, cx->fg, cy->fg, cx->bg, cy->bg);
        }
        if (vt_line_wrapped(a, -k) != vt_line_wrapped(b, -k))
            fail_msg("history line -%d: wrapped %d/%d", k, vt_line_wrapped(a, -k), vt_line_wrapped(b, -k));
    }
}

/* The screens' rows wrap alike (all but the last: a wrap into nothing
 * below cannot be made again). */
static void assert_same_wraps(vt_t *a, vt_t *b)
{
    for (int r = 0; r + 1 < vt_rows(a); r++)
        if (vt_line_wrapped(a, r) != vt_line_wrapped(b, r))
            fail_msg("row %d: wrapped %d/%d", r, vt_line_wrapped(a, r), vt_line_wrapped(b, r));
}

/* A client's copy made from the sync bytes equals the original: history,
 * screens, cursor, modes and title, and stays equal as output goes on. */
static void sync_round_trip(vt_t *vt)
{
    size_t len;
    char *bytes = vt_sync_bytes(vt, 1000, &len);
    vt_t *copy = vt_new(vt_rows(vt), vt_cols(vt), 1000, NULL, NULL);
    vt_write(copy, bytes, len);
    free(bytes);
    assert_same_history(vt, copy);
    assert_same_screen(vt, copy);
    assert_same_wraps(vt, copy);
    assert_int_equal(vt_modes(vt), vt_modes(copy));
    assert_string_equal(vt_title(vt), vt_title(copy));
    /* The same bytes after: a restored cursor, the line-drawing set, text
     * that wraps, and a reflow. */
    const char *more = "\0338q\033[?1049lafter\0338qx\r\n\033[32mgreen\033[0m\r\nx\r\ny\r\nz\r\n"
                       "0123456789012345678901234567890123456789\033[Ax";
    vt_write(vt, more, strlen(more));
    vt_write(copy, more, strlen(more));
    assert_same_history(vt, copy);
    assert_same_screen(vt, copy);
    assert_same_wraps(vt, copy);
    int cols = vt_cols(vt) > 6 ? vt_cols(vt) - 3 : vt_cols(vt) + 3;
    assert_int_equal(vt_resize(vt, vt_rows(vt) + 1, cols), 0);
    assert_int_equal(vt_resize(copy, vt_rows(copy) + 1, cols), 0);
    assert_same_history(vt, copy);
    assert_same_screen(vt, copy);
    assert_same_wraps(vt, copy);
    vt_free(copy);
}

/* The same marks on every history cell (assert_same_history compares
 * characters and colours; marks are an index into each model's table). */
static void assert_same_history_marks(vt_t *a, vt_t *b)
{
    for (int k = 1; k <= vt_scrollback_len(a); k++) {
        int la, lb;
        const vt_cell *x = vt_line(a, -k, &la), *y = vt_line(b, -k, &lb);
        for (int col = 0; col < la && col < lb; col++) {
            char ta[VT_CELL_TEXT_MAX], tb[VT_CELL_TEXT_MAX];
            vt_cell_text(a, &x[col], ta);
            vt_cell_text(b, &y[col], tb);
            if (strcmp(ta, tb) != 0)
                fail_msg("history line -%d cell %d: '%s' / '%s'", k, col, ta, tb);
        }
    }
}

/* A watch in frames (server/watch.c): the client's copy is level with the
 * server's model, output goes on there unseen, and a frame (a fresh model
 * that takes the copy's history, then the sync bytes with the lines that
 * scrolled since) is level again: history, marks, wraps and screen. */
static void test_frame_keeps_history(void **state)
{
    (void)state;
    vt_t *server = mk(6, 20, 200);
    for (int k = 0; k < 15; k++) {
        char line[64];
        snprintf(line, sizeof line, "old %d o\xcc\x88 e\xcc\x81\xcc\xa7 \033[3%dmc\033[0m\r\n", k, k % 8);
        w(server, line);
    }
    w(server, "a line long enough to wrap at twenty columns\r\n");
    size_t len;
    char *bytes = vt_sync_bytes(server, 200, &len);
    vt_t *client = vt_new(6, 20, 200, NULL, NULL);
    vt_write(client, bytes, len);
    free(bytes);
    unsigned sent = vt_history_pushes(server);
    for (int scrolled = 0; scrolled <= 6; scrolled += 3) {
        for (int k = 0; k < scrolled; k++) {
            char line[64];
            snprintf(line, sizeof line, "new %d u\xcc\x88\r\n", k);
            w(server, line);
        }
        w(server, "\033[1mprompt$ \033[0m");
        assert_int_equal(vt_history_pushes(server) - sent, (unsigned)scrolled);
        vt_t *frame = vt_new(6, 20, 200, NULL, NULL);
        /* A fresh model takes the copy's table of marks whole; one with
         * marks of its own (as the screen's never has) enters the
         * history's in its table. */
        if (scrolled != 3)
            w(frame, "x\xcc\x83\xcc\x84 y\xcc\x8a");
        int had = vt_scrollback_len(client);
        assert_true(vt_take_history(frame, client));
        assert_int_equal(vt_scrollback_len(frame), had);
        assert_int_equal(vt_scrollback_len(client), 0); /* moved, not copied */
        assert_false(vt_take_history(frame, client)); /* only into a model without history */
        bytes = vt_sync_bytes(server, scrolled, &len);
        vt_write(frame, bytes, len);
        free(bytes);
        assert_same_history(server, frame);
        assert_same_history_marks(server, frame);
        assert_same_screen(server, frame);
        assert_same_wraps(server, frame);
        vt_free(client);
        client = frame;
        sent = vt_history_pushes(server);
    }
    /* A model of another width takes nothing. */
    vt_t *wide = vt_new(6, 30, 200, NULL, NULL);
    int had = vt_scrollback_len(client);
    assert_false(vt_take_history(wide, client));
    assert_int_equal(vt_scrollback_len(wide), 0);
    assert_int_equal(vt_scrollback_len(client), had);
    vt_free(wide);
    /* One that keeps less history (the setting changed) takes the newest
     * lines, and goes on from there. */
    vt_t *small = vt_new(6, 20, 5, NULL, NULL);
    assert_true(had > 5);
    int len_newest;
    const vt_cell *newest = vt_line(client, -1, &len_newest);
    vt_cell keep[64];
    memcpy(keep, newest, (size_t)len_newest * sizeof *keep);
    assert_true(vt_take_history(small, client));
    assert_int_equal(vt_scrollback_len(small), 5);
    int len_small;
    const vt_cell *got = vt_line(small, -1, &len_small);
    assert_int_equal(len_small, len_newest);
    assert_memory_equal(got, keep, (size_t)len_newest * sizeof *keep);
    w(small, "\r\n\r\n\r\n\r\n\r\n\r\n\r\nmore\r\n");
    assert_int_equal(vt_scrollback_len(small), 5);
    vt_free(small);
    vt_free(client);
    vt_free(server);
}

static void test_sync_round_trip(void **state)
{
    (void)state;
    /* Nothing yet. */
    vt_t *vt = mk(5, 20, 100);
    sync_round_trip(vt);
    vt_free(vt);
    /* Less history than rows, then more; colours and gaps in history. */
    for (int lines = 1; lines < 30; lines += 3) {
        vt = mk(6, 20, 100);
        for (int k = 0; k < lines; k++) {
            char line[128];
            snprintf(line, sizeof line, "%d \033[3%dmcol\033[0m   \033[44m \033[0m  end\r\n", k, k % 8);
            w(vt, line);
        }
        w(vt, "\033[1;33mprompt$ \033[0m");
        sync_round_trip(vt);
        vt_free(vt);
    }
    /* On the alternate screen, with modes and a title: leaving it shows the
     * primary screen as it was. */
    vt = mk(6, 20, 100);
    w(vt, "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\n$ vi");
    w(vt, "\033]2;editing\a\033[?1049h\033[?1h\033=\033[?2004h\033[?1002h\033[?1006h\033[2;3H\033[7m~ alt ~");
    sync_round_trip(vt);
    vt_free(vt);
    /* Random streams: text that wraps (wide characters too), colours,
     * saved cursors, character sets, origin mode and both screens. */
    for (int iter = 0; iter < 200; iter++) {
        vt = mk((int)random_range(1, 8), (int)random_range(4, 30), 1000);
        buf_t b;
        buf_init(&b);
        for (int k = 0; k < 120; k++) {
            switch (random_range(0, 16)) {
            case 0: buf_printf(&b, "\033[%u;%uH", random_range(1, 9), random_range(1, 31)); break;
            case 1: buf_printf(&b, "\033[%u;4%um", random_range(0, 10), random_range(0, 10)); break;
            case 2: buf_puts(&b, "\xe6\xbc\xa2\xf0\x9f\xa7\xaa"); break;
            case 3: buf_puts(&b, "\r\n"); break;
            case 4: buf_puts(&b, random_range(0, 2) ? "\0337" : "\0338"); break;
            case 5: buf_puts(&b, random_range(0, 2) ? "\033[?1049h" : "\033[?1049l"); break;
            case 6: buf_puts(&b, random_range(0, 2) ? "\033(0" : "\033(B"); break;
            case 7: buf_printf(&b, "\033[%uK", random_range(0, 3)); break;
            case 8: buf_puts(&b, "e\xcc\x81"); break;
            case 9: buf_printf(&b, "\033[%uX", random_range(1, 4)); break;
            case 10: buf_puts(&b, random_range(0, 2) ? "\033[?6h" : "\033[?6l"); break;
            default: buf_printf(&b, "%.*s", (int)random_range(1, 40), "lqkxabcdefghijklmnopqrstuvwxyz0123456789ABCD"); break;
            }
        }
        vt_write(vt, b.data, b.len);
        buf_free(&b);
        /* Not made again (vt_sync_bytes says why): a cursor waiting to
         * wrap over a cell that changed under it since. */
        VTermPos p;
        vterm_state_get_cursorpos(vt->state, &p);
        const vt_cell *c = &vt_row_at(vt, p.row)->cells[p.col];
        if (vt->pending_wrap && p.row == vt->wrap_pos.row && p.col == vt->wrap_pos.col &&
            !(c->ch && c->ch != VT_CH_WIDE_CONT && p.col + c->width == vt_cols(vt)))
            w(vt, "\033[H");
        sync_round_trip(vt);
        vt_free(vt);
    }
}

/* ---- damage ---------------------------------------------------------------- */

static void test_damage(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 10);
    assert_true(vt_row_dirty(vt, 0));
    vt_clear_damage(vt);
    for (int r = 0; r < 4; r++)
        assert_false(vt_row_dirty(vt, r));
    w(vt, "\033[3;1Hx");
    assert_false(vt_row_dirty(vt, 0));
    assert_true(vt_row_dirty(vt, 2));
    assert_false(vt_row_dirty(vt, 3));
    vt_clear_damage(vt);
    w(vt, "\033[2;1H\033[K");
    assert_true(vt_row_dirty(vt, 1));
    assert_false(vt_row_dirty(vt, 2));
    vt_clear_damage(vt);
    w(vt, "\033[4;1H\n");
    for (int r = 0; r < 4; r++)
        assert_true(vt_row_dirty(vt, r));
    vt_clear_damage(vt);
    w(vt, "\033[1;1H"); /* moving the cursor changes no row */
    assert_false(vt_row_dirty(vt, 0));
    assert_false(vt_row_dirty(vt, -1));
    assert_false(vt_row_dirty(vt, 4));
    vt_free(vt);
}

/* ---- garbage ---------------------------------------------------------------- */

static void test_garbage(void **state)
{
    (void)state;
    vt_t *vt = mk(24, 80, 100);
    size_t total = 1u << 20;
    char *g = xmalloc(total);
    random_bytes(g, total);
    /* Make escape introducers common so every state is visited. */
    for (size_t k = 0; k < total; k += random_range(1, 40))
        g[k] = "\033[]P_\007\030\\;?"[random_range(0, 10)];
    for (size_t off = 0; off < total;) {
        size_t n = random_range(1, 5000);
        if (n > total - off)
            n = total - off;
        vt_write(vt, g + off, n);
        off += n;
        if (random_range(0, 20) == 0)
            assert_int_equal(vt_resize(vt, (int)random_range(1, 60), (int)random_range(2, 200)), 0);
    }
    for (int r = -vt_scrollback_len(vt); r < vt_rows(vt); r++)
        assert_non_null(vt_line(vt, r, NULL));
    char *t = vt_text(vt, -vt_scrollback_len(vt), vt_rows(vt) - 1, NULL);
    free(t);
    char *rb = vt_redraw_bytes(vt, NULL);
    free(rb);
    assert_int_equal(vt_resize(vt, 10, 30), 0);
    /* Cancel whatever was in progress, reset, and the terminal still works. */
    w(vt, "\030\033\\\033[?1049l\033cok");
    assert_row(vt, 0, "ok");
    free(g);
    vt_free(vt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_plain_text_and_wrap),
        cmocka_unit_test(test_scrollback_order),
        cmocka_unit_test(test_scrollback_bound),
        cmocka_unit_test(test_coloured_history_keeps_colour),
        cmocka_unit_test(test_wide_chars),
        cmocka_unit_test(test_utf8_split_everywhere),
        cmocka_unit_test(test_combining),
        cmocka_unit_test(test_many_combining_sequences_recycle),
        cmocka_unit_test(test_sgr_colours_and_attrs),
        cmocka_unit_test(test_sgr_split_everywhere),
        cmocka_unit_test(test_stops_at_every_offset),
        cmocka_unit_test(test_erase_uses_background),
        cmocka_unit_test(test_insert_delete_and_regions),
        cmocka_unit_test(test_altscreen),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_resize_on_altscreen),
        cmocka_unit_test(test_osc133_split_everywhere),
        cmocka_unit_test(test_osc_7_9_777),
        cmocka_unit_test(test_title_split_everywhere),
        cmocka_unit_test(test_other_strings_never_show),
        cmocka_unit_test(test_long_string_capped),
        cmocka_unit_test(test_csi_with_many_parameters),
        cmocka_unit_test(test_escape_with_high_bytes),
        cmocka_unit_test(test_rep),
        cmocka_unit_test(test_interrupted_sequences),
        cmocka_unit_test(test_huge_single_write),
        cmocka_unit_test(test_resize_with_scroll_region_and_saved_cursor),
        cmocka_unit_test(test_bell),
        cmocka_unit_test(test_replies),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_vt_text),
        cmocka_unit_test(test_redraw_round_trip),
        cmocka_unit_test(test_sync_round_trip),
        cmocka_unit_test(test_frame_keeps_history),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
