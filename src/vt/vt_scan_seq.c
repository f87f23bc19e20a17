/*
 * vt_scan_seq.c - the escape sequences the scanner (vt_scan.h) does not
 * let through as they are: saving and restoring the cursor, the alternate
 * screen modes, RIS, DECALN, CSI s and u, DECSTBM, the DECRQM queries the
 * owner answers, and SGRs libvterm 0.1.4 would misread (vt_sgr.h).
 */
#include "config.h"

#include "vt/vt_scan_int.h"

#include "vt/vt_sgr.h"

#include <string.h>

/* A CSI taken apart: ESC [ leader? params intermediates final, with
 * nothing else in it (no controls, no bytes >= 0x80). */
typedef struct csi_parts {
    char leader; /* '<' .. '?', or 0 */
    const char *params;
    size_t plen;
    const char *inter;
    size_t ilen;
    char final;
} csi_parts;

static bool csi_split(const char *seq, size_t len, csi_parts *c)
{
    if (len < 3 || seq[0] != C_ESC || seq[1] != '[')
        return false;
    const char *p = seq + 2, *end = seq + len - 1;
    c->final = *end;
    c->leader = 0;
    if (p < end && *p >= 0x3c && *p <= 0x3f)
        c->leader = *p++;
    c->params = p;
    while (p < end && *p >= 0x30 && *p <= 0x3b)
        p++;
    c->plen = (size_t)(p - c->params);
    c->inter = p;
    while (p < end && *p >= 0x20 && *p <= 0x2f)
        p++;
    c->ilen = (size_t)(p - c->inter);
    return p == end && c->final >= 0x40 && c->final <= 0x7e;
}

void vt_scan_action(vt_scan *s, int what, unsigned arg)
{
    if (s->ops->action)
        s->ops->action(s->user, what, arg);
}

static bool is_alt_or_save_mode(unsigned m)
{
    return m == 47 || m == 1047 || m == 1048 || m == 1049;
}

/* CSI ? Pm h/l that names an alternate screen or cursor-saving mode: the
 * other modes go to libvterm (and are noted), these to the owner, in
 * order. */
/* Feed the modes collected in out (after "ESC [ ?") and note them. */
static void modes_flush(vt_scan *s, char *out, size_t *o, bool set)
{
    if (*o == 0)
        return;
    out[(*o)++] = set ? 'h' : 'l';
    vt_scan_feed(s, out, *o);
    vt_scan_private_modes(s, out + 2, *o - 3, set);
    *o = 0;
}

static void private_modes_split(vt_scan *s, const char *p, size_t n, bool set)
{
    char out[VT_SCAN_SEQ_MAX + 8];
    size_t o = 0;
    int count = 0;
    for (size_t k = 0; k <= n;) {
        size_t from = k;
        unsigned m = vt_scan_read_num(p, n, &k);
        size_t to = k;
        k++; /* the ';' */
        if (to == from)
            continue; /* an empty parameter sets nothing */
        if (!is_alt_or_save_mode(m)) {
            if (o == 0) {
                memcpy(out, "\033[?", 3);
                o = 3;
                count = 0;
            } else {
                out[o++] = ';';
            }
            memcpy(out + o, p + from, to - from);
            o += to - from;
            if (++count == 16) /* libvterm holds 16 parameters */
                modes_flush(s, out, &o, set);
            continue;
        }
        modes_flush(s, out, &o, set);
        if (m == 1048)
            vt_scan_action(s, set ? VT_SCAN_SAVE_CURSOR : VT_SCAN_RESTORE_CURSOR, 0);
        else
            vt_scan_action(s, set ? VT_SCAN_ALT_ENTER : VT_SCAN_ALT_LEAVE, m);
    }
    modes_flush(s, out, &o, set);
}

/* Sequences the owner or the scanner carries out in place of libvterm
 * (see vt_scan.h).  Returns true when this one was: it is dropped from the
 * stream, and what came before it has been fed. */
