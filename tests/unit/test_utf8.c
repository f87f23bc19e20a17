/* Unit tests for the one UTF-8 decoder (src/base/utf8.c): every 1-, 2- and
 * 3-byte sequence and the 4-byte boundaries against the definition
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
 * maximal invalid subparts as Python counts them, truncated characters at
 * the end of a stream, and the helpers built on it. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "protocol/uexec.h"
#include "base/utf8.h"
#include "base/util.h"

/* The definition, written the slow way: the code point the bit pattern
 * spells, then whether that is a scalar value and the shortest form. */
static int32_t reference(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t want;
    uint32_t v;
    if (c < 0x80)
        return n == 1 ? (int32_t)c : -1;
    if ((c & 0xe0) == 0xc0)
        want = 2, v = c & 0x1f;
    else if ((c & 0xf0) == 0xe0)
        want = 3, v = c & 0x0f;
    else if ((c & 0xf8) == 0xf0)
        want = 4, v = c & 0x07;
    else
        return -1;
    if (n != want)
        return -1;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        v = v << 6 | (s[i] & 0x3f);
    }
    static const uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < shortest[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return -1;
    return (int32_t)v;
}

/* utf8_decode agrees with the definition on s[0..n): a character it
 * returns is the one its bytes spell, and when it returns none, no prefix
 * of s is a character. */
static void check_against_reference(const unsigned char *s, size_t n)
{
    int32_t cp;
    size_t used = utf8_decode((const char *)s, n, &cp);
    if (cp >= 0) {
        int32_t want = reference(s, used);
        if (want != cp)
            fail_msg("%02x %02x %02x %02x (%zu bytes): decoded U+%04X from %zu bytes, which spell %s%04X", s[0],
                     n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, (unsigned)cp, used,
                     want < 0 ? "no character, not " : "U+", want < 0 ? (unsigned)cp : (unsigned)want);
        return;
    }
    for (size_t k = 1; k <= n; k++)
        if (reference(s, k) >= 0)
            fail_msg("%02x %02x %02x %02x (%zu bytes): rejected, but the first %zu bytes are U+%04X", s[0],
                     n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, k, (unsigned)reference(s, k));
    if (used < 1 || used > n)
        fail_msg("%02x (%zu bytes): an invalid subpart of %zu bytes", s[0], n, used);
}

static void every_short_sequence_matches_the_definition(void **state)
{
    (void)state;
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        check_against_reference(s, 1);
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            check_against_reference(s, 2);
            if (a < 0xe0 || a > 0xef)
                continue; /* 3 bytes: only E0..EF can start one */
            for (unsigned c = 0; c < 256; c++) {
                s[2] = (unsigned char)c;
                check_against_reference(s, 3);
            }
        }
    }
    /* 4 bytes: every lead and second byte, the edges of the rest. */
    static const unsigned char edge[] = {0x00, 0x41, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xff};
    for (unsigned a = 0xf0; a < 0x100; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t c = 0; c < sizeof edge; c++)
                for (size_t d = 0; d < sizeof edge; d++) {
                    s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = edge[c], s[3] = edge[d];
                    check_against_reference(s, 4);
                }
}

static void invalid_forms_are_rejected(void **state)
{
    (void)state;
    int32_t cp;
    /* An overlong 'A' (the TUI's key names once took it for 'A'). */
    assert_int_equal(utf8_decode("\xc1\x81", 2, &cp), 1);
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xe0\x80\xaf", 3, &cp), 1); /* overlong '/' */
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xed\xa0\x80", 3, &cp), 1); /* U+D800, a surrogate */
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xf4\x90\x80\x80", 4, &cp), 1); /* U+110000 */
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xf5\x80\x80\x80", 4, &cp), 1);
    assert_int_equal(cp, UTF8_INVALID);
    /* A stray continuation byte is one invalid byte: the ASCII after it is
     * not swallowed (the TUI's search once read "\x80abc" as one
     * character). */
    assert_int_equal(utf8_decode("\x80" "abc", 4, &cp), 1);
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xff" "abc", 4, &cp), 1);
    assert_int_equal(cp, UTF8_INVALID);
    /* A good start broken by a non-continuation: the maximal subpart. */
    assert_int_equal(utf8_decode("\xe2\x82" "A", 3, &cp), 2);
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_decode("\xf0\x9f\x98" "A", 4, &cp), 3);
    assert_int_equal(cp, UTF8_INVALID);
}

