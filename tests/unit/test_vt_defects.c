/*
 * test_vt_defects.c - the terminal model against xterm in the sequences
 * scripts and curses programs use less often: each test carries the
 * minimal sequence of one defect found by differential testing, and what
 * xterm shows for it.
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

#include "base/utf8.h"
#include "base/util.h"
#include "vt/vt.h"
#include "vt_helpers.h"
#include "base/width.h"

static void assert_default_colours(vt_t *vt, int row, int col)
{
    assert_int_equal(cell(vt, row, col)->fg, VT_COLOR_DEFAULT);
    assert_int_equal(cell(vt, row, col)->bg, VT_COLOR_DEFAULT);
    assert_int_equal(cell(vt, row, col)->attrs, 0);
}

/* A copy made from the sync bytes, then the same bytes to both: the same
 * screen, cell by cell. */
static void assert_copy_behaves_the_same(vt_t *vt, const char *more)
{
    size_t len;
    char *bytes = vt_sync_bytes(vt, 100, &len);
    vt_t *copy = vt_new(vt_rows(vt), vt_cols(vt), 100, NULL, NULL);
    vt_write(copy, bytes, len);
    free(bytes);
    w(vt, more);
    w(copy, more);
    for (int r = 0; r < vt_rows(vt); r++) {
        char *a = row_text(vt, r), *b = row_text(copy, r);
        assert_string_equal(a, b);
        free(a);
        free(b);
        for (int c = 0; c < vt_cols(vt); c++) {
            const vt_cell *x = cell(vt, r, c), *y = cell(copy, r, c);
            if (x->fg != y->fg || x->bg != y->bg || x->attrs != y->attrs)
                fail_msg("row %d col %d: fg %x/%x bg %x/%x attrs %x/%x", r, c, x->fg, y->fg, x->bg, y->bg,
                         x->attrs, y->attrs);
        }
    }
    int r1, c1, r2, c2;
    vt_cursor(vt, &r1, &c1);
    vt_cursor(copy, &r2, &c2);
    assert_int_equal(r1, r2);
    assert_int_equal(c1, c2);
    assert_string_equal(vt_title(vt), vt_title(copy));
    vt_free(copy);
}

/* ---- the sync stream ---------------------------------------------------------- */

/* A copy made while the model holds part of a character or a sequence
 * (the write before ended inside it) takes the rest as the model does: a
 * wide character split by the sync, in the middle of a row and where it no
 * longer fits before the right margin, and a control sequence. */
static void test_sync_in_the_middle_of_a_character(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 0);
    w(vt, "0123\xe6");
    assert_copy_behaves_the_same(vt, "\xbc\xa2X");
    assert_row(vt, 0, "0123\xe6\xbc\xa2X");
    vt_free(vt);
    vt = mk(3, 10, 0);
    w(vt, "012345678\xe6\xbc");
    assert_copy_behaves_the_same(vt, "\xa2X");
    assert_row(vt, 1, "\xe6\xbc\xa2X");
    vt_free(vt);
    vt = mk(3, 10, 0);
    w(vt, "0123456789\xf0\x9f");
    assert_copy_behaves_the_same(vt, "\xa7\xaaX");
    assert_row(vt, 1, "\xf0\x9f\xa7\xaaX");
    vt_free(vt);
    vt = mk(3, 10, 0);
    w(vt, "ab\033[3");
    assert_copy_behaves_the_same(vt, "1mc\033[0m");
    assert_int_equal(cell(vt, 0, 2)->fg, VT_COLOR_INDEXED(1));
    vt_free(vt);
    vt = mk(3, 10, 0);
    w(vt, "ab\033]2;ti");
    assert_copy_behaves_the_same(vt, "tle\acd");
    assert_string_equal(vt_title(vt), "title");
    vt_free(vt);
}

/* ---- saving and restoring the cursor --------------------------------------- */

/* `tput rmcup` in a script's exit trap, with no smcup before: xterm
 * restores a cursor that was never saved as the home position with the
 * default rendition.  libvterm's never-saved pen is black on black. */