bool vt_scan_intercept(vt_scan *s, scan_pos *x, const char *seq, size_t len)
{
    char copy[VT_SCAN_SEQ_MAX + 16];
    if (len > sizeof copy)
        return false;
    if (s->state == ST_ESC) {
        /* As libvterm reads it: bytes >= 0x7f are nothing there; a C0
         * control acts in the middle, and such a sequence is left to it. */
        size_t n = 0;
        for (size_t k = 1; k < len && n < 3; k++) {
            unsigned char c = (unsigned char)seq[k];
            if (c < 0x20)
                return false;
            if (c < 0x7f)
                copy[n++] = (char)c;
        }
        int what = -1;
        if (n == 1 && copy[0] == '7')
            what = VT_SCAN_SAVE_CURSOR;
        else if (n == 1 && copy[0] == '8')
            what = VT_SCAN_RESTORE_CURSOR;
        else if (n == 1 && copy[0] == 'c')
            what = VT_SCAN_RESET;
        else if (n == 2 && copy[0] == '#' && copy[1] == '8')
            what = VT_SCAN_ALIGN;
        if (what < 0)
            return false;
        vt_scan_seq_abandon(s, x);
        if (what == VT_SCAN_RESET) {
            s->modes = 0;
            s->dec = 0;
            vt_charsets_reset(&s->cs);
            vt_scan_set_sgr_extra(s, NULL, 0);
        }
        vt_scan_action(s, what, 0);
        return true;
    }
    csi_parts c;
    if (!csi_split(seq, len, &c))
        return false;
    if (!c.leader && !c.ilen && c.final == 'm') {
        char out[VT_SGR_OUT_MAX(VT_SCAN_SEQ_MAX + 16)];
        bool same;
        if (!vt_scan_digits_and(c.params, c.plen, ";:"))
            return false;
        size_t n = vt_sgr_rewrite(c.params, c.plen, out, &same);
        if (same)
            return false; /* goes on as it is (seq_done notes dim and conceal) */
        unsigned extra = vt_sgr_extra(s->sgr_extra, c.params, c.plen);
        vt_scan_seq_abandon(s, x);
        vt_scan_feed(s, out, n);
        vt_scan_set_sgr_extra(s, NULL, extra);
        return true;
    }
    if (!c.leader && !c.ilen && (c.final == 'u' || (c.final == 's' && !(s->dec & VT_SCAN_LRMM)))) {
        vt_scan_seq_abandon(s, x);
        vt_scan_action(s, c.final == 's' ? VT_SCAN_SAVE_CURSOR : VT_SCAN_RESTORE_CURSOR, 0);
        return true;
    }
    if (c.leader == '?' && !c.ilen && (c.final == 'h' || c.final == 'l') && c.plen > 0 &&
        vt_scan_digits_and(c.params, c.plen, ";")) {
        bool named = false;
        for (size_t k = 0; k <= c.plen && !named; k++) {
            named = is_alt_or_save_mode(vt_scan_read_num(c.params, c.plen, &k));
        }
        if (!named)
            return false;
        memcpy(copy, c.params, c.plen);
        size_t plen = c.plen;
        bool set = c.final == 'h';
        vt_scan_seq_abandon(s, x);
        private_modes_split(s, copy, plen, set);
        return true;
    }
    if (!c.leader && !c.ilen && c.final == 'r' && vt_scan_digits_and(c.params, c.plen, ";")) {
        /* DECSTBM: the owner knows the rows a region needs (two at least) */
        size_t k = 0;
        unsigned top = vt_scan_read_num(c.params, c.plen, &k), bottom = 0;
        if (k < c.plen) {
            k++; /* the ';' */
            bottom = vt_scan_read_num(c.params, c.plen, &k);
        }
        vt_scan_seq_abandon(s, x);
        vt_scan_action(s, VT_SCAN_SET_REGION, (top > 0xffff ? 0xffff : top) << 16 | (bottom > 0xffff ? 0xffff : bottom));
        return true;
    }
    if (c.leader == '?' && c.ilen == 1 && c.inter[0] == '$' && c.final == 'p' && c.plen > 0 &&
        vt_scan_digits_and(c.params, c.plen, "")) {
        size_t k = 0;
        unsigned m = vt_scan_read_num(c.params, c.plen, &k);
        if (m != 47 && m != 1047 && m != 1049)
            return false;
        vt_scan_seq_abandon(s, x);
        vt_scan_action(s, VT_SCAN_QUERY_MODE, m);
        return true;
    }
    return false;
}

