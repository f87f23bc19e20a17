/*
 * quote.c - see quote.h.  An argv shown to the person who approves it is
 * the security boundary's last step: what they read must be exactly what
 * runs, so nothing here guesses, cuts or drops.  Characters come from the
 * one UTF-8 decoder (utf8.c); a byte it rejects is shown as \xNN.
 */
#include "config.h"

#include "base/quote.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* ---- what a reader cannot see ------------------------------------------------------ */

typedef struct cp_range {
    uint32_t lo, hi;
} cp_range;

/* Characters that are invisible, change the direction of what follows, or
 * look like an ASCII space or a line break: the Unicode format characters
 * (general category Cf, Unicode 15), the other default-ignorable code
 * points (Hangul fillers, variation selectors, U+034F, the tag block...),
 * the space separators but U+0020 (Zs), U+2028 (Zl), U+2029 (Zp) and the
 * blank braille pattern U+2800.  Sorted, for the binary search. */
static const cp_range hidden_ranges[] = {
    {0x00a0, 0x00a0},   /* no-break space */
    {0x00ad, 0x00ad},   /* soft hyphen */
    {0x034f, 0x034f},   /* combining grapheme joiner */
    {0x0600, 0x0605},   /* Arabic number signs */
    {0x061c, 0x061c},   /* Arabic letter mark */
    {0x06dd, 0x06dd},   /* Arabic end of ayah */
    {0x070f, 0x070f},   /* Syriac abbreviation mark */
    {0x0890, 0x0891},   /* Arabic pound and piastre marks above */
    {0x08e2, 0x08e2},   /* Arabic disputed end of ayah */
    {0x115f, 0x1160},   /* Hangul fillers */
    {0x1680, 0x1680},   /* Ogham space mark */
    {0x17b4, 0x17b5},   /* Khmer inherent vowels */
    {0x180b, 0x180f},   /* Mongolian variation selectors, vowel separator */
    {0x2000, 0x200f},   /* en quad..hair space, zero-width space/(non-)joiner, LRM, RLM */
    {0x2028, 0x202f},   /* line and paragraph separators, bidi embeddings and overrides, narrow nbsp */
    {0x205f, 0x206f},   /* medium math space, word joiner, invisible operators, bidi isolates, deprecated format */
    {0x2800, 0x2800},   /* braille pattern blank */
    {0x3000, 0x3000},   /* ideographic space */
    {0x3164, 0x3164},   /* Hangul filler */
    {0xfe00, 0xfe0f},   /* variation selectors */
    {0xfeff, 0xfeff},   /* zero-width no-break space, byte order mark */
    {0xffa0, 0xffa0},   /* halfwidth Hangul filler */
    {0xfff0, 0xfffb},   /* unassigned specials, interlinear annotation */
    {0x110bd, 0x110bd}, /* Kaithi number sign */
    {0x110cd, 0x110cd}, /* Kaithi number sign above */
    {0x13430, 0x1343f}, /* Egyptian hieroglyph format controls */
    {0x1bca0, 0x1bca3}, /* shorthand format controls */
    {0x1d173, 0x1d17a}, /* musical symbol format controls */
    {0xe0000, 0xe0fff}, /* tags, variation selectors supplement */
};