static void test_restore_of_a_never_saved_cursor(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 20, 0);
    w(vt, "before\r\n\033[?1049lafter");
    assert_row(vt, 0, "aftere");
    assert_row(vt, 1, "");
    assert_cursor(vt, 0, 5);
    for (int c = 0; c < 6; c++)
        assert_default_colours(vt, 0, c);
    vt_free(vt);
    /* The same with DECRC, after colours were set. */
    vt = mk(4, 20, 0);
    w(vt, "\033[31mx\033[3;3H\0338y");
    assert_row(vt, 0, "y");
    assert_default_colours(vt, 0, 0);
    vt_free(vt);
    /* And in a client's copy made from the sync bytes. */
    vt = mk(4, 20, 0);
    w(vt, "\033[32mbefore\r\n");
    assert_copy_behaves_the_same(vt, "\033[?1049lafter");
    vt_free(vt);
}

/* The cursor saved on entering the alternate screen is not the one a save
 * inside it makes: xterm keeps one per screen. */
static void test_alternate_screen_keeps_its_own_saved_cursor(void **state)
{
    (void)state;
    vt_t *vt = mk(6, 20, 0);
    w(vt, "ab\033[?1049h\033[5;5H\0337\033[?1049lZ");
    assert_row(vt, 0, "abZ");
    assert_row(vt, 4, "");
    assert_cursor(vt, 0, 3);
    vt_free(vt);
    /* A save on the primary screen, then the alternate screen saves and
     * restores its own. */
    vt = mk(6, 20, 0);
    w(vt, "\033[2;3H\0337\033[?47h\033[4;4H\0337\033[H\0338A\033[?47l\0338B");
    assert_row(vt, 1, "  B");
    vt_free(vt);
    /* The saved cursors reach a client's copy. */
    vt = mk(6, 20, 0);
    w(vt, "\033[33mab\033[?1049h\033[5;5H\033[34m\0337\033[H");
    assert_copy_behaves_the_same(vt, "\0338X\033[?1049lY\0338Z");
    vt_free(vt);
}

/* Without left/right margin mode CSI s and CSI u save and restore the
 * cursor (SCOSC, SCORC); with it, CSI s sets the margins. */
static void test_csi_s_and_u_save_and_restore(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 20, 0);
    w(vt, "a8\033[sZ");
    assert_row(vt, 0, "a8Z");
    w(vt, "\r\nstatus\033[u!");
    assert_row(vt, 0, "a8!");
    assert_cursor(vt, 0, 3);
    /* A status line kept with them: every update lands on its row. */
    w(vt, "\033[4;1H\033[s\033[1;10Hone\033[u\033[s\033[1;10Htwo\033[ulog");
    assert_row(vt, 3, "log");
    assert_row(vt, 0, "a8!      two");
    vt_free(vt);
    /* DECLRMM on: CSI s is DECSLRM, which homes the cursor. */
    vt = mk(4, 20, 0);
    w(vt, "\033[?69hab\033[sZ");
    assert_row(vt, 0, "Zb");
    vt_free(vt);
}

/* DECRC brings back the character sets DECSC saw. */
static void test_restore_brings_back_the_line_drawing_set(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033(0\0337\033(B\0338q");
    assert_int_equal(cell(vt, 0, 0)->ch, 0x2500);
    w(vt, "\033(B\r\n\0338q");
    assert_int_equal(cell(vt, 0, 0)->ch, 0x2500);
    vt_free(vt);
}

/* ESC c forgets the saved cursor: a restore after it goes home. */
static void test_reset_forgets_the_saved_cursor(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 0);
    w(vt, "\033[3;3H\0337\033c\0338X");
    assert_row(vt, 0, "X");
    assert_row(vt, 2, "");
    vt_free(vt);
    /* ... and leaves the alternate screen. */
    vt = mk(4, 10, 0);
    w(vt, "p\033[?1049halt\033c");
    assert_false(vt_modes(vt) & VT_MODE_ALTSCREEN);
    w(vt, "q");
    assert_row(vt, 0, "q");
    vt_free(vt);
}

/* ---- alternate screen modes and queries ------------------------------------- */

static void test_mode_47(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 10);
    w(vt, "primary\033[?47h\033[HALT");
    assert_true(vt_modes(vt) & VT_MODE_ALTSCREEN);
    assert_row(vt, 0, "ALT");
    w(vt, "\033[?47l");
    assert_false(vt_modes(vt) & VT_MODE_ALTSCREEN);
    assert_row(vt, 0, "primary");
    vt_free(vt);
}

