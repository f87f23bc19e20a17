/*
 * vt_scan.c - hold escape sequences whole in front of libvterm.
 *
 * The scanner is a small DEC-style state machine that only cares where a
 * sequence ends, not what it means:
 *
 *   ground --ESC--> escape --[--> CSI ----final--> ground
 *                          --]/P/_/^/X--> string --BEL or ESC \--> ground
 *
 * In ground it looks for the next ESC and leaves everything in between in
 * a "run" of input that is fed to libvterm with one call, unless a
 * character in it needs the owner (see vt_scan.h): the run is cut there.
 * SO and SI are noted on the way.  ESC and
 * CSI sequences stay in the run too, unless a write ends inside one: then
 * the part before it is fed and the unfinished sequence is copied to the
 * hold buffer, completed byte by byte from the next write, and fed whole.
 * libvterm is never left inside a sequence between two writes: a sequence
 * interrupted by ESC is dropped but for the C0 controls in it, which are
 * carried out (libvterm would cancel it there, but the next sequence may
 * be one it never sees), a CSI cut short by a byte
 * >= 0x80 is fed with that byte right after it (libvterm ends it there),
 * and libvterm ignores bytes >= 0x80 after an ESC, as the scanner does.
 *
 * Escape strings are the exception: their bytes always go to the hold buffer
 * (C0 controls dropped, capped at VT_SCAN_STRING_MAX) and are never part of
 * a run.  When the terminator arrives the string is reported (OSC 133, 7, 9,
 * 777), fed whole with a BEL or ESC \ terminator (OSC 0/1/2, the DECRQSS
 * requests libvterm answers), or dropped (every other OSC and DCS, APC, PM,
 * SOS).  As libvterm does, an ESC inside a string that is not followed by
 * '\' aborts the string and starts a new escape sequence; CAN and SUB abort
 * it too.
 *
 * A CSI is also where libvterm 0.1.4 can be made to write out of bounds
 * (more than 16 parameters): such a CSI is held whole and rewritten.
 *
 * Where a sequence ends follows libvterm 0.1.4, found by probing it, so the
 * two never disagree about being inside a string: after ESC, bytes >= 0x80
 * are ignored and [ ] P open CSI, OSC and DCS even after intermediates; a
 * CSI ends at its final byte, ESC, CAN, SUB or a byte >= 0x80.  REP goes
 * to the owner, never to libvterm, and so do the sequences vt_scan.h lists
 * (intercept); SGRs libvterm would misread are rewritten (vt_sgr.h).
 */
#include "config.h"

#include "vt/vt_scan.h"
#include "vt/vt_scan_int.h"

#include "base/util.h"
#include "vt/vt.h"
#include "vt/vt_sgr.h"
#include "base/width.h"

#include <stdlib.h>
#include <string.h>


void vt_charsets_reset(vt_charsets *cs)
{
    memset(cs->g, 'B', sizeof cs->g);
    cs->gl = 0;
}

bool vt_charsets_special(const vt_charsets *cs)
{
    return cs->g[cs->gl & 3] != 'B';
}

void vt_scan_init(vt_scan *s, const vt_scan_ops *ops, void *user)
{
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->user = user;
    s->state = ST_GROUND;
    vt_charsets_reset(&s->cs);
}

void vt_scan_free(vt_scan *s)
{
    free(s->hold);
    s->hold = NULL;
    s->hold_len = s->hold_cap = 0;
}

unsigned vt_scan_modes(const vt_scan *s)
{
    return s->modes;
}

/* Append to the hold buffer, growing it geometrically. */
static void hold_append(vt_scan *s, const char *p, size_t n)
{
    if (n == 0)
        return; /* nothing, and the buffer may not exist yet: no memcpy to NULL */
    if (s->hold_len + n > s->hold_cap) {
        size_t cap = s->hold_cap ? s->hold_cap : 64;
        while (cap < s->hold_len + n)
            cap *= 2;
        s->hold = xrealloc(s->hold, cap);
        s->hold_cap = cap;
    }
    memcpy(s->hold + s->hold_len, p, n);
    s->hold_len += n;
}

