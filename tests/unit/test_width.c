/*
 * test_width.c - the one width function (src/base/width.c) is glibc's wcwidth()
 * under C.UTF-8 for every code point, and the text helpers built on it
 * measure and cut text the way the screen draws it.
 */
#define _XOPEN_SOURCE 700
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <string.h>
#include <wchar.h>

#include "base/width.h"

static void test_every_code_point_is_wcwidth(void **state)
{
    (void)state;
    if (!setlocale(LC_ALL, "C.UTF-8"))
        fail_msg("the C.UTF-8 locale is missing; glibc 2.35 and later have it built in");
    long wrong = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        int want = cp >= 0xD800 && cp <= 0xDFFF ? -1 : wcwidth((wchar_t)cp);
        int got = uc_width(cp);
        if (got != want && wrong++ < 10)
            print_error("U+%04X: uc_width %d, wcwidth %d\n", cp, got, want);
    }
    if (wrong)
        fail_msg("%ld code points differ from this C library's wcwidth(): regenerate src/base/width_table.h "
                 "(tests/tools/gen_width_table.c says how)",
                 wrong);
    assert_int_equal(uc_width(0x110000), -1);
    assert_int_equal(uc_width(0xFFFFFFFFu), -1);
    setlocale(LC_ALL, "C");
}

static void test_known_widths(void **state)
{
    (void)state;
    assert_int_equal(uc_width('a'), 1);
    assert_int_equal(uc_width(0x1F9EA), 2); /* test tube, Unicode 11 */
    assert_int_equal(uc_width(0x1F7E0), 2); /* orange circle, Unicode 12 */
    assert_int_equal(uc_width(0x1FAE0), 2); /* melting face, Unicode 14 */
    assert_int_equal(uc_width(0x4E00), 2);
    assert_int_equal(uc_width(0x0301), 0);
    assert_int_equal(uc_width(0x1E94A), 0); /* Adlam nukta, Unicode 9 */
    assert_int_equal(uc_width(0x200B), 0);
    assert_int_equal(uc_width(0x0085), -1);
    assert_int_equal(uc_width(0x07), -1);
    assert_int_equal(uc_width(0), 0);
}

static void test_text_width_and_fit(void **state)
{
    (void)state;
    const char *cjk = "\xe4\xbc\x9a\xe8\xaf\x9d" "a"; /* 会话a */
    assert_int_equal(uc_text_width(cjk, strlen(cjk)), 5);
    /* e + combining acute is one column; an invalid byte and a control
     * count one each (drawn as a replacement character). */
    assert_int_equal(uc_text_width("e\xcc\x81", 3), 1);
    assert_int_equal(uc_text_width("\xff" "\x01", 2), 2);
    int w;
    assert_int_equal(uc_text_fit(cjk, strlen(cjk), 3, &w), 3);
    assert_int_equal(w, 2);
    assert_int_equal(uc_text_fit(cjk, strlen(cjk), 4, &w), 6);
    assert_int_equal(w, 4);
    assert_int_equal(uc_text_fit(cjk, strlen(cjk), 99, &w), 7);
    assert_int_equal(w, 5);
    /* A mark stays with the character it belongs to. */
    assert_int_equal(uc_text_fit("ae\xcc\x81x", 5, 2, &w), 4);
    assert_int_equal(w, 2);
    assert_int_equal(uc_text_fit(cjk, strlen(cjk), 1, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_point_is_wcwidth),
        cmocka_unit_test(test_known_widths),
        cmocka_unit_test(test_text_width_and_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