static void test_decrqm_reports_the_alternate_screen(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 0);
    w(vt, "\033[?1049$p");
    assert_string_equal(rec.reply, "\033[?1049;2$y");
    rec.reply_len = 0;
    w(vt, "\033[?1049h\033[?1049$p\033[?1047$p\033[?47$p");
    assert_string_equal(rec.reply, "\033[?1049;1$y\033[?1047;1$y\033[?47;1$y");
    vt_free(vt);
}

static void test_decrqss_sgr_answers_like_xterm(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 0);
    w(vt, "\033P$qm\033\\");
    assert_string_equal(rec.reply, "\033P1$r0m\033\\");
    rec.reply_len = 0;
    w(vt, "\033[1;2;4;31;48;5;200m\033P$qm\033\\");
    assert_string_equal(rec.reply, "\033P1$r0;1;4;2;31;48:5:200m\033\\");
    rec.reply_len = 0;
    w(vt, "\033[0;38;2;1;2;3;101m\033P$qm\033\\");
    assert_string_equal(rec.reply, "\033P1$r0;38:2::1:2:3;101m\033\\");
    vt_free(vt);
}

/* The alternate screen named among many modes: the others are still set
 * (libvterm takes 16 parameters at most; found by the fuzzer). */
static void test_many_modes_with_the_alternate_screen(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 10, 0);
    w(vt, "\033[?1049h");
    w(vt, "\033[?;;;;;;;;;;;;;;;;;;25;1049;1;2004;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1l");
    assert_false(vt_modes(vt) & (VT_MODE_ALTSCREEN | VT_MODE_CURSOR_VISIBLE | VT_MODE_APP_CURSOR));
    w(vt, "\033[?1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;1049;2004h");
    assert_true(vt_modes(vt) & VT_MODE_ALTSCREEN);
    assert_true(vt_modes(vt) & VT_MODE_BRACKETED_PASTE);
    assert_true(vt_modes(vt) & VT_MODE_APP_CURSOR);
    vt_free(vt);
}

/* ---- text --------------------------------------------------------------------- */

/* DECALN fills the screen with E and homes the cursor. */
static void test_decaln_homes_the_cursor(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 4, 0);
    w(vt, "\033[31m\033[3;3H\033#8");
    assert_row(vt, 0, "EEEE");
    assert_row(vt, 2, "EEEE");
    assert_cursor(vt, 0, 0);
    assert_default_colours(vt, 1, 1);
    w(vt, "x");
    assert_row(vt, 0, "xEEE");
    /* xterm resets the attributes but keeps the colours. */
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 0)->bg, VT_COLOR_DEFAULT);
    vt_free(vt);
}

/* The pen's colours outlive DECALN, its attributes do not; the E's are
 * in the default rendition. */
static void test_decaln_keeps_the_colours(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 4, 0);
    w(vt, "\033[1;32;43m\033#8X");
    assert_int_equal(cell(vt, 0, 0)->ch, 'X');
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(2));
    assert_int_equal(cell(vt, 0, 0)->bg, VT_COLOR_INDEXED(3));
    assert_int_equal(cell(vt, 0, 0)->attrs, 0);
    assert_default_colours(vt, 0, 1);
    assert_default_colours(vt, 2, 3);
    vt_free(vt);
}

/* C0 controls inside a control sequence are carried out where they are,
 * also when an ESC interrupts the sequence (in one write and split). */
