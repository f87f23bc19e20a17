/* Unit tests for the unified-exec contract: yield clamping, the head/tail
 * buffer, lossy UTF-8, middle truncation with its marker and header, and the
 * reply envelope, each against the Codex CLI's exact behaviour. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/headtail.h"
#include "protocol/uexec.h"

static void exec_yield_clamps(void **state)
{
    (void)state;
    assert_int_equal(uexec_exec_yield(-1), 10000);
    assert_int_equal(uexec_exec_yield(0), 250);
    assert_int_equal(uexec_exec_yield(249), 250);
    assert_int_equal(uexec_exec_yield(1000), 1000);
    assert_int_equal(uexec_exec_yield(30000), 30000);
    assert_int_equal(uexec_exec_yield(30001), 30000);
}

static void write_yield_clamps(void **state)
{
    (void)state;
    /* Non-empty writes: default 250, floor 250, cap 30000. */
    assert_int_equal(uexec_write_yield(-1, false, 300000), 250);
    assert_int_equal(uexec_write_yield(10, false, 300000), 250);
    assert_int_equal(uexec_write_yield(50000, false, 300000), 30000);
    /* Empty polls: 5000..max_background, whose floor is 5000. */
    assert_int_equal(uexec_write_yield(-1, true, 300000), 5000);
    assert_int_equal(uexec_write_yield(10000, true, 300000), 10000);
    assert_int_equal(uexec_write_yield(1000000, true, 300000), 300000);
    assert_int_equal(uexec_write_yield(10000, true, 1000), 5000);
}

static void headtail_keeps_head_and_newest_tail(void **state)
{
    (void)state;
    headtail_t h;
    headtail_init(&h, 10);
    headtail_push(&h, "abc", 3);
    size_t n;
    char *b = headtail_bytes(&h, &n);
    assert_string_equal(b, "abc");
    free(b);
    headtail_push(&h, "defgh", 5);
    b = headtail_bytes(&h, &n);
    assert_string_equal(b, "abcdefgh");
    free(b);
    headtail_push(&h, "ijklmnop", 8); /* longer than the tail budget */
    assert_int_equal(headtail_omitted(&h), 6);
    b = headtail_bytes_with_marker(&h, &n);
    assert_string_equal(b, "abcde\n... 6 bytes omitted ...\nlmnop");
    free(b);
    headtail_push(&h, "q", 1);
    assert_int_equal(headtail_omitted(&h), 7);
    assert_int_equal(headtail_retained(&h), 10);
    b = headtail_drain(&h, &n);
    assert_string_equal(b, "abcdemnopq");
    free(b);
    assert_int_equal(headtail_retained(&h), 0);
    assert_int_equal(headtail_omitted(&h), 0);
    headtail_free(&h);
}

static void headtail_ring_wraps_byte_by_byte(void **state)
{
    (void)state;
    headtail_t h;
    headtail_init(&h, 1024 * 1024);
    /* 3 MiB in odd-sized pieces: the head is the first 512 KiB, the tail
     * the last 512 KiB, everything between is counted as omitted. */
    size_t total = 3u << 20;
    char *src = malloc(total);
    for (size_t i = 0; i < total; i++)
        src[i] = (char)('a' + (i * 7 + i / 13) % 26);
    for (size_t off = 0; off < total;) {
        size_t k = 4093;
        if (off + k > total)
            k = total - off;
        headtail_push(&h, src + off, k);
        off += k;
    }
    size_t n;
    char *b = headtail_bytes(&h, &n);
    assert_int_equal(n, 1u << 20);
    assert_memory_equal(b, src, 512u << 10);
    assert_memory_equal(b + (512u << 10), src + total - (512u << 10), 512u << 10);
    assert_int_equal(headtail_omitted(&h), total - (1u << 20));
    free(b);
    free(src);
    headtail_free(&h);
}

