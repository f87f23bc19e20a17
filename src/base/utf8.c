/*
 * utf8.c - the one UTF-8 decoder (see utf8.h).
 *
 * Validity is decided on the lead byte and the range of the second byte,
 * as in the Unicode standard's table 3-7 (well-formed byte sequences):
 * E0 needs A0..BF next (else overlong), ED 80..9F (else a surrogate), F0
 * 90..BF (else overlong), F4 80..8F (else above U+10FFFF); C0, C1 and
 * F5..FF start nothing.  Checking the second byte's range instead of the
 * decoded value is what makes the invalid subpart "maximal": E0 80 is two
 * invalid subparts (E0, then 80), not one, exactly as Python and Rust
 * count them.
 */
#include "config.h"

#include "base/utf8.h"

size_t utf8_lead_length(unsigned char c)
{
    if (c >= 0xc2 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    return 1;
}

size_t utf8_decode(const char *s, size_t len, int32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[0];
    if (c < 0x80) {
        *cp = (int32_t)c;
        return 1;
    }
    size_t n = utf8_lead_length((unsigned char)c);
    if (n == 1) { /* a continuation byte, C0, C1, F5..FF */
        *cp = UTF8_INVALID;
        return 1;
    }
    unsigned lo = 0x80, hi = 0xbf;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    uint32_t v = c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if (i >= len) {
            *cp = UTF8_TRUNCATED;
            return len;
        }
        unsigned b = u[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf)) {
            *cp = UTF8_INVALID;
            return i;
        }
        v = v << 6 | (b & 0x3f);
    }
    *cp = (int32_t)v;
    return n;
}

size_t utf8_valid_prefix(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (cp < 0)
            return i;
        i += n;
    }
    return len;
}

size_t utf8_complete_prefix(const char *s, size_t len)
{
    /* Only the last three bytes can start an incomplete sequence. */
    for (size_t i = len > 3 ? len - 3 : 0; i < len; i++) {
        int32_t cp;
        if (utf8_lead_length((unsigned char)s[i]) > 1 && (utf8_decode(s + i, len - i, &cp), cp == UTF8_TRUNCATED))
            return i;
    }
    return len;
}

size_t utf8_prev(const char *s, size_t i)
{
    if (i == 0)
        return 0;
    size_t j = i - 1;
    while (j > 0 && i - j < 4 && ((unsigned char)s[j] & 0xc0) == 0x80)
        j--;
    return j;
}

size_t utf8_put_scalar(uint32_t c, char *out)
{
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        c = 0xfffd;
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}
