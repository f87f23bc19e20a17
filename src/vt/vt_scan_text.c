/*
 * vt_scan_text.c - the text between escape sequences, for the scanner
 * (vt_scan.h): a character libvterm 0.1.4 would place at the wrong width,
 * any mark, and (without autowrap) any wide character go to the owner on
 * their own; C1 controls encoded in UTF-8 are dropped; SO and SI are
 * noted; a run in a character set other than ASCII is cut after each
 * character from outside ASCII; y and z in DEC line drawing go to the
 * owner as the characters xterm has for them.
 */
#include "config.h"

#include "vt/vt_scan_int.h"

#include "base/util.h"
#include "base/width.h"

#include <pthread.h>
#include <string.h>

typedef struct uc_range {
    uint32_t first, last;
} uc_range;

#define VT_VTERM_TABLE
#include "base/width_table.h"

static bool disagrees_search(uint32_t cp)
{
    size_t lo = 0, hi = sizeof vt_vterm_disagrees / sizeof vt_vterm_disagrees[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < vt_vterm_disagrees[mid].first)
            hi = mid;
        else if (cp > vt_vterm_disagrees[mid].last)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

enum { CH_PASS, CH_DROP, CH_OWNER };

/* The Basic Multilingual Plane's answers, found once: the width (0..2, a
 * code point without one counting 1) in the low bits, and whether libvterm
 * disagrees (BMP_SUBST). */
#define BMP_WIDTH 3u
#define BMP_SUBST 4u
static uint8_t bmp[0x10000];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static unsigned class_of(uint32_t cp)
{
    int w = uc_width(cp);
    return (w < 0 ? 1u : (unsigned)w) | (disagrees_search(cp) ? BMP_SUBST : 0);
}

static void bmp_fill(void)
{
    for (uint32_t cp = 0; cp < 0x10000; cp++)
        bmp[cp] = (uint8_t)class_of(cp);
}

/* What a character from outside ASCII needs: to pass to libvterm as it
 * is, to be dropped (a C1 control), or to go to the owner. */
static int classify(const vt_scan *s, uint32_t cp, int *width, bool *subst)
{
    if (cp < 0xa0) {
        *width = 1;
        *subst = false;
        return CH_DROP;
    }
    unsigned c;
    if (cp < 0x10000) {
        pthread_once(&bmp_once, bmp_fill);
        c = bmp[cp];
    } else {
        c = class_of(cp);
    }
    *width = (int)(c & BMP_WIDTH);
    *subst = (c & BMP_SUBST) != 0;
    return *subst || *width == 0 || (*width == 2 && (s->dec & VT_SCAN_NOWRAP)) ? CH_OWNER : CH_PASS;
}

static void to_owner(vt_scan *s, uint32_t cp, int width, bool subst, const char *bytes, size_t n)
{
    if (s->ops->glyph)
        s->ops->glyph(s->user, cp, width, subst, bytes, n);
}

/* The character at x->p[i, i + n) is cp, from outside ASCII. */
static void text_char(vt_scan *s, scan_pos *x, size_t i, size_t n, uint32_t cp)
{
    int width;
    bool subst;
    int what = classify(s, cp, &width, &subst);
    if (what == CH_PASS) {
        /* libvterm decodes the rest of a write as UTF-8 once it met a
         * character from outside ASCII, whatever set is in GL: the ASCII
         * after it must open a write of its own. */
        unsigned char next = i + n < x->len ? (unsigned char)x->p[i + n] : 0;
        if (next >= 0x20 && next < 0x7f && vt_charsets_special(&s->cs))
            vt_scan_feed_run(s, x, i + n);
        return;
    }
    vt_scan_feed_run(s, x, i);
    x->run = i + n;
    if (what == CH_OWNER)
        to_owner(s, cp, width, subst, x->p + i, n);
}

/* The bytes a run of plain text stops at: SO, SI, ESC and everything
 * from 0x80 on. */
#define X16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
static const uint8_t text_stop[256] = {
    [C_SO] = 1, [C_SI] = 1, [C_ESC] = 1,
    [0x80] = X16, X16, X16, X16, X16, X16, X16, X16,
};
#undef X16

/* Whether any of the eight bytes of x is one of text_stop's: from 0x80
 * on, ESC, or SO or SI (the two that are 0x0f once their low bit is set).
 * A byte equal to b is a zero byte of x ^ b, and (v - ones) & ~v & highs
 * is not 0 exactly when v has a zero byte. */
static bool word_has_stop(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t esc = x ^ (ones * C_ESC), sosi = (x | ones) ^ (ones * C_SI);
    return ((x | ((esc - ones) & ~esc) | ((sosi - ones) & ~sosi)) & highs) != 0;
}

/* The first stop at or after i (len if none): plain text is most of what
 * a terminal reads, so it is skipped eight bytes at a time. */
static size_t next_stop(const unsigned char *p, size_t i, size_t len)
{
    uint64_t x;
    while (len - i >= sizeof x) {
        memcpy(&x, p + i, sizeof x);
        if (word_has_stop(x))
            break;
        i += sizeof x;
    }
    while (i < len && !text_stop[p[i]])
        i++;
    return i;
}

/* DEC line drawing in libvterm 0.1.4 has y and z as U+2A7D and U+2A7E;
 * xterm's are U+2264 and U+2265 (less-than and greater-than or equal).
 * In a run of text [from, end) in that set they go to the owner as those,
 * whose UTF-8 libvterm takes as it is whatever set is in GL. */
static void line_drawing_fix(vt_scan *s, scan_pos *x, size_t from, size_t end)
{
    for (size_t k = from; k < end; k++) {
        if (x->p[k] != 'y' && x->p[k] != 'z')
            continue;
        vt_scan_feed_run(s, x, k);
        x->run = k + 1;
        to_owner(s, x->p[k] == 'y' ? 0x2264 : 0x2265, 1, false, x->p[k] == 'y' ? "\xe2\x89\xa4" : "\xe2\x89\xa5", 3);
    }
}

/* Text up to the next ESC: SO and SI switch GL, and characters from
 * outside ASCII are looked at.  Stops early at a character cut off by the
 * end of the write (the end of vt_scan_write holds it). */
void vt_scan_text_bytes(vt_scan *s, scan_pos *x)
{
    const unsigned char *p = (const unsigned char *)x->p;
    size_t i = x->i, len = x->len;
    for (;;) {
        size_t from = i;
        i = next_stop(p, i, len);
        if (s->cs.g[s->cs.gl & 3] == '0')
            line_drawing_fix(s, x, from, i);
        if (i >= len || p[i] == C_ESC)
            break;
        if (p[i] == C_SO || p[i] == C_SI) {
            s->cs.gl = p[i] == C_SO ? 1 : 0;
            i++;
            continue;
        }
        int32_t cp;
        size_t n;
        if (p[i] >= 0xe1 && p[i] <= 0xec && i + 2 < len && (p[i + 1] & 0xc0) == 0x80 &&
            (p[i + 2] & 0xc0) == 0x80) {
            /* the commonest long character (CJK, symbols): three bytes,
             * never overlong or a surrogate with these lead bytes */
            cp = (int32_t)((p[i] & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu));
            n = 3;
        } else {
            n = utf8_decode(x->p + i, len - i, &cp);
        }
        if (cp == UTF8_TRUNCATED) {
            i = len;
            break;
        }
        if (cp >= 0) /* an invalid byte is libvterm's U+FFFD */
            text_char(s, x, i, n, (uint32_t)cp);
        i += n;
    }
    x->i = i;
}

void vt_scan_text(vt_scan *s, const char *bytes, size_t len)
{
    scan_pos x = { bytes, len, 0, 0, 0 };
    while (x.i < len) {
        vt_scan_text_bytes(s, &x);
        if (x.i < len) { /* no ESC belongs in cell text: left out */
            vt_scan_feed_run(s, &x, x.i);
            x.run = ++x.i;
        }
    }
    vt_scan_feed_run(s, &x, len);
}

/* Complete a character cut off by the previous write from the start of this
 * one and feed it alone: libvterm keeps its decoder state across writes only
 * when the character opens the write.  Returns false if the whole input went
 * into the character and it is still incomplete. */
bool vt_scan_utf8_resume(vt_scan *s, scan_pos *x)
{
    size_t need = utf8_lead_length((unsigned char)s->utf8[0]);
    while (s->utf8_len < need && x->i < x->len && ((unsigned char)x->p[x->i] & 0xc0) == 0x80)
        s->utf8[s->utf8_len++] = x->p[x->i++];
    if (s->utf8_len < need && x->i == x->len)
        return false;
    int32_t cp;
    size_t n = utf8_decode(s->utf8, s->utf8_len, &cp);
    int width;
    bool subst;
    int what = n == s->utf8_len && cp >= 0 ? classify(s, (uint32_t)cp, &width, &subst) : CH_PASS;
    if (what == CH_PASS)
        vt_scan_feed(s, s->utf8, s->utf8_len);
    else if (what == CH_OWNER)
        to_owner(s, (uint32_t)cp, width, subst, s->utf8, s->utf8_len);
    s->utf8_len = 0;
    x->run = x->i;
    return true;
}

