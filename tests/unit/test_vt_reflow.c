/*
 * test_vt_reflow.c - changing the terminal's width keeps every line whole:
 * lines that wrapped join again and wrap at the new width, hard newlines
 * stay, the cursor stays on its character, history reflows too, and the
 * alternate screen is cut, not reflowed (as tmux does).
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

/* What `seq -s " " 1 60` prints: 170 characters on one line. */
static char *seq_line(void)
{
    buf_t b;
    buf_init(&b);
    for (int i = 1; i <= 60; i++)
        buf_printf(&b, i == 1 ? "%d" : " %d", i);
    return buf_steal(&b);
}

/* Row r is s[from, to) of a longer text (vt_text trims the spaces at the
 * end). */
static void assert_row_part(vt_t *vt, int r, const char *s, size_t from, size_t to)
{
    char want[512];
    int n = snprintf(want, sizeof want, "%.*s", (int)(to - from), s + from);
    while (n > 0 && want[n - 1] == ' ')
        want[--n] = '\0';
    assert_row(vt, r, want);
}

/* The scenario: the line is cut at the narrow width and never comes
 * back without reflow. */
static void test_seq_line_survives_narrowing_and_widening(void **state)
{
    (void)state;
    char *seq = seq_line();
    assert_int_equal(strlen(seq), 170);
    vt_t *vt = mk(24, 120, 1000);
    w(vt, "$ seq -s \" \" 1 60\r\n");
    w(vt, seq);
    w(vt, "\r\n$ ");
    assert_row_part(vt, 1, seq, 0, 120);
    assert_row_part(vt, 2, seq, 120, 170);
    assert_cursor(vt, 3, 2);

    assert_int_equal(vt_resize(vt, 24, 80), 0);
    assert_row(vt, 0, "$ seq -s \" \" 1 60");
    assert_row_part(vt, 1, seq, 0, 80);
    assert_row_part(vt, 2, seq, 80, 160);
    assert_row_part(vt, 3, seq, 160, 170);
    assert_row(vt, 4, "$");
    assert_cursor(vt, 4, 2);

    assert_int_equal(vt_resize(vt, 24, 120), 0);
    assert_row_part(vt, 1, seq, 0, 120);
    assert_row_part(vt, 2, seq, 120, 170);
    assert_row(vt, 3, "$");
    assert_cursor(vt, 3, 2);

    assert_int_equal(vt_resize(vt, 24, 200), 0);
    assert_row(vt, 1, seq);
    assert_row(vt, 2, "$");
    assert_cursor(vt, 2, 2);
    /* The shell goes on where it was. */
    w(vt, "ls\r\nfile\r\n");
    assert_row(vt, 2, "$ ls");
    assert_row(vt, 3, "file");
    assert_cursor(vt, 4, 0);

    /* corral screen's text of the whole model has the line whole. */
    char *all = vt_text(vt, -vt_scrollback_len(vt), vt_rows(vt) - 1, NULL);
    assert_non_null(strstr(all, seq));
    free(all);
    free(seq);
    vt_free(vt);
}

static void test_hard_newlines_stay(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 100);
    w(vt, "short\r\nlines\r\n0123456789\r\nend");
    assert_int_equal(vt_resize(vt, 5, 20), 0);
    assert_row(vt, 0, "short");
    assert_row(vt, 1, "lines");
    assert_row(vt, 2, "0123456789"); /* full width, then a newline: not joined */
    assert_row(vt, 3, "end");
    assert_cursor(vt, 3, 3);
    assert_false(vt_line_wrapped(vt, 2));
    vt_free(vt);
}

/* The cursor stays on the character it was on. */
static void test_cursor_stays_on_its_character(void **state)
{
    (void)state;
    vt_t *vt = mk(6, 10, 100);
    w(vt, "0123456789abcdefghij\033[2;6H");
    assert_int_equal(cell(vt, 1, 5)->ch, 'f');
    assert_int_equal(vt_resize(vt, 6, 7), 0);
    assert_row(vt, 0, "0123456");
    assert_row(vt, 1, "789abcd");
    assert_row(vt, 2, "efghij");
    assert_cursor(vt, 2, 1);
    assert_int_equal(vt_resize(vt, 6, 30), 0);
    assert_row(vt, 0, "0123456789abcdefghij");
    assert_cursor(vt, 0, 15);
    w(vt, "F");
    assert_row(vt, 0, "0123456789abcdeFghij");
    vt_free(vt);
}

/* A cursor waiting to wrap after the last column keeps waiting when the
 * line still ends at the edge, and the next character goes on the next
 * line as part of the same one. */