bool quote_cp_hidden(int32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
        return true; /* C0, DEL, C1; and no character at all */
    size_t lo = 0, hi = sizeof hidden_ranges / sizeof hidden_ranges[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uint32_t)cp < hidden_ranges[mid].lo)
            hi = mid;
        else if ((uint32_t)cp > hidden_ranges[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* ---- escapes ----------------------------------------------------------------------- */

/* Append s[0..len) with every hidden character, and every byte that is not
 * UTF-8, as a $'...' escape; backslash_quote: also \ and ' (inside $'...'). */
static void append_escaped(buf_t *b, const char *s, size_t len, bool backslash_quote)
{
    size_t i = 0;
    while (i < len) {
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (cp < 0) {
            for (size_t k = 0; k < n; k++) /* every byte, so the bytes are exact */
                buf_printf(b, "\\x%02x", (unsigned char)s[i + k]);
        } else if (cp == '\n') {
            buf_puts(b, "\\n");
        } else if (cp == '\t') {
            buf_puts(b, "\\t");
        } else if (cp == '\r') {
            buf_puts(b, "\\r");
        } else if (cp < 0x20 || cp == 0x7f) {
            buf_printf(b, "\\x%02x", (unsigned)cp);
        } else if (quote_cp_hidden(cp)) {
            /* Always 4 or 8 digits: bash reads at most that many. */
            if (cp > 0xffff)
                buf_printf(b, "\\U%08x", (unsigned)cp);
            else
                buf_printf(b, "\\u%04x", (unsigned)cp);
        } else if (backslash_quote && (cp == '\\' || cp == '\'')) {
            buf_putc(b, '\\');
            buf_putc(b, (char)cp);
        } else {
            buf_append(b, s + i, n);
        }
        i += n;
    }
}

/* ---- words ------------------------------------------------------------------------- */

static bool plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("@%+=:,./_-", c));
}

void quote_word_append(buf_t *b, const char *w, bool first)
{
    size_t len = strlen(w);
    bool plain = len > 0, hidden = false;
    for (size_t i = 0; i < len && plain; i++)
        plain = plain_byte((unsigned char)w[i]) && !(first && w[i] == '=');
    if (plain) {
        buf_append(b, w, len);
        return;
    }
    for (size_t i = 0; i < len && !hidden;) {
        int32_t cp;
        i += utf8_decode(w + i, len - i, &cp);
        hidden = quote_cp_hidden(cp);
    }
    if (hidden) {
        buf_puts(b, "$'");
        append_escaped(b, w, len, true);
        buf_putc(b, '\'');
        return;
    }
    buf_putc(b, '\'');
    for (const char *p = w, *q; *p; p = q + 1) {
        q = strchr(p, '\'');
        if (!q) {
            buf_puts(b, p);
            break;
        }
        buf_append(b, p, (size_t)(q - p));
        buf_puts(b, "'\\''"); /* end the quotes, an escaped ', quote again */
    }
    buf_putc(b, '\'');
}

char *quote_argv_display(char *const *argv)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, 0); /* "" rather than NULL for an empty argv */
    for (size_t i = 0; argv && argv[i]; i++) {
        if (i)
            buf_putc(&b, ' ');
        quote_word_append(&b, argv[i], i == 0);
    }
    return buf_steal(&b);
}

char *quote_word_display(const char *word)
{
    buf_t b;
    buf_init(&b);
    quote_word_append(&b, word ? word : "", false);
    return buf_steal(&b);
}

char *quote_text_visible(const char *s, size_t len)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, len);
    append_escaped(&b, s, len, false);
    return buf_steal(&b);
}

char *quote_shorten(const char *text, size_t max)
{
    size_t len = strlen(text);
    if (len <= max)
        return xstrdup(text);
    size_t cut = 0;
    while (cut < max) {
        int32_t cp;
        size_t n = utf8_decode(text + cut, len - cut, &cp);
        if (cut + n > max)
            break;
        cut += n;
    }
    return xasprintf("%.*s\xe2\x80\xa6[cut: %zu more bytes]", (int)cut, text, len - cut);
}

/* ---- JSON ---------------------------------------------------------------------------- */

