/*
 * castskip.c - the search castskip.h explains: a byte-level classifier of
 * the output stream (a small state machine, so a sequence split between
 * events is seen whole) and a queue of candidate points waiting for their
 * window of line feeds.
 *
 * What each byte or sequence is:
 *   window:  text, CR, LF, TAB, BS, BEL; SGR (the pen is followed); OSC
 *            (titles, corral's marks: nothing on the screen); ?25 (followed)
 *            and ?1 ?12 ?1000 ?1002-?1006 ?1015 ?2004 (keys and mouse only);
 *            ESC = and ESC >.  Allowed everywhere.
 *   cells:   cursor motion, erasing, inserting and deleting characters and
 *            lines, scrolling, REP (CSI A-G, H, I, J, K, L, M, P, S, T, X,
 *            Z, @, `, a, b, d, e, f; ESC D, E, M): they change only cells and
 *            the cursor, so they may come before a point, not inside its
 *            window.
 *   anything else ends the search (it may leave state behind that a fresh
 *   model would not have), as does text that is not valid UTF-8 or is a C1
 *   control.
 */
#include "config.h"

#include "record/castskip.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define CSI_MAX 60

enum { S_GROUND, S_ESC, S_CSI, S_OSC, S_OSC_ESC };

struct castskip {
    int rows;
    int state;
    char csi[CSI_MAX];
    size_t csi_len;
    bool dead;            /* a sequence that rules out every later point */
    bool cr;              /* the last byte was CR */
    bool after_crlf;      /* ... the last two were CR LF: the next byte may start a point */
    unsigned utf8_left;   /* continuation bytes the current character still needs */
    unsigned char lead;   /* its first byte */
    uint64_t lf;          /* line feeds so far */
    uint64_t glyphs;      /* printable characters so far */
    char pen[CASTSKIP_PEN_MAX];
    size_t pen_len;
    bool pen_over;        /* more SGRs since the last reset than a point carries */
    bool cursor_hidden;
    castskip_point *queue; /* points waiting for their window, oldest first */
    uint64_t *queue_glyphs;
    size_t cap, head, len;
    castskip_point best;
    bool have_best;
};

castskip_t *castskip_new(int rows)
{
    castskip_t *s = xcalloc(1, sizeof *s);
    s->rows = rows < 1 ? 1 : rows;
    return s;
}

void castskip_free(castskip_t *s)
{
    if (!s)
        return;
    free(s->queue);
    free(s->queue_glyphs);
    free(s);
}

const castskip_point *castskip_best(const castskip_t *s)
{
    return s->have_best ? &s->best : NULL;
}

static uint64_t window(const castskip_t *s)
{
    return 2 * (uint64_t)s->rows;
}

void castskip_resize(castskip_t *s, int rows)
{
    s->rows = rows < 1 ? 1 : rows;
    s->have_best = false;
    s->len = 0;
}

/* A sequence that only changes cells and the cursor: no window spans it. */
static void cells_changed(castskip_t *s)
{
    s->len = 0;
}

static void push_point(castskip_t *s, const void *tag, size_t tag_len, size_t at)
{
    if (s->pen_over)
        return;
    /* At most one point per line feed is waiting, and a point waits for
     * 2*rows of them. */
    size_t need = (size_t)window(s) + 2;
    if (s->cap < need) {
        castskip_point *q = xcalloc(need, sizeof *q);
        uint64_t *g = xcalloc(need, sizeof *g);
        for (size_t i = 0; i < s->len; i++) {
            q[i] = s->queue[(s->head + i) % s->cap];
            g[i] = s->queue_glyphs[(s->head + i) % s->cap];
        }
        free(s->queue);
        free(s->queue_glyphs);
        s->queue = q;
        s->queue_glyphs = g;
        s->cap = need;
        s->head = 0;
    }
    if (s->len == s->cap) { /* cannot happen (see above); drop the oldest */
        s->head = (s->head + 1) % s->cap;
        s->len--;
    }
    size_t i = (s->head + s->len) % s->cap;
    castskip_point *p = &s->queue[i];
    memset(p->tag, 0, sizeof p->tag);
    memcpy(p->tag, tag, tag_len < CASTSKIP_TAG_MAX ? tag_len : CASTSKIP_TAG_MAX);
    p->at = at;
    memcpy(p->pen, s->pen, s->pen_len);
    p->pen_len = s->pen_len;
    p->cursor_hidden = s->cursor_hidden;
    p->lf_at = s->lf;
    s->queue_glyphs[i] = s->glyphs;
    s->len++;
}

/* A line feed: the oldest waiting points whose window is complete (and
 * wrote a character, which a later REP may repeat) become the best. */
static void line_feed(castskip_t *s)
{
    s->lf++;
    while (s->len > 0) {
        castskip_point *p = &s->queue[s->head];
        if (s->lf - p->lf_at < window(s) || s->glyphs == s->queue_glyphs[s->head])
            break;
        s->best = *p;
        s->have_best = true;
        s->head = (s->head + 1) % s->cap;
        s->len--;
    }
}

static void pen_append(castskip_t *s, const char *seq, size_t n)
{
    if (s->pen_over)
        return;
    if (s->pen_len + n > CASTSKIP_PEN_MAX) {
        s->pen_over = true;
        return;
    }
    memcpy(s->pen + s->pen_len, seq, n);
    s->pen_len += n;
}