static void test_pending_wrap_survives(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 100);
    w(vt, "0123456789");
    assert_int_equal(vt_resize(vt, 4, 5), 0);
    assert_row(vt, 0, "01234");
    assert_row(vt, 1, "56789");
    assert_cursor(vt, 1, 4);
    w(vt, "X");
    assert_row(vt, 2, "X");
    assert_int_equal(vt_resize(vt, 4, 20), 0);
    assert_row(vt, 0, "0123456789X");
    assert_cursor(vt, 0, 11);
    vt_free(vt);
    /* Wider: the cursor is just after the text. */
    vt = mk(4, 10, 100);
    w(vt, "0123456789");
    assert_int_equal(vt_resize(vt, 4, 12), 0);
    assert_cursor(vt, 0, 10);
    w(vt, "X");
    assert_row(vt, 0, "0123456789X");
    vt_free(vt);
}

/* History lines reflow too. */
static void test_history_reflows(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 100);
    w(vt, "abcdefghijklmnopqrstuvwxy\r\n1\r\n2\r\n3\r\n4");
    assert_int_equal(vt_scrollback_len(vt), 4); /* three rows of the long line, and 1 */
    assert_row(vt, -4, "abcdefghij");
    assert_int_equal(vt_resize(vt, 3, 30), 0);
    assert_int_equal(vt_scrollback_len(vt), 2);
    assert_row(vt, -2, "abcdefghijklmnopqrstuvwxy");
    assert_row(vt, -1, "1");
    assert_row(vt, 0, "2");
    assert_row(vt, 2, "4");
    assert_int_equal(vt_resize(vt, 3, 4), 0);
    assert_row(vt, -8, "abcd");
    assert_row(vt, -2, "y");
    assert_row(vt, -1, "1");
    assert_row(vt, 2, "4");
    assert_cursor(vt, 2, 1);
    vt_free(vt);
}

/* A wide character that does not fit at the end of a row goes to the next
 * whole, leaving the last column empty; joined again it closes the gap. */
static void test_wide_characters_reflow(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 6, 100);
    /* a 漢 字 b 漢 字: 10 columns */
    w(vt, "a\xe6\xbc\xa2\xe5\xad\x97" "b\xe6\xbc\xa2\xe5\xad\x97");
    assert_row(vt, 0, "a\xe6\xbc\xa2\xe5\xad\x97" "b");
    assert_int_equal(vt_resize(vt, 4, 4), 0);
    assert_row(vt, 0, "a\xe6\xbc\xa2");
    assert_int_equal(cell(vt, 0, 3)->ch, 0);
    assert_row(vt, 1, "\xe5\xad\x97" "b");
    assert_row(vt, 2, "\xe6\xbc\xa2\xe5\xad\x97");
    assert_int_equal(vt_resize(vt, 4, 11), 0);
    assert_row(vt, 0, "a\xe6\xbc\xa2\xe5\xad\x97" "b\xe6\xbc\xa2\xe5\xad\x97");
    assert_cursor(vt, 0, 10);
    vt_free(vt);
}

/* The alternate screen is cut, not reflowed; the primary screen behind it
 * is, and the cursor saved on entering comes back on the same character. */
static void test_alternate_screen_is_not_reflowed(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 100);
    w(vt, "$ 0123456789abc\033[?1049h\033[H0123456789ABCDE");
    assert_int_equal(vt_resize(vt, 4, 20), 0);
    assert_row(vt, 0, "0123456789");
    assert_row(vt, 1, "ABCDE");
    assert_int_equal(vt_resize(vt, 4, 5), 0);
    assert_row(vt, 0, "01234");
    assert_row(vt, 1, "ABCDE");
    assert_int_equal(vt_resize(vt, 4, 20), 0);
    w(vt, "\033[?1049l");
    assert_row(vt, 0, "$ 0123456789abc");
    assert_cursor(vt, 0, 15);
    w(vt, "d");
    assert_row(vt, 0, "$ 0123456789abcd");
    vt_free(vt);
}

/* With room below, narrowing keeps the screen's top where it is; a full
 * screen keeps its bottom, so narrowing and widening again give the same
 * screen. */