/* Forget the held bytes; a big buffer left by a long string is given back. */
static void hold_reset(vt_scan *s)
{
    s->hold_len = 0;
    if (s->hold_cap > HOLD_KEEP) {
        free(s->hold);
        s->hold = NULL;
        s->hold_cap = 0;
    }
}

/* Hand bytes to the owner (libvterm) as they are. */
void vt_scan_feed(vt_scan *s, const char *p, size_t n)
{
    if (n && s->ops->feed)
        s->ops->feed(s->user, p, n);
}

/* Feed a run of text (and whole ESC/CSI sequences) in pieces of at most
 * FEED_MAX bytes, cut between characters: libvterm 0.1.4 keeps a stack
 * array of 4 bytes per input byte and overflows the stack on a write of a
 * megabyte. */
static void feed_text(vt_scan *s, const char *p, size_t n)
{
    while (n > FEED_MAX) {
        size_t k = utf8_complete_prefix(p, FEED_MAX);
        if (k == 0)
            k = FEED_MAX;
        vt_scan_feed(s, p, k);
        p += k;
        n -= k;
    }
    vt_scan_feed(s, p, n);
}

/* Feed the run up to (not including) end. */
void vt_scan_feed_run(vt_scan *s, scan_pos *x, size_t end)
{
    if (end > x->run)
        feed_text(s, x->p + x->run, end - x->run);
    x->run = end;
}

/* Tell the owner that dim/conceal changed, after everything before it. */
void vt_scan_set_sgr_extra(vt_scan *s, scan_pos *x, unsigned attrs)
{
    if (attrs == s->sgr_extra)
        return;
    s->sgr_extra = attrs;
    if (x)
        vt_scan_feed_run(s, x, x->i);
    if (s->ops->sgr_extra)
        s->ops->sgr_extra(s->user, attrs);
}

/* Read one decimal parameter; stops at the first non-digit. */
unsigned vt_scan_read_num(const char *p, size_t len, size_t *k)
{
    unsigned v = 0;
    while (*k < len && p[*k] >= '0' && p[*k] <= '9') {
        if (v < 100000)
            v = v * 10 + (unsigned)(p[*k] - '0');
        (*k)++;
    }
    return v;
}

/* DEC private modes set or reset by CSI ? Pm h / l. */
void vt_scan_private_modes(vt_scan *s, const char *body, size_t len, bool set)
{
    for (size_t k = 1; k < len; k++)
        if (!(body[k] == ';' || (body[k] >= '0' && body[k] <= '9')))
            return;
    size_t k = 1;
    while (k <= len) {
        unsigned bit = 0;
        switch (vt_scan_read_num(body, len, &k)) {
        case 1: bit = VT_MODE_APP_CURSOR; break;
        case 66: bit = VT_MODE_APP_KEYPAD; break;
        case 1006: bit = VT_MODE_MOUSE_SGR; break;
        case 2004: bit = VT_MODE_BRACKETED_PASTE; break;
        case 6: s->dec = set ? (s->dec | VT_SCAN_ORIGIN) : (s->dec & ~VT_SCAN_ORIGIN); break;
        case 7: s->dec = set ? (s->dec & ~VT_SCAN_NOWRAP) : (s->dec | VT_SCAN_NOWRAP); break;
        case 69: s->dec = set ? (s->dec | VT_SCAN_LRMM) : (s->dec & ~VT_SCAN_LRMM); break;
        default: break;
        }
        s->modes = set ? (s->modes | bit) : (s->modes & ~bit);
        k++; /* the ';' */
    }
}

/* Whether p[0, n) holds only digits and bytes of also. */
bool vt_scan_digits_and(const char *p, size_t n, const char *also)
{
    for (size_t k = 0; k < n; k++)
        if (!(p[k] >= '0' && p[k] <= '9') && (p[k] == '\0' || !strchr(also, p[k])))
            return false;
    return true;
}

/* Where a CSI's parameters start: after its '[' (bytes libvterm ignores and
 * intermediates may stand between ESC and '['). */
static const char *csi_params(const char *seq, size_t len)
{
    const char *b = memchr(seq, '[', len);
    return b ? b + 1 : seq + len;
}