static bool is_allowed_private_mode(long m)
{
    switch (m) {
    case 1: case 12: case 25: case 1000: case 1002: case 1003: case 1004: case 1005: case 1006: case 1015:
    case 2004:
        return true;
    }
    return false;
}

/* A whole CSI: s->csi holds its parameter and intermediate bytes, final is
 * its last byte. */
static void csi_done(castskip_t *s, char final)
{
    const char *p = s->csi;
    size_t n = s->csi_len;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x30) {
            s->dead = true; /* an intermediate byte: DECSCUSR, DECSTR, ... */
            return;
        }
    if (n > 0 && p[0] == '?') {
        if (final != 'h' && final != 'l') {
            s->dead = true;
            return;
        }
        long m = -1;
        for (size_t i = 1; i <= n; i++) {
            if (i < n && p[i] >= '0' && p[i] <= '9') {
                m = (m < 0 ? 0 : m) * 10 + (p[i] - '0');
                if (m > 100000)
                    m = 100000;
            } else if (i == n || p[i] == ';') {
                if (!is_allowed_private_mode(m)) {
                    s->dead = true;
                    return;
                }
                if (m == 25)
                    s->cursor_hidden = final == 'l';
                m = -1;
            } else {
                s->dead = true;
                return;
            }
        }
        return;
    }
    bool colon = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ':')
            colon = true;
        else if (!(p[i] >= '0' && p[i] <= '9') && p[i] != ';') {
            s->dead = true; /* a private marker or an odd parameter byte */
            return;
        }
    }
    if (final == 'm') {
        /* A first parameter of 0 (or none) resets the pen: what came before
         * no longer matters. */
        size_t k = 0;
        while (k < n && p[k] == '0')
            k++;
        if (k == n || p[k] == ';') {
            s->pen_len = 0;
            s->pen_over = false;
            if (k == n)
                return;
        }
        char seq[CSI_MAX + 3];
        seq[0] = '\033';
        seq[1] = '[';
        memcpy(seq + 2, p, n);
        seq[n + 2] = 'm';
        pen_append(s, seq, n + 3);
        return;
    }
    if (!colon && strchr("ABCDEFGHIJKLMPSTXZ@`abdef", final)) {
        cells_changed(s);
        return;
    }
    s->dead = true;
}

bool castskip_feed(castskip_t *s, const char *data, size_t len, const void *tag, size_t tag_len)
{
    const unsigned char *u = (const unsigned char *)data;
    for (size_t i = 0; i < len && !s->dead; i++) {
        unsigned char c = u[i];
        if (s->state == S_GROUND && !s->utf8_left && !s->after_crlf && c >= 0x20 && c < 0x7f) {
            /* Most of a recording: a run of printable ASCII. */
            size_t j = i + 1;
            while (j < len && u[j] >= 0x20 && u[j] < 0x7f)
                j++;
            s->glyphs += j - i;
            s->cr = false;
            i = j - 1;
            continue;
        }
        switch (s->state) {
        case S_GROUND:
            if (s->utf8_left) {
                bool c1 = s->lead == 0xc2 && c < 0xa0;
                if (c < 0x80 || c > 0xbf || c1) {
                    s->dead = true; /* invalid UTF-8, or a C1 control */
                    break;
                }
                s->lead = 0;
                if (--s->utf8_left == 0)
                    s->glyphs++;
                break;
            }
            if (s->after_crlf) {
                /* A point starts here when the next character is not one
                 * that might join the one before (a combining mark). */
                s->after_crlf = false;
                if (c < 0x80)
                    push_point(s, tag, tag_len, i);
            }
            if (c >= 0x20 && c < 0x7f) {
                s->glyphs++;
                s->cr = false;
            } else if (c == '\r') {
                s->cr = true;
            } else if (c == '\n') {
                line_feed(s);
                s->after_crlf = s->cr;
                s->cr = false;
            } else if (c == '\t' || c == '\b' || c == '\a') {
                s->cr = false;
            } else if (c == 0x1b) {
                s->cr = false;
                s->state = S_ESC;
            } else if (c >= 0xc2 && c <= 0xf4) {
                s->cr = false;
                s->lead = c;
                s->utf8_left = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
            } else {
                s->dead = true; /* another control, DEL, or not UTF-8 */
            }
            break;
        case S_ESC:
            if (c == '[') {
                s->state = S_CSI;
                s->csi_len = 0;
            } else if (c == ']') {
                s->state = S_OSC;
            } else if (c == '=' || c == '>') {
                s->state = S_GROUND;
            } else if (c == 'D' || c == 'E' || c == 'M') {
                cells_changed(s);
                s->state = S_GROUND;
            } else {
                s->dead = true;
            }
            break;
        case S_CSI:
            if (c >= 0x40 && c <= 0x7e) {
                s->state = S_GROUND;
                csi_done(s, (char)c);
            } else if (c >= 0x20 && c < 0x40 && s->csi_len < CSI_MAX) {
                s->csi[s->csi_len++] = (char)c;
            } else {
                s->dead = true; /* a control inside, or too long */
            }
            break;
        case S_OSC:
            if (c == 0x07)
                s->state = S_GROUND;
            else if (c == 0x1b)
                s->state = S_OSC_ESC;
            else if (c < 0x20)
                s->dead = true;
            break;
        case S_OSC_ESC:
            if (c == '\\')
                s->state = S_GROUND;
            else
                s->dead = true;
            break;
        }
    }
    return !s->dead;
}