void quote_json_append(buf_t *out, const char *json, size_t len)
{
    buf_reserve(out, len);
    size_t i = 0, run = 0; /* bytes that pass unchanged, not yet copied */
    while (i < len) {
        unsigned char c = (unsigned char)json[i];
        if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
            i++;
            continue;
        }
        int32_t cp;
        size_t n = utf8_decode(json + i, len - i, &cp);
        if (cp >= 0 && !quote_cp_hidden(cp)) {
            i += n;
            continue;
        }
        buf_append(out, json + run, i - run);
        if (cp < 0)
            buf_puts(out, "\\uFFFD");
        else if (cp > 0xffff) /* upper case hex, as jansson writes its escapes */
            buf_printf(out, "\\u%04X\\u%04X", (unsigned)(0xd800 + ((cp - 0x10000) >> 10)),
                       (unsigned)(0xdc00 + ((cp - 0x10000) & 0x3ff)));
        else
            buf_printf(out, "\\u%04X", (unsigned)cp);
        i += n;
        run = i;
    }
    buf_append(out, json + run, len - run);
}

/* ---- cat -v -------------------------------------------------------------------------- */

/* A byte that is not UTF-8, as cat -v writes a byte >= 0x80. */
static void catv_high_byte(buf_t *b, unsigned char c)
{
    buf_puts(b, "M-");
    c &= 0x7f;
    if (c < 0x20)
        buf_putc(b, '^'), buf_putc(b, (char)(c + '@'));
    else if (c == 0x7f)
        buf_puts(b, "^?");
    else
        buf_putc(b, (char)c);
}

/* Does cat -v change this character (UTF8_INVALID: the bytes of an invalid
 * subpart)? */
static bool catv_changes(const quote_catv *st, int32_t cp)
{
    return cp != '\n' && cp != '\t' && (cp != '\r' || st->show_cr) && (cp < 0x20 || (cp >= 0x7f && cp < 0xa0));
}

/* One character (n bytes at s) that catv_changes. */
static void catv_char(buf_t *b, const char *s, size_t n, int32_t cp)
{
    if (cp < 0) {
        for (size_t k = 0; k < n; k++)
            catv_high_byte(b, (unsigned char)s[k]);
    } else if (cp < 0x20) {
        buf_putc(b, '^');
        buf_putc(b, (char)(cp + '@'));
    } else if (cp == 0x7f) {
        buf_puts(b, "^?");
    } else {
        buf_puts(b, "M-^");
        buf_putc(b, (char)(cp - 0x80 + '@'));
    }
}

void quote_catv_write(quote_catv *st, buf_t *out, const char *s, size_t len, bool final)
{
    size_t i = 0;
    int32_t cp;
    buf_reserve(out, len);
    if (st->carry_len) {
        /* Complete the character the last chunk ended in. */
        char ch[4];
        size_t have = st->carry_len;
        memcpy(ch, st->carry, have);
        size_t n = utf8_decode(ch, have, &cp);
        while (cp == UTF8_TRUNCATED && i < len && have < sizeof ch) {
            ch[have++] = s[i++];
            n = utf8_decode(ch, have, &cp);
        }
        if (cp == UTF8_TRUNCATED && !final) {
            memcpy(st->carry, ch, have);
            st->carry_len = have;
            return;
        }
        if (cp == UTF8_TRUNCATED)
            cp = UTF8_INVALID; /* the stream ended inside it */
        if (catv_changes(st, cp))
            catv_char(out, ch, n, cp);
        else
            buf_append(out, ch, n);
        /* The carry is a valid start, so the character or invalid subpart
         * covers it; bytes taken from s beyond it are read again below. */
        i -= have - n;
        st->carry_len = 0;
    }
    size_t run = i; /* bytes that pass unchanged, not yet copied */
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f) { /* the common case, one byte at a time */
            i++;
            continue;
        }
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (cp == UTF8_TRUNCATED && !final) {
            buf_append(out, s + run, i - run);
            memcpy(st->carry, s + i, n);
            st->carry_len = n;
            return;
        }
        if (cp == UTF8_TRUNCATED)
            cp = UTF8_INVALID;
        if (catv_changes(st, cp)) {
            buf_append(out, s + run, i - run);
            catv_char(out, s + i, n, cp);
            run = i + n;
        }
        i += n;
    }
    buf_append(out, s + run, len - run);
}