/* A CSI or ESC sequence went to libvterm: note the state it hides. */
static void seq_done(vt_scan *s, scan_pos *x, const char *seq, size_t len)
{
    unsigned char fin = (unsigned char)seq[len - 1];
    if (s->state == ST_ESC) {
        if (s->esc_inter) { /* SCS: ESC ( B and the like, as libvterm takes them */
            if (len == 3 && seq[1] >= '(' && seq[1] <= '+' && (fin == 'B' || fin == '0' || fin == 'A'))
                s->cs.g[seq[1] - '('] = (char)fin;
            return;
        }
        if (fin == '=')
            s->modes |= VT_MODE_APP_KEYPAD;
        else if (fin == '>')
            s->modes &= ~VT_MODE_APP_KEYPAD;
        else if (fin == 'n' || fin == 'o') /* LS2, LS3 */
            s->cs.gl = fin == 'n' ? 2 : 3;
        return;
    }
    const char *body = csi_params(seq, len);
    if (body >= seq + len || fin < 0x40 || fin > 0x7e)
        return;
    size_t blen = (size_t)(seq + len - 1 - body);
    if ((fin == 'h' || fin == 'l') && blen > 0 && body[0] == '?')
        vt_scan_private_modes(s, body, blen, fin == 'h');
    else if (strchr("ABCDEFGH`adefjk", fin) && vt_scan_digits_and(body, blen, ";")) {
        if (x)
            vt_scan_feed_run(s, x, x->i);
        vt_scan_action(s, VT_SCAN_CURSOR_MOVED, 0);
    } else if (strchr("JKX@P", fin) && vt_scan_digits_and(body, blen, ";") &&
               !(fin == 'J' && blen == 1 && body[0] == '3')) { /* ED 3 erases history only */
        if (x)
            vt_scan_feed_run(s, x, x->i);
        vt_scan_action(s, VT_SCAN_WRAP_ENDED, 0);
    } else if (fin == 'm' && vt_scan_digits_and(body, blen, ";:"))
        vt_scan_set_sgr_extra(s, x, vt_sgr_extra(s->sgr_extra, body, blen));
    else if (fin == 'p' && blen == 1 && body[0] == '!') { /* DECSTR */
        if (x)
            vt_scan_feed_run(s, x, x->i); /* libvterm resets first */
        s->modes &= ~(unsigned)(VT_MODE_APP_CURSOR | VT_MODE_APP_KEYPAD);
        s->dec = 0;
        vt_charsets_reset(&s->cs);
        vt_scan_set_sgr_extra(s, x, 0);
        vt_scan_action(s, VT_SCAN_SOFT_RESET, 0);
    }
}

/* A CSI over VT_SCAN_SEQ_MAX bytes: what came before is fed, the sequence
 * itself is dropped and the rest of it skipped. */
static void csi_drop(vt_scan *s, scan_pos *x)
{
    if (s->held) {
        hold_reset(s);
        s->held = false;
    } else {
        vt_scan_feed_run(s, x, x->start);
    }
    s->csi_long = false;
    x->run = x->i;
    s->state = ST_CSI_IGNORE;
}

/* Bytes of a dropped CSI, up to and including its final byte. */
static void csi_ignore(vt_scan *s, scan_pos *x)
{
    while (x->i < x->len) {
        unsigned char c = (unsigned char)x->p[x->i];
        if (c == C_ESC || c >= 0x80) {
            s->state = ST_GROUND; /* looked at again in ground */
            break;
        }
        x->i++;
        if ((c >= 0x40 && c <= 0x7e) || c == C_CAN || c == C_SUB) {
            s->state = ST_GROUND;
            break;
        }
    }
    x->run = x->i;
}

/* A CSI got more parameters than libvterm can store: collect it whole in
 * the hold buffer so csi_long_feed() can rewrite it. */
static void csi_go_long(vt_scan *s, scan_pos *x)
{
    if (!s->held) {
        vt_scan_feed_run(s, x, x->start);
        hold_append(s, x->p + x->start, x->i - x->start);
        s->held = true;
        x->run = x->i;
    }
    s->csi_long = true;
}

/* Number of libvterm parameter slots a parameter string takes. */
static unsigned csi_slots(const char *p, size_t n)
{
    unsigned k = 1;
    for (size_t i = 0; i < n; i++)
        k += p[i] == ':' || p[i] == ';';
    return k;
}