static void test_controls_inside_an_interrupted_csi(void **state)
{
    (void)state;
    vt_t *vt = mk(4, 10, 0);
    w(vt, "abc\033[0\r\n\033[mZ");
    assert_row(vt, 0, "abc");
    assert_row(vt, 1, "Z");
    assert_cursor(vt, 1, 1);
    vt_free(vt);
    vt = mk(4, 10, 0);
    w(vt, "abc\033[0\r");
    w(vt, "\n\033[mZ");
    assert_row(vt, 0, "abc");
    assert_row(vt, 1, "Z");
    assert_cursor(vt, 1, 1);
    vt_free(vt);
    /* An interrupted ESC sequence too. */
    vt = mk(4, 10, 0);
    w(vt, "abc\033(\r\033[mZ");
    assert_row(vt, 0, "Zbc");
    vt_free(vt);
}

/* EL, ECH, ICH, DCH and ED end a wait to wrap: the next glyph goes in
 * the last column. */
static void test_erasing_and_inserting_end_the_wait_to_wrap(void **state)
{
    (void)state;
    static const char *const seqs[] = { "\033[K", "\033[X", "\033[@", "\033[P", "\033[1K", "\033[J", "\033[2J" };
    static const char *const rows0[] = { "012345678Z", "012345678Z", "012345678Z", "012345678Z",
                                         "         Z", "012345678Z", "         Z" };
    for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
        vt_t *vt = mk(3, 10, 0);
        w(vt, "0123456789");
        w(vt, seqs[k]);
        w(vt, "Z");
        assert_row(vt, 0, rows0[k]);
        assert_row(vt, 1, "");
        assert_cursor(vt, 0, 9);
        vt_free(vt);
    }
    /* After a wide glyph xterm's cursor is on its second column. */
    vt_t *vt = mk(3, 10, 0);
    w(vt, "01234567\xe6\xbc\xa2\033[KZ");
    assert_row(vt, 0, "01234567 Z");
    assert_row(vt, 1, "");
    vt_free(vt);
    /* ED 3 erases only history: the cursor still waits. */
    vt = mk(3, 10, 0);
    w(vt, "0123456789\033[3JZ");
    assert_row(vt, 1, "Z");
    vt_free(vt);
}

/* A scroll region must be two lines at least: xterm ignores any other,
 * leaving the region and the cursor as they were. */
static void test_one_line_scroll_region_is_ignored(void **state)
{
    (void)state;
    vt_t *vt = mk(5, 10, 0);
    w(vt, "\033[2;4H\033[3;3rX");
    assert_row(vt, 1, "   X");
    /* no region: a line feed at the bottom scrolls the whole screen */
    w(vt, "\033[5;1H\nY");
    assert_row(vt, 4, "Y");
    assert_row(vt, 0, "   X");
    vt_free(vt);
    /* A region set before stays. */
    vt = mk(5, 10, 0);
    w(vt, "\033[2;3r\033[2;1Hold\033[4;4H\033[4;2rA\033[3;1H\nB");
    assert_row(vt, 3, "   A");
    assert_row(vt, 1, "");
    assert_row(vt, 2, "B");
    vt_free(vt);
}

/* A mark goes on the character in the cell before the cursor: after an
 * erase or a scroll there is none there, and nothing comes back. */
static void test_mark_does_not_revive_erased_text(void **state)
{
    (void)state;
    static const char *const seqs[] = { "\033[2J", "\033[T", "\033[S", "\033[L", "\033[1K" };
    for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
        vt_t *vt = mk(4, 10, 0);
        w(vt, "\033[2;1Hab");
        w(vt, seqs[k]);
        w(vt, "\xcc\x81");
        char *t = vt_text(vt, 0, 3, NULL);
        if (strstr(t, "\xcc\x81"))
            fail_msg("after %s the mark came back: %s", seqs[k] + 1, t);
        free(t);
        assert_cursor(vt, 1, 2);
        vt_free(vt);
    }
    /* With the character still there it goes on it. */
    vt_t *vt = mk(4, 10, 0);
    w(vt, "ab\033[3;1H\033[K\033[1;3H");
    w(vt, "x\xcc\x81");
    assert_row(vt, 0, "abx\xcc\x81");
    vt_free(vt);
}