static void lossy_utf8_replaces_maximal_subparts(void **state)
{
    (void)state;
    size_t n;
    char *s = uexec_lossy_utf8("a\xff" "b", 3, &n);
    assert_string_equal(s, "a\xef\xbf\xbd" "b");
    free(s);
    s = uexec_lossy_utf8("\xe2\x82" "A", 3, &n); /* truncated 3-byte char */
    assert_string_equal(s, "\xef\xbf\xbd" "A");
    free(s);
    s = uexec_lossy_utf8("\xed\xa0\x80", 3, &n); /* a surrogate: 3 errors */
    assert_string_equal(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(s);
    s = uexec_lossy_utf8("\xf0\x9f\x98\x80!", 5, &n);
    assert_string_equal(s, "\xf0\x9f\x98\x80!");
    assert_int_equal(n, 5);
    free(s);
}

static void truncation_keeps_prefix_and_suffix(void **state)
{
    (void)state;
    size_t n;
    char *s = uexec_truncate_middle("abcdefghij", 10, 1, &n);
    assert_string_equal(s, "ab\xe2\x80\xa6" "2 tokens truncated\xe2\x80\xa6" "ij");
    free(s);
    s = uexec_truncate_middle("abcdefghij", 10, 3, &n); /* fits in 12 bytes */
    assert_string_equal(s, "abcdefghij");
    free(s);
    s = uexec_truncate_middle("abc", 3, 0, &n);
    assert_string_equal(s, "\xe2\x80\xa6" "1 tokens truncated\xe2\x80\xa6");
    free(s);
}

static void truncation_respects_utf8_boundaries(void **state)
{
    (void)state;
    size_t n;
    /* "aéééé": the prefix stops before a character that would cross the
     * 2-byte budget, the suffix starts at the first boundary in the tail. */
    char *s = uexec_truncate_middle("a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 9, 1, &n);
    assert_string_equal(s, "a\xe2\x80\xa6" "2 tokens truncated\xe2\x80\xa6\xc3\xa9");
    free(s);
}

static void formatted_output_has_warning_header(void **state)
{
    (void)state;
    size_t n;
    char *s = uexec_format_output("abcdefghij", 10, 1, &n);
    assert_string_equal(s, "Warning: truncated output (original token count: 3)\nTotal output lines: 1\n\n"
                           "ab\xe2\x80\xa6" "2 tokens truncated\xe2\x80\xa6" "ij");
    free(s);
    s = uexec_format_output("a\nb\nc\n", 6, 1, &n);
    assert_non_null(strstr(s, "Total output lines: 3\n"));
    free(s);
    s = uexec_format_output("short", 5, 10000, &n);
    assert_string_equal(s, "short");
    free(s);
}

static void approx_tokens_rounds_up(void **state)
{
    (void)state;
    assert_int_equal(uexec_approx_tokens(0), 0);
    assert_int_equal(uexec_approx_tokens(1), 1);
    assert_int_equal(uexec_approx_tokens(4), 1);
    assert_int_equal(uexec_approx_tokens(5), 2);
}

static void envelope_exited_and_running(void **state)
{
    (void)state;
    uexec_reply r = {.wall_time = 0.01234567, .exited = true, .exit_code = 0, .original_token_count = 1,
                     .output = "hi\n", .output_len = 3};
    memcpy(r.chunk_id, "6e6db0", 7);
    size_t n;
    char *s = uexec_envelope(&r, &n);
    assert_string_equal(s, "Chunk ID: 6e6db0\nWall time: 0.0123 seconds\nProcess exited with code 0\n"
                           "Original token count: 1\nOutput:\nhi\n");
    free(s);
    r.exited = false;
    r.session_id = 52328;
    r.wall_time = 30.0024;
    s = uexec_envelope(&r, &n);
    assert_string_equal(s, "Chunk ID: 6e6db0\nWall time: 30.0024 seconds\nProcess running with session ID 52328\n"
                           "Original token count: 1\nOutput:\nhi\n");
    free(s);
}

static void chunk_ids_are_six_hex_digits(void **state)
{
    (void)state;
    char a[7], b[7];
    uexec_chunk_id(a);
    uexec_chunk_id(b);
    assert_int_equal(strlen(a), 6);
    assert_int_equal(strspn(a, "0123456789abcdef"), 6);
    /* 16^6 values: two equal ids in a row would mean no randomness. */
    uexec_chunk_id(b);
    char c[7];
    uexec_chunk_id(c);
    assert_false(strcmp(a, b) == 0 && strcmp(b, c) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_yield_clamps),
        cmocka_unit_test(write_yield_clamps),
        cmocka_unit_test(headtail_keeps_head_and_newest_tail),
        cmocka_unit_test(headtail_ring_wraps_byte_by_byte),
        cmocka_unit_test(lossy_utf8_replaces_maximal_subparts),
        cmocka_unit_test(truncation_keeps_prefix_and_suffix),
        cmocka_unit_test(truncation_respects_utf8_boundaries),
        cmocka_unit_test(formatted_output_has_warning_header),
        cmocka_unit_test(approx_tokens_rounds_up),
        cmocka_unit_test(envelope_exited_and_running),
        cmocka_unit_test(chunk_ids_are_six_hex_digits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