/* Feed a CSI of more than 16 parameters in a form libvterm survives.  An
 * SGR is split into several SGRs between attributes (a colour and its
 * arguments stay together), which means the same; any other CSI keeps its
 * first 16 parameters, the ones a terminal acts on. */
static void csi_long_feed(vt_scan *s, const char *held, size_t held_len)
{
    /* Rebuilt as ESC [ and the rest without controls (libvterm would act on
     * them and go on counting parameters after them) or bytes >= 0x80. */
    char seq[VT_SCAN_SEQ_MAX + 2] = { '\033', '[' };
    size_t len = 2;
    const char *from = csi_params(held, held_len), *last = held + held_len - 1;
    if (from > last)
        return;
    for (const char *q = from; q <= last && len < sizeof seq; q++)
        if (q == last || ((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f))
            seq[len++] = *q;
    const char *body = seq + 2, *end = seq + len - 1;
    const char *params = body;
    if (params < end && *params >= '<' && *params <= '?')
        params++;
    const char *pend = params;
    while (pend < end && *pend >= 0x30 && *pend <= 0x3f)
        pend++;
    bool sgr = *end == 'm' && params == body && pend == end;
    char out[VT_SCAN_SEQ_MAX + 64];
    size_t o = 0;
    unsigned used = 0;
    const char *p = params;
    while (p < pend) {
        /* One item: a parameter, or a colour with its ';' arguments. */
        const char *q = p;
        int more = 0;
        while (q < pend && *q != ';')
            q++;
        size_t k = 0;
        unsigned v = vt_scan_read_num(p, (size_t)(q - p), &k);
        if (sgr && k == (size_t)(q - p) && (v == 38 || v == 48 || v == 58) && q < pend) {
            size_t k2 = 0;
            unsigned sel = vt_scan_read_num(q + 1, (size_t)(pend - q - 1), &k2);
            more = sel == 5 ? 2 : sel == 2 ? 4 : 0;
        }
        for (; more > 0 && q < pend; more--)
            for (q++; q < pend && *q != ';'; q++)
                ;
        unsigned slots = csi_slots(p, (size_t)(q - p));
        if (slots <= 16) {
            if (used + slots > 16) {
                if (!sgr)
                    break;
                out[o++] = 'm';
                vt_scan_feed(s, out, o);
                o = used = 0;
            }
            if (o == 0) {
                memcpy(out, seq, (size_t)(params - seq));
                o = (size_t)(params - seq);
            } else {
                out[o++] = ';';
            }
            memcpy(out + o, p, (size_t)(q - p));
            o += (size_t)(q - p);
            used += slots;
        }
        p = q < pend ? q + 1 : q;
    }
    if (o == 0 && sgr)
        return;
    if (o == 0) {
        memcpy(out, seq, (size_t)(params - seq));
        o = (size_t)(params - seq);
    }
    memcpy(out + o, pend, (size_t)(end - pend) + 1);
    o += (size_t)(end - pend) + 1;
    vt_scan_feed(s, out, o);
}

/* Whether a byte of an ESC sequence is worth holding: libvterm ignores
 * bytes >= 0x80 and DEL there, and only a few intermediates count. */
static bool esc_keeps(const vt_scan *s, unsigned char c)
{
    return c < 0x7f && s->hold_len < ESC_HOLD_MAX;
}

/* The current byte belongs to the sequence in progress (a final byte is
 * always kept). */
static void seq_take_byte(vt_scan *s, scan_pos *x, bool final)
{
    if (s->held) {
        if (final || s->state != ST_ESC || esc_keeps(s, (unsigned char)x->p[x->i]))
            hold_append(s, x->p + x->i, 1);
        x->run = x->i + 1;
    }
    x->i++;
}

static void seq_take(vt_scan *s, scan_pos *x)
{
    seq_take_byte(s, x, false);
}

/* CSI Pn b (REP) as libvterm reads it: no leader, the count first.  With
 * intermediates it is nothing libvterm knows; 0 is returned, and it goes
 * too. */
static bool is_rep(const char *seq, size_t len, unsigned *count)
{
    const char *p = csi_params(seq, len);
    if (p >= seq + len || seq[len - 1] != 'b' || (*p >= '<' && *p <= '?'))
        return false;
    size_t n = (size_t)(seq + len - 1 - p), k = 0;
    *count = vt_scan_read_num(p, n, &k);
    if (*count == 0)
        *count = 1;
    for (; k < n; k++)
        if (p[k] >= 0x20 && p[k] < 0x30)
            *count = 0;
    return true;
}

/* The C0 controls among the bytes of a sequence that is dropped, fed on
 * their own: a terminal carries them out where they are, inside the
 * sequence (CR and LF in an interrupted CSI move the cursor). */
static void feed_controls(vt_scan *s, const char *seq, size_t len)
{
    for (size_t k = 1; k < len; k++) {
        unsigned char c = (unsigned char)seq[k];
        if (c < 0x20 && c != C_ESC && c != C_CAN && c != C_SUB)
            vt_scan_feed(s, seq + k, 1);
    }
}

/* An ESC interrupts the sequence: it is dropped, not fed, but for the
 * controls in it.  libvterm would cancel it at that ESC, but the sequence
 * the ESC opens may be one that never reaches libvterm (a string, REP),
 * and libvterm would be left inside the first one, reading the text after
 * as its parameters. */
void vt_scan_seq_abandon(vt_scan *s, scan_pos *x)
{
    if (s->held) {
        feed_controls(s, s->hold, s->hold_len);
        hold_reset(s);
        s->held = false;
    } else {
        vt_scan_feed_run(s, x, x->start);
        feed_controls(s, x->p + x->start, x->i - x->start);
    }
    x->run = x->i;
    s->csi_long = false;
    s->state = ST_GROUND;
}

/* The current byte ended the sequence: analyse it, feed it if it was held. */
static void seq_complete(vt_scan *s, scan_pos *x)
{
    seq_take_byte(s, x, true);
    const char *seq = s->held ? s->hold : x->p + x->start;
    size_t len = s->held ? s->hold_len : x->i - x->start;
    unsigned count;
    if (s->state == ST_CSI && is_rep(seq, len, &count)) {
        vt_scan_seq_abandon(s, x); /* REP never reaches libvterm (see rep) */
        if (count && s->ops->rep)
            s->ops->rep(s->user, count);
        return;
    }
    if (vt_scan_intercept(s, x, seq, len))
        return;
    if (s->held) {
        /* fed first, so a hook sees it done */
        if (s->csi_long)
            csi_long_feed(s, s->hold, s->hold_len);
        else
            vt_scan_feed(s, s->hold, s->hold_len);
        s->csi_long = false;
        seq_done(s, NULL, s->hold, s->hold_len);
        hold_reset(s);
        s->held = false;
    } else {
        seq_done(s, x, x->p + x->start, x->i - x->start);
    }
    s->state = ST_GROUND;
}

/* A CSI ends at a byte >= 0x80, which libvterm takes as the end of the
 * (invalid) CSI and drops: the CSI goes to libvterm with that byte, which
 * is not text (an unfinished long CSI would overflow libvterm: it goes,
 * and the byte with it). */
static void seq_cut(vt_scan *s, scan_pos *x)
{
    if (s->held) {
        if (!s->csi_long) {
            vt_scan_feed(s, s->hold, s->hold_len);
            vt_scan_feed(s, x->p + x->i, 1);
        }
        s->csi_long = false;
        hold_reset(s);
        s->held = false;
        x->i++;
        x->run = x->i;
    } else {
        x->i++;
        vt_scan_feed_run(s, x, x->i);
    }
    s->state = ST_GROUND;
}

/* ESC ] / P / _ / ^ / X: what came before is fed, the string is collected. */
static void string_start(vt_scan *s, scan_pos *x, unsigned char c)
{
    if (s->held) {
        s->hold_len = 0;
        s->held = false;
    } else {
        vt_scan_feed_run(s, x, x->start);
    }
    x->i++;
    x->run = x->i;
    s->str_kind = c == ']' ? STR_OSC : c == 'P' ? STR_DCS : STR_IGNORE;
    s->overflow = false;
    s->state = ST_STR;
    s->hold_len = 0;
    char intro[2] = { (char)C_ESC, (char)c };
    hold_append(s, intro, 2);
}

/* Collect string bytes, without C0 controls, up to the cap. */
static void string_append(vt_scan *s, const char *p, size_t n)
{
    if (s->str_kind == STR_IGNORE || s->overflow)
        return;
    size_t a = 0;
    for (size_t k = 0; k <= n; k++) {
        if (k < n && (unsigned char)p[k] >= 0x20)
            continue;
        if (k > a) {
            if (s->hold_len - 2 + (k - a) > VT_SCAN_STRING_MAX) {
                s->overflow = true;
                hold_reset(s);
                return;
            }
            hold_append(s, p + a, k - a);
        }
        a = k + 1;
    }
}

/* An OSC is complete: report ours, hand titles to libvterm, drop the rest. */
static void osc_done(vt_scan *s)
{
    const char *pl = s->hold + 2;
    size_t n = s->hold_len - 2, k = 0;
    unsigned num = vt_scan_read_num(pl, n, &k);
    if (k == 0 || k > 5 || (k < n && pl[k] != ';'))
        return;
    if (num == 133 || num == 7 || num == 9 || num == 777) {
        size_t skip = k < n ? k + 1 : k;
        if (s->ops->osc)
            s->ops->osc(s->user, (int)num, pl + skip, n - skip);
    } else if (num <= 2) {
        hold_append(s, "\a", 1);
        vt_scan_feed(s, s->hold, s->hold_len);
    }
}

/* The DCS requests libvterm 0.1.4 answers (DECRQSS for margins and cursor
 * style).  It answers any other DECRQSS through a printf format that takes
 * an int for a string, so those, and every other DCS, are dropped; DECRQSS
 * for SGR the owner answers (libvterm's answer has no leading 0, unlike
 * xterm's). */
static bool dcs_answered(const char *p, size_t n)
{
    static const char *const ok[] = { "$qr", "$qs", "$q q", "$q\"q" };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
        if (n == strlen(ok[k]) && memcmp(p, ok[k], n) == 0)
            return true;
    return false;
}

/* The string terminator arrived. */
static void string_done(vt_scan *s)
{
    if (!s->overflow) {
        if (s->str_kind == STR_OSC)
            osc_done(s);
        else if (s->str_kind == STR_DCS && s->hold_len == 5 && memcmp(s->hold + 2, "$qm", 3) == 0)
            vt_scan_action(s, VT_SCAN_QUERY_SGR, 0);
        else if (s->str_kind == STR_DCS && dcs_answered(s->hold + 2, s->hold_len - 2)) {
            hold_append(s, "\033\\", 2);
            vt_scan_feed(s, s->hold, s->hold_len);
        }
    }
    hold_reset(s);
    s->state = ST_GROUND;
}

/* One byte of an ESC or CSI sequence. */
static void seq_byte(vt_scan *s, scan_pos *x)
{
    unsigned char c = (unsigned char)x->p[x->i];
    size_t cur = s->held ? s->hold_len : x->i - x->start;
    if (s->state == ST_CSI && cur >= VT_SCAN_SEQ_MAX) {
        csi_drop(s, x);
    } else if (c == C_ESC) {
        vt_scan_seq_abandon(s, x);
    } else if (c >= 0x80 && s->state == ST_CSI) {
        seq_cut(s, x); /* libvterm too ends a CSI at a byte >= 0x80 */
    } else if (c >= 0x80) {
        seq_take(s, x); /* ... and ignores it after ESC */
    } else if (c == C_CAN || c == C_SUB) {
        seq_complete(s, x);
    } else if (c < 0x20 || c == 0x7f) {
        if (c == C_SO || c == C_SI) /* they act there too */
            s->cs.gl = c == C_SO ? 1 : 0;
        seq_take(s, x); /* C0 controls act inside a sequence */
    } else if (s->state == ST_CSI) {
        if (c >= 0x40)
            seq_complete(s, x);
        else {
            if ((c == ';' || c == ':') && ++s->csi_seps > CSI_SEPARATORS_MAX && !s->csi_long)
                csi_go_long(s, x);
            seq_take(s, x);
        }
    } else if (c < 0x30) {
        s->esc_inter = true;
        seq_take(s, x);
    } else if (c == '[') {             /* libvterm opens CSI, OSC and DCS */
        seq_take_byte(s, x, true); /* after intermediates too */
        s->state = ST_CSI;
        s->csi_seps = 0;
        s->csi_long = false;
    } else if (c == ']' || c == 'P' || (!s->esc_inter && (c == '_' || c == '^' || c == 'X'))) {
        string_start(s, x, c);
    } else {
        seq_complete(s, x);
    }
}

/* Bytes of an escape string up to its next terminator candidate. */
static void string_bytes(vt_scan *s, scan_pos *x)
{
    const unsigned char *p = (const unsigned char *)x->p;
    size_t j = x->i;
    while (j < x->len && p[j] != C_BEL && p[j] != C_ESC && p[j] != C_CAN && p[j] != C_SUB)
        j++;
    string_append(s, x->p + x->i, j - x->i);
    x->i = x->run = j;
    if (j == x->len)
        return;
    unsigned char c = p[j];
    x->i = x->run = j + 1;
    if (c == C_BEL)
        string_done(s);
    else if (c == C_ESC)
        s->state = ST_STR_ESC;
    else { /* CAN, SUB: abandon the string */
        hold_reset(s);
        s->state = ST_GROUND;
    }
}

void vt_scan_unfinished(const vt_scan *s, buf_t *b)
{
    switch (s->state) {
    case ST_GROUND:
        buf_append(b, s->utf8, s->utf8_len);
        break;
    case ST_ESC:
    case ST_CSI: /* held at the end of every write */
        buf_append(b, s->hold, s->hold_len);
        break;
    case ST_CSI_IGNORE: /* a CSI too long to keep: one as long, dropped */
        buf_puts(b, "\033[");
        for (size_t k = 2; k < VT_SCAN_SEQ_MAX; k++)
            buf_putc(b, '0');
        break;
    case ST_STR:
    case ST_STR_ESC:
        if (s->overflow)
            break;
        buf_append(b, s->hold, s->hold_len);
        if (s->state == ST_STR_ESC)
            buf_putc(b, (char)C_ESC);
        break;
    }
}

void vt_scan_write(vt_scan *s, const char *bytes, size_t len)
{
    scan_pos x = { bytes, len, 0, 0, 0 };
    if (s->utf8_len && !vt_scan_utf8_resume(s, &x))
        return;
    while (x.i < len) {
        switch (s->state) {
        case ST_GROUND:
            vt_scan_text_bytes(s, &x);
            if (x.i < len) { /* an ESC */
                x.start = x.i++;
                s->state = ST_ESC;
                s->held = false;
                s->esc_inter = false;
            }
            break;
        case ST_ESC:
        case ST_CSI:
            seq_byte(s, &x);
            break;
        case ST_CSI_IGNORE:
            csi_ignore(s, &x);
            break;
        case ST_STR:
            string_bytes(s, &x);
            break;
        case ST_STR_ESC:
            if (bytes[x.i] == '\\') {
                x.i++;
                x.run = x.i;
                string_done(s);
            } else { /* ESC ends the string unfinished and starts anew */
                hold_reset(s);
                s->state = ST_ESC;
                s->held = true;
                s->esc_inter = false;
                hold_append(s, "\033", 1);
            }
            break;
        }
    }
    if ((s->state == ST_ESC || s->state == ST_CSI) && !s->held) {
        vt_scan_feed_run(s, &x, x.start);
        if (s->state == ST_CSI) {
            hold_append(s, bytes + x.start, len - x.start);
        } else {
            for (size_t k = x.start; k < len; k++)
                if (k == x.start || esc_keeps(s, (unsigned char)bytes[k]))
                    hold_append(s, bytes + k, 1);
        }
        s->held = true;
        x.run = len;
    } else if (s->state == ST_GROUND && x.run < len) {
        size_t keep = utf8_complete_prefix(bytes + x.run, len - x.run);
        vt_scan_feed_run(s, &x, x.run + keep);
        s->utf8_len = len - x.run;
        memcpy(s->utf8, bytes + x.run, s->utf8_len);
        x.run = len;
    }
    vt_scan_feed_run(s, &x, len);
}