static void valid_boundaries_decode(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int32_t cp;
    } ok[] = {
        {"\x7f", 0x7f},          {"\xc2\x80", 0x80},         {"\xdf\xbf", 0x7ff},
        {"\xe0\xa0\x80", 0x800}, {"\xed\x9f\xbf", 0xd7ff},   {"\xee\x80\x80", 0xe000},
        {"\xef\xbf\xbf", 0xffff}, {"\xf0\x90\x80\x80", 0x10000}, {"\xf4\x8f\xbf\xbf", 0x10ffff},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int32_t cp;
        assert_int_equal(utf8_decode(ok[i].s, strlen(ok[i].s), &cp), strlen(ok[i].s));
        assert_int_equal(cp, ok[i].cp);
    }
}

static void truncated_start_is_reported_as_such(void **state)
{
    (void)state;
    int32_t cp;
    assert_int_equal(utf8_decode("\xe2\x82", 2, &cp), 2);
    assert_int_equal(cp, UTF8_TRUNCATED);
    assert_int_equal(utf8_decode("\xf0", 1, &cp), 1);
    assert_int_equal(cp, UTF8_TRUNCATED);
    /* A start that can never complete is invalid, not truncated. */
    assert_int_equal(utf8_decode("\xe0\x80", 2, &cp), 1);
    assert_int_equal(cp, UTF8_INVALID);
    assert_int_equal(utf8_complete_prefix("ab\xe2\x82", 4), 2);
    assert_int_equal(utf8_complete_prefix("ab\xe0\x80", 4), 4); /* invalid: nothing to wait for */
    assert_int_equal(utf8_complete_prefix("ab\xe2\x82\xac", 5), 5);
    assert_int_equal(utf8_valid_prefix("ab\xe2\x82\xac" "c\xc0", 7), 6);
    assert_int_equal(utf8_valid_prefix("ab\xe2\x82", 4), 2);
}

/* The decoder's users: the same subparts, the same answers everywhere. */
static void users_agree_with_python(void **state)
{
    (void)state;
    size_t n;
    /* bytes(b"a\xe0\x80\xed\xa0\x80\xf4\x90b").decode("utf-8", "replace")
     * == "a" + 7 * "\ufffd" + "b" */
    const char in[] = "a\xe0\x80\xed\xa0\x80\xf4\x90" "b";
    char *s = uexec_lossy_utf8(in, sizeof in - 1, &n);
    assert_string_equal(s, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                           "b");
    free(s);
    s = sanitize_text(in, sizeof in - 1, 100);
    assert_string_equal(s, "a???????b");
    free(s);
    s = sanitize_text("x\xc2\x9b" "31m\x1b", 7, 100); /* C1 CSI, ESC */
    assert_string_equal(s, "x?31m?");
    free(s);
    s = sanitize_text("\xc3\xa9t\xc3\xa9", 6, 4); /* cut on a character boundary */
    assert_string_equal(s, "\xc3\xa9t");
    free(s);
}

static void prev_steps_back_one_character(void **state)
{
    (void)state;
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    assert_int_equal(utf8_prev(s, 10), 6);
    assert_int_equal(utf8_prev(s, 6), 3);
    assert_int_equal(utf8_prev(s, 3), 1);
    assert_int_equal(utf8_prev(s, 1), 0);
    assert_int_equal(utf8_prev(s, 0), 0);
    assert_int_equal(utf8_lead_length(0xc1), 1);
    assert_int_equal(utf8_lead_length(0xc2), 2);
    assert_int_equal(utf8_lead_length(0xf4), 4);
    assert_int_equal(utf8_lead_length(0xf5), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_short_sequence_matches_the_definition),
        cmocka_unit_test(invalid_forms_are_rejected),
        cmocka_unit_test(valid_boundaries_decode),
        cmocka_unit_test(truncated_start_is_reported_as_such),
        cmocka_unit_test(users_agree_with_python),
        cmocka_unit_test(prev_steps_back_one_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