static void test_where_the_screen_stays(void **state)
{
    (void)state;
    vt_t *vt = mk(6, 10, 100);
    w(vt, "top\r\n0123456789abcde\r\n$ ");
    assert_int_equal(vt_resize(vt, 6, 5), 0);
    assert_int_equal(vt_scrollback_len(vt), 0);
    assert_row(vt, 0, "top");
    assert_row(vt, 1, "01234");
    assert_row(vt, 4, "$");
    assert_cursor(vt, 4, 2);
    vt_free(vt);

    vt = mk(4, 10, 100);
    w(vt, "h1\r\nh2\r\nh3\r\nab\r\n0123456789abcde\r\n$ ");
    assert_row(vt, 3, "$");
    char *before = vt_text(vt, -vt_scrollback_len(vt), 3, NULL);
    assert_int_equal(vt_resize(vt, 4, 5), 0);
    assert_row(vt, 3, "$");
    assert_row(vt, 2, "abcde");
    assert_int_equal(vt_resize(vt, 4, 10), 0);
    char *after = vt_text(vt, -vt_scrollback_len(vt), 3, NULL);
    assert_string_equal(before, after);
    assert_cursor(vt, 3, 2);
    free(before);
    free(after);
    vt_free(vt);
}

/* Which lines continue on the next one. */
static void test_wrapped_flags(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 5, 100);
    w(vt, "0123456789ab\r\nxy");
    assert_true(vt_line_wrapped(vt, 0));
    assert_true(vt_line_wrapped(vt, 1));
    assert_false(vt_line_wrapped(vt, 2));
    assert_false(vt_line_wrapped(vt, 3));
    /* Erasing the lines below a line ends its wrap; so does erasing it. */
    w(vt, "\033[2;4H\033[J");
    assert_true(vt_line_wrapped(vt, 0));
    assert_false(vt_line_wrapped(vt, 1));
    w(vt, "\033[1;1H\033[2K");
    assert_false(vt_line_wrapped(vt, 0));
    /* A wide character that does not fit wraps the line too. */
    w(vt, "\033[4;1Habcd\xe6\xbc\xa2");
    assert_true(vt_line_wrapped(vt, 3));
    assert_false(vt_line_wrapped(vt, 4));
    vt_free(vt);
    /* Wraps scroll into history with their lines. */
    vt = mk(2, 4, 100);
    w(vt, "abcdefgh\r\n");
    assert_int_equal(vt_scrollback_len(vt), 1);
    assert_true(vt_line_wrapped(vt, -1));
    assert_false(vt_line_wrapped(vt, 0));
    vt_free(vt);
}

/* A client's copy made from the sync bytes reflows as the server's model
 * does: both end with the same screen and history. */
static void test_copy_reflows_the_same(void **state)
{
    (void)state;
    char *seq = seq_line();
    vt_t *vt = mk(8, 50, 1000);
    for (int k = 0; k < 5; k++) {
        w(vt, seq);
        w(vt, "\r\n\033[32m$\033[0m ");
    }
    w(vt, "ab\xe6\xbc\xa2");
    size_t len;
    char *bytes = vt_sync_bytes(vt, 1000, &len);
    vt_t *copy = vt_new(8, 50, 1000, NULL, NULL);
    vt_write(copy, bytes, len);
    free(bytes);
    int sizes[][2] = { { 8, 80 }, { 6, 33 }, { 10, 7 }, { 8, 50 }, { 3, 200 } };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        assert_int_equal(vt_resize(vt, sizes[k][0], sizes[k][1]), 0);
        assert_int_equal(vt_resize(copy, sizes[k][0], sizes[k][1]), 0);
        char *a = vt_text(vt, -vt_scrollback_len(vt), vt_rows(vt) - 1, NULL);
        char *b = vt_text(copy, -vt_scrollback_len(copy), vt_rows(copy) - 1, NULL);
        assert_string_equal(a, b);
        free(a);
        free(b);
        for (int r = -vt_scrollback_len(vt); r < vt_rows(vt); r++)
            assert_int_equal(vt_line_wrapped(vt, r), vt_line_wrapped(copy, r));
        int r1, c1, r2, c2;
        vt_cursor(vt, &r1, &c1);
        vt_cursor(copy, &r2, &c2);
        assert_int_equal(r1, r2);
        assert_int_equal(c1, c2);
    }
    char *all = vt_text(vt, -vt_scrollback_len(vt), vt_rows(vt) - 1, NULL);
    assert_non_null(strstr(all, seq));
    free(all);
    free(seq);
    vt_free(copy);
    vt_free(vt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_line_survives_narrowing_and_widening),
        cmocka_unit_test(test_hard_newlines_stay),
        cmocka_unit_test(test_cursor_stays_on_its_character),
        cmocka_unit_test(test_pending_wrap_survives),
        cmocka_unit_test(test_history_reflows),
        cmocka_unit_test(test_wide_characters_reflow),
        cmocka_unit_test(test_alternate_screen_is_not_reflowed),
        cmocka_unit_test(test_where_the_screen_stays),
        cmocka_unit_test(test_wrapped_flags),
        cmocka_unit_test(test_copy_reflows_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