/* A mark changes the character it goes on, not its rendition. */
static void test_mark_keeps_the_rendition_of_its_character(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "1\033[1;44m\xcc\x81");
    assert_row(vt, 0, "1\xcc\x81");
    assert_int_equal(cell(vt, 0, 0)->attrs, 0);
    assert_int_equal(cell(vt, 0, 0)->bg, VT_COLOR_DEFAULT);
    /* Also in the last column, waiting to wrap, and in a later write. */
    w(vt, "\033[0;31m\033[1;10H9\033[1;44m");
    w(vt, "\xcc\x82");
    assert_int_equal(cell(vt, 0, 9)->fg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 9)->attrs, 0);
    assert_int_equal(cell(vt, 0, 9)->bg, VT_COLOR_DEFAULT);
    char buf[VT_CELL_TEXT_MAX];
    assert_int_equal(vt_cell_text(vt, cell(vt, 0, 9), buf), 3);
    vt_free(vt);
}

/* DEC line drawing: y and z are less-than-or-equal and greater-than-or-
 * equal, as xterm draws them. */
static void test_line_drawing_y_and_z(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033(0xyz{\033(Byz");
    assert_int_equal(cell(vt, 0, 0)->ch, 0x2502);
    assert_int_equal(cell(vt, 0, 1)->ch, 0x2264);
    assert_int_equal(cell(vt, 0, 2)->ch, 0x2265);
    assert_int_equal(cell(vt, 0, 3)->ch, 0x3C0);
    assert_int_equal(cell(vt, 0, 4)->ch, 'y');
    assert_int_equal(cell(vt, 0, 5)->ch, 'z');
    /* In G1 shifted in, and repeated. */
    w(vt, "\r\n\033)0\x0ey\033[2bq\x0fz");
    assert_row(vt, 1, "\xe2\x89\xa4\xe2\x89\xa4\xe2\x89\xa4\xe2\x94\x80z");
    vt_free(vt);
}

/* The line-drawing set stays in force after a character from outside
 * ASCII in the same run. */
static void test_line_drawing_after_non_ascii(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033(0lqk\xe2\x94\x80lqk");
    assert_row(vt, 0, "\xe2\x94\x8c\xe2\x94\x80\xe2\x94\x90\xe2\x94\x80\xe2\x94\x8c\xe2\x94\x80\xe2\x94\x90");
    w(vt, "\033(B\r\n\xc3\xa9lqk");
    assert_row(vt, 1, "\xc3\xa9lqk");
    vt_free(vt);
}

/* UTF-8-encoded C1 controls are nothing: they neither move the cursor nor
 * show. */
static void test_utf8_c1_code_points(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 20, 0);
    w(vt, "caf\xc3\xa2\xc2\x80\xc2\x99s end");
    assert_row(vt, 0, "caf\xc3\xa2s end");
    assert_cursor(vt, 0, 9);
    vt_free(vt);
}

/* With autowrap off a wide character that does not fit in the last column
 * is not written and does not wrap. */
static void test_no_autowrap_wide_char_at_last_column(void **state)
{
    (void)state;
    vt_t *vt = mk(3, 5, 0);
    w(vt, "\033[?7l\033[1;5H\xe6\xbc\xa2");
    assert_row(vt, 0, "");
    assert_row(vt, 1, "");
    assert_cursor(vt, 0, 4);
    /* One column more to the left it fits. */
    w(vt, "\033[1;4H\xe6\xbc\xa2");
    assert_row(vt, 0, "   \xe6\xbc\xa2");
    assert_row(vt, 1, "");
    /* Narrow text still overwrites the last column. */
    w(vt, "\r\nabcdefg");
    assert_row(vt, 1, "abcdg");
    vt_free(vt);
}

/* More than five marks on one character all stay. */
static void test_many_combining_marks_kept(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "a\xcc\x81\xcc\x82\xcc\x83\xcc\x84\xcc\x85\xcc\x86\xcc\x87!");
    char buf[VT_CELL_TEXT_MAX];
    size_t n = vt_cell_text(vt, cell(vt, 0, 0), buf);
    assert_int_equal(n, 15);
    assert_memory_equal(buf, "a\xcc\x81\xcc\x82\xcc\x83\xcc\x84\xcc\x85\xcc\x86\xcc\x87", 15);
    assert_int_equal(cell(vt, 0, 1)->ch, '!');
    vt_free(vt);
}

/* ---- SGR ---------------------------------------------------------------------- */

/* SGR 58 (underline colour) and its arguments are not attributes. */
static void test_sgr_58_is_skipped_whole(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033[31m\033[58;2;255;0;0mX\033[0m\033[58;5;1mY\033[59mZ\033[4:3;58:2::1:2:3mW");
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 0)->attrs, 0);
    assert_int_equal(cell(vt, 0, 1)->attrs, 0);
    assert_int_equal(cell(vt, 0, 1)->fg, VT_COLOR_DEFAULT);
    assert_int_equal(cell(vt, 0, 2)->attrs, 0);
    assert_int_equal(cell(vt, 0, 3)->attrs, VT_ATTR_UNDERLINE);
    assert_int_equal(cell(vt, 0, 3)->fg, VT_COLOR_DEFAULT);
    vt_free(vt);
}

/* Colon truecolour with and without the colour-space field. */
static void test_colon_truecolour(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033[38:2::255:128:0mA\033[48:2:9:255:128:1mB\033[38:2:1:2:3mC\033[0;38:5:100mD");
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_RGB(255, 128, 0));
    assert_int_equal(cell(vt, 0, 1)->bg, VT_COLOR_RGB(255, 128, 1));
    assert_int_equal(cell(vt, 0, 2)->fg, VT_COLOR_RGB(1, 2, 3));
    assert_int_equal(cell(vt, 0, 3)->fg, VT_COLOR_INDEXED(100));
    assert_int_equal(cell(vt, 0, 3)->bg, VT_COLOR_DEFAULT);
    vt_free(vt);
}

/* An index past 255 is no colour: the one before stays. */
static void test_colour_index_out_of_range(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033[31;38;5;300mX\033[48;5;256;1mY\033[38;2;1;300;3mZ");
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(1));
    assert_int_equal(cell(vt, 0, 1)->bg, VT_COLOR_DEFAULT);
    assert_int_equal(cell(vt, 0, 1)->attrs, VT_ATTR_BOLD);
    assert_int_equal(cell(vt, 0, 2)->fg, VT_COLOR_INDEXED(1));
    vt_free(vt);
}

/* A parameter with more subparameters than libvterm's 16 argument slots
 * (which it would write past) is dropped, the rest of the SGR kept. */
static void test_sgr_with_many_subparameters(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 10, 0);
    w(vt, "\033[1;14:2::1::::::::::::::::::::::::::::2:3;31mX");
    assert_int_equal(cell(vt, 0, 0)->attrs, VT_ATTR_BOLD);
    assert_int_equal(cell(vt, 0, 0)->fg, VT_COLOR_INDEXED(1));
    w(vt, "\033[0;4::::::::::::::::::::::::::3;32mY");
    assert_int_equal(cell(vt, 0, 1)->attrs, 0);
    assert_int_equal(cell(vt, 0, 1)->fg, VT_COLOR_INDEXED(2));
    vt_free(vt);
}

/* ---- widths ------------------------------------------------------------------- */

/* Emoji from Unicode 10 on take two columns, as glibc says. */
static void test_new_emoji_are_wide(void **state)
{
    (void)state;
    vt_t *vt = mk(2, 20, 0);
    w(vt, "\xf0\x9f\xa7\xaa|\xf0\x9f\x9f\xa0|");
    assert_int_equal(cell(vt, 0, 0)->ch, 0x1F9EA);
    assert_int_equal(cell(vt, 0, 0)->width, 2);
    assert_int_equal(cell(vt, 0, 2)->ch, '|');
    assert_int_equal(cell(vt, 0, 3)->ch, 0x1F7E0);
    assert_int_equal(cell(vt, 0, 5)->ch, '|');
    assert_cursor(vt, 0, 6);
    assert_row(vt, 0, "\xf0\x9f\xa7\xaa|\xf0\x9f\x9f\xa0|");
    /* Split between writes, and repeated with REP. */
    w(vt, "\r\n\xf0\x9f\xa7");
    w(vt, "\xaa\033[2b|");
    assert_row(vt, 1, "\xf0\x9f\xa7\xaa\xf0\x9f\xa7\xaa\xf0\x9f\xa7\xaa|");
    /* A newer combining mark joins the character before it. */
    w(vt, "\r\na\xf0\x9e\xa5\x8a" "b");
    assert_int_equal(cell(vt, 1, 0)->ch, 'a');
    assert_int_equal(cell(vt, 1, 1)->ch, 'b');
    char buf[VT_CELL_TEXT_MAX];
    assert_int_equal(vt_cell_text(vt, cell(vt, 1, 0), buf), 5);
    vt_free(vt);
}

/* Every code point lands at the width the one width function gives it
 * (nothing for C1 controls; one column for one without a width), and is
 * what the cell holds. */
static void test_every_code_point_at_its_width(void **state)
{
    (void)state;
    vt_t *vt = vt_new(2, 10, 0, NULL, NULL);
    long wrong = 0;
    for (uint32_t cp = 0xA0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char b[16] = "\rA";
        size_t n = 2 + utf8_put_scalar(cp, b + 2);
        vt_write(vt, b, n);
        int want = uc_width(cp) < 0 ? 1 : uc_width(cp), row, col;
        vt_cursor(vt, &row, &col);
        int len;
        const vt_cell *l = vt_line(vt, 0, &len);
        bool ok = col == 1 + want;
        if (want > 0)
            ok = ok && l[1].ch == cp && l[1].width == (want == 2 ? 2 : 1);
        else
            ok = ok && l[0].ch == 'A' && l[0].comb != 0;
        if (!ok && wrong++ < 10)
            print_error("U+%04X: width %d, cursor at %d, cell %x\n", cp, want, col, l[1].ch);
    }
    if (wrong)
        fail_msg("%ld code points are not placed at their width", wrong);
    vt_free(vt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_in_the_middle_of_a_character),
        cmocka_unit_test(test_restore_of_a_never_saved_cursor),
        cmocka_unit_test(test_alternate_screen_keeps_its_own_saved_cursor),
        cmocka_unit_test(test_csi_s_and_u_save_and_restore),
        cmocka_unit_test(test_restore_brings_back_the_line_drawing_set),
        cmocka_unit_test(test_reset_forgets_the_saved_cursor),
        cmocka_unit_test(test_mode_47),
        cmocka_unit_test(test_decrqm_reports_the_alternate_screen),
        cmocka_unit_test(test_decrqss_sgr_answers_like_xterm),
        cmocka_unit_test(test_many_modes_with_the_alternate_screen),
        cmocka_unit_test(test_decaln_homes_the_cursor),
        cmocka_unit_test(test_decaln_keeps_the_colours),
        cmocka_unit_test(test_controls_inside_an_interrupted_csi),
        cmocka_unit_test(test_erasing_and_inserting_end_the_wait_to_wrap),
        cmocka_unit_test(test_one_line_scroll_region_is_ignored),
        cmocka_unit_test(test_mark_does_not_revive_erased_text),
        cmocka_unit_test(test_mark_keeps_the_rendition_of_its_character),
        cmocka_unit_test(test_line_drawing_y_and_z),
        cmocka_unit_test(test_line_drawing_after_non_ascii),
        cmocka_unit_test(test_utf8_c1_code_points),
        cmocka_unit_test(test_no_autowrap_wide_char_at_last_column),
        cmocka_unit_test(test_many_combining_marks_kept),
        cmocka_unit_test(test_sgr_58_is_skipped_whole),
        cmocka_unit_test(test_colon_truecolour),
        cmocka_unit_test(test_colour_index_out_of_range),
        cmocka_unit_test(test_sgr_with_many_subparameters),
        cmocka_unit_test(test_new_emoji_are_wide),
        cmocka_unit_test(test_every_code_point_at_its_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
