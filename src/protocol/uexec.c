/*
 * uexec.c - unified-exec contract: clamping, truncation, envelope.  Pure
 * functions with no I/O so the unit tests can pin every boundary.
 */
#include "config.h"

#include "protocol/uexec.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t uexec_exec_yield(int64_t requested_ms)
{
    int64_t t = requested_ms < 0 ? UEXEC_DEFAULT_EXEC_YIELD_MS : requested_ms;
    if (t < UEXEC_MIN_YIELD_MS)
        t = UEXEC_MIN_YIELD_MS;
    if (t > UEXEC_MAX_YIELD_MS)
        t = UEXEC_MAX_YIELD_MS;
    return (uint32_t)t;
}

uint32_t uexec_write_yield(int64_t requested_ms, bool empty, uint32_t max_background_ms)
{
    int64_t t = requested_ms < 0 ? UEXEC_DEFAULT_WRITE_YIELD_MS : requested_ms;
    if (t < UEXEC_MIN_YIELD_MS)
        t = UEXEC_MIN_YIELD_MS;
    if (empty) {
        int64_t hi = max_background_ms < UEXEC_MIN_EMPTY_YIELD_MS ? UEXEC_MIN_EMPTY_YIELD_MS
                                                                   : max_background_ms;
        if (t < UEXEC_MIN_EMPTY_YIELD_MS)
            t = UEXEC_MIN_EMPTY_YIELD_MS;
        if (t > hi)
            t = hi;
    } else if (t > UEXEC_MAX_YIELD_MS) {
        t = UEXEC_MAX_YIELD_MS;
    }
    return (uint32_t)t;
}

size_t uexec_approx_tokens(size_t bytes)
{
    return bytes / UEXEC_BYTES_PER_TOKEN + (bytes % UEXEC_BYTES_PER_TOKEN != 0);
}

char *uexec_lossy_utf8(const char *s, size_t len, size_t *out_len)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, len);
    size_t i = 0;
    while (i < len) {
        /* Copy the longest valid run in one go; then one U+FFFD for each
         * maximal invalid subpart (a truncated character at the end is one). */
        size_t run = i, n = 0;
        int32_t cp = 0;
        while (run < len && (n = utf8_decode(s + run, len - run, &cp), cp >= 0))
            run += n;
        buf_append(&b, s + i, run - i);
        i = run;
        if (i < len) {
            buf_append(&b, "\xef\xbf\xbd", 3);
            i += n;
        }
    }
    if (out_len)
        *out_len = b.len;
    return buf_steal(&b);
}

/* Is s[i] the first byte of a UTF-8 character (not a continuation byte)? */
static bool char_start(const char *s, size_t i)
{
    return ((unsigned char)s[i] & 0xc0) != 0x80;
}

/* Length of the character starting at s[i] in valid UTF-8. */
static size_t char_len(const char *s, size_t len, size_t i)
{
    size_t j = i + 1;
    while (j < len && !char_start(s, j))
        j++;
    return j - i;
}

char *uexec_truncate_middle(const char *s, size_t len, size_t max_tokens, size_t *out_len)
{
    size_t max_bytes = max_tokens * UEXEC_BYTES_PER_TOKEN;
    buf_t b;
    buf_init(&b);
    if (len == 0 || (max_tokens > 0 && len <= max_bytes)) {
        buf_append(&b, s, len);
        goto done;
    }
    if (max_bytes == 0) {
        buf_printf(&b, "\xe2\x80\xa6%zu tokens truncated\xe2\x80\xa6", uexec_approx_tokens(len));
        goto done;
    }
    /* The prefix takes whole characters ending within left bytes; the
     * suffix starts at the first character boundary at or after
     * len - right. */
    size_t left = max_bytes / 2, right = max_bytes - left;
    size_t prefix_end = 0;
    for (size_t i = 0; i < len;) {
        size_t n = char_len(s, len, i);
        if (i + n > left)
            break;
        i += n;
        prefix_end = i;
    }
    size_t tail_target = len - right;
    size_t suffix_start = tail_target;
    while (suffix_start < len && !char_start(s, suffix_start))
        suffix_start++;
    if (suffix_start < prefix_end)
        suffix_start = prefix_end;
    buf_append(&b, s, prefix_end);
    buf_printf(&b, "\xe2\x80\xa6%zu tokens truncated\xe2\x80\xa6", uexec_approx_tokens(len - max_bytes));
    buf_append(&b, s + suffix_start, len - suffix_start);
done:
    if (out_len)
        *out_len = b.len;
    return buf_steal(&b);
}

/* Line count as Rust's str::lines(): a final line without '\n' counts, a
 * trailing '\n' does not start another. */
static size_t count_lines(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    size_t n = 0;
    for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + len - p))) != NULL; p++)
        n++;
    if (s[len - 1] != '\n')
        n++;
    return n;
}

char *uexec_format_output(const char *s, size_t len, size_t max_tokens, size_t *out_len)
{
    if (len <= max_tokens * UEXEC_BYTES_PER_TOKEN) {
        if (out_len)
            *out_len = len;
        return xstrndup(s, len);
    }
    size_t cut_len;
    char *cut = uexec_truncate_middle(s, len, max_tokens, &cut_len);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "Warning: truncated output (original token count: %zu)\nTotal output lines: %zu\n\n",
               uexec_approx_tokens(len), count_lines(s, len));
    buf_append(&b, cut, cut_len);
    free(cut);
    if (out_len)
        *out_len = b.len;
    return buf_steal(&b);
}

void uexec_chunk_id(char out[7])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[6];
    random_bytes(r, sizeof r);
    for (int i = 0; i < 6; i++)
        out[i] = hex[r[i] & 0xf];
    out[6] = '\0';
}

char *uexec_envelope(const uexec_reply *r, size_t *out_len)
{
    buf_t b;
    buf_init(&b);
    if (r->chunk_id[0])
        buf_printf(&b, "Chunk ID: %s\n", r->chunk_id);
    buf_printf(&b, "Wall time: %.4f seconds\n", r->wall_time);
    if (r->exited)
        buf_printf(&b, "Process exited with code %d\n", r->exit_code);
    else
        buf_printf(&b, "Process running with session ID %d\n", r->session_id);
    buf_printf(&b, "Original token count: %zu\n", r->original_token_count);
    buf_puts(&b, "Output:\n");
    buf_append(&b, r->output, r->output_len);
    if (out_len)
        *out_len = b.len;
    return buf_steal(&b);
}
