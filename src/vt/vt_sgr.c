/*
 * vt_sgr.c - see vt_sgr.h.  Colours are read as xterm's
 * parse_extended_colors reads them: 38;5;N, 38;2;R;G;B, 38:5:N,
 * 38:2:R:G:B, 38:2:CS:R:G:B, and 38;5:N / 38;2:[CS:]R:G:B.
 */
#include "config.h"

#include "vt/vt_sgr.h"

#include "base/util.h"
#include "vt/vt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUB_MAX 8        /* subparameters kept per parameter */
#define ON_STACK 64      /* parameters parsed without an allocation */
#define VALUE_CAP 100000 /* larger numbers are all "too large" */
#define SLOTS_MAX 16     /* libvterm's argument array */

/* One parameter with its ':' subparameters; -1 is an empty one. */
typedef struct group {
    long v[SUB_MAX];
    int n; /* subparameters including the first, at most SUB_MAX */
    int slots; /* libvterm slots it takes: one per ':' or ';'-separated field */
    const char *text;
    size_t len;
} group;

/* What goes out: either a group as it came or a rewritten colour. */
typedef struct item {
    const char *text;
    size_t len;
    int slots;
    char buf[24];
} item;

static size_t parse(const char *p, size_t len, group *g, size_t max)
{
    size_t n = 0, i = 0;
    for (;;) {
        group *x = &g[n];
        memset(x, 0, sizeof *x);
        x->text = p + i;
        x->slots = 1;
        long v = -1;
        for (; i < len && p[i] != ';'; i++) {
            if (p[i] == ':') {
                if (x->n < SUB_MAX)
                    x->v[x->n++] = v;
                x->slots++;
                v = -1;
            } else {
                v = v < 0 ? 0 : v;
                if (v < VALUE_CAP)
                    v = v * 10 + (p[i] - '0');
            }
        }
        if (x->n < SUB_MAX)
            x->v[x->n++] = v;
        x->len = (size_t)(p + i - x->text);
        n++;
        if (i >= len || n == max)
            break;
        i++; /* the ';' */
    }
    return n;
}

static bool byte_value(long v)
{
    return v >= 0 && v <= 255;
}

/* A colour of kind base (38 or 48) from its arguments, or nothing (false)
 * when xterm would ignore it. */
static bool colour_item(item *it, long base, long code, const long *a, int na)
{
    if (code == 5 && na >= 1 && byte_value(a[0])) {
        snprintf(it->buf, sizeof it->buf, "%ld;5;%ld", base, a[0]);
        it->slots = 3;
    } else if (code == 2 && na >= 3 && byte_value(a[na - 3]) && byte_value(a[na - 2]) && byte_value(a[na - 1])) {
        snprintf(it->buf, sizeof it->buf, "%ld;2;%ld;%ld;%ld", base, a[na - 3], a[na - 2], a[na - 1]);
        it->slots = 5;
    } else {
        return false;
    }
    it->text = it->buf;
    it->len = strlen(it->buf);
    return true;
}

/* The colour starting at group k (38, 48 or 58): how many groups it takes,
 * and the item for it if it is kept. */
static size_t colour(const group *g, size_t n, size_t k, item *it, bool *keep)
{
    const group *x = &g[k];
    long base = x->v[0];
    long code, a[4];
    int na = 0;
    size_t used;
    if (x->n > 1) { /* 38:5:N, 38:2:R:G:B, 38:2:CS:R:G:B */
        code = x->v[1];
        int from = code == 2 && x->n > 5 ? 3 : 2;
        for (int i = from; i < x->n && na < 3; i++)
            a[na++] = x->v[i];
        used = 1;
    } else if (k + 1 < n && g[k + 1].n > 1) { /* 38;5:N, 38;2:R:G:B, 38;2:CS:R:G:B */
        const group *y = &g[k + 1];
        code = y->v[0];
        int from = code == 2 && y->n > 4 ? 2 : 1;
        for (int i = from; i < y->n && na < 3; i++)
            a[na++] = y->v[i];
        used = 2;
    } else if (k + 1 < n) { /* 38;5;N, 38;2;R;G;B */
        code = g[k + 1].v[0];
        size_t need = code == 5 ? 1 : code == 2 ? 3 : 0;
        size_t i;
        for (i = 0; i < need && k + 2 + i < n; i++)
            a[na++] = g[k + 2 + i].v[0];
        used = 2 + i;
    } else {
        *keep = false;
        return 1;
    }
    *keep = base != 58 && colour_item(it, base, code, a, na);
    return used;
}

/* Parameters of len bytes: at most len + 1 of them. */
static group *groups_for(size_t len, group *small)
{
    return len + 1 <= ON_STACK ? small : xmalloc((len + 1) * sizeof(group));
}

/* The common SGR, read in one pass: numbers and ';' only, at most
 * SLOTS_MAX of them, colours in the forms and ranges libvterm reads as
 * xterm does, no 58 or 59.  Such an SGR needs no rewrite; *extra gets the
 * dim and conceal bits after it (from their value on entry).  False for
 * anything else. */
static bool plain(const char *p, size_t len, unsigned *extra)
{
    long v[SLOTS_MAX];
    int n = 0;
    long cur = -1;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || p[i] == ';') {
            if (n == SLOTS_MAX)
                return false;
            v[n++] = cur;
            cur = -1;
        } else if (p[i] >= '0' && p[i] <= '9') {
            cur = cur < 0 ? 0 : cur;
            if (cur < VALUE_CAP)
                cur = cur * 10 + (p[i] - '0');
        } else {
            return false; /* ':' */
        }
    }
    unsigned attrs = *extra;
    for (int k = 0; k < n;) {
        switch (v[k]) {
        case 38:
        case 48: {
            long sel = k + 1 < n ? v[k + 1] : -1;
            int args = sel == 5 ? 1 : sel == 2 ? 3 : -1;
            if (args < 0 || k + 2 + args > n)
                return false;
            for (int a = 0; a < args; a++)
                if (!byte_value(v[k + 2 + a]))
                    return false;
            k += 2 + args;
            continue;
        }
        case 58:
        case 59: return false;
        case -1:
        case 0: attrs = 0; break;
        case 2: attrs |= VT_ATTR_DIM; break;
        case 8: attrs |= VT_ATTR_CONCEAL; break;
        case 22: attrs &= ~(unsigned)VT_ATTR_DIM; break;
        case 28: attrs &= ~(unsigned)VT_ATTR_CONCEAL; break;
        default: break;
        }
        k++;
    }
    *extra = attrs;
    return true;
}

size_t vt_sgr_rewrite(const char *params, size_t len, char *out, bool *same)
{
    unsigned ignored = 0;
    if (plain(params, len, &ignored)) {
        *same = true;
        return 0;
    }
    group gsmall[ON_STACK];
    item ismall[ON_STACK];
    group *gs = groups_for(len, gsmall);
    item *items = len + 1 <= ON_STACK ? ismall : xmalloc((len + 1) * sizeof(item));
    size_t n = parse(params, len, gs, len + 1), ni = 0;
    bool changed = false;
    int total = 0;
    for (size_t k = 0; k < n;) {
        long v = gs[k].v[0];
        item *it = &items[ni];
        if (v == 38 || v == 48 || v == 58) {
            bool keep;
            size_t used = colour(gs, n, k, it, &keep);
            /* Unchanged when it is the semicolon form it became. */
            size_t orig = (size_t)(gs[k + used - 1].text + gs[k + used - 1].len - gs[k].text);
            if (!keep || it->len != orig || memcmp(it->text, gs[k].text, orig) != 0)
                changed = true;
            if (keep) {
                total += it->slots;
                ni++;
            }
            k += used;
        } else if (v == 59 || gs[k].slots > SLOTS_MAX) {
            changed = true; /* (more subparameters than libvterm can hold) */
            k++;
        } else {
            it->text = gs[k].text;
            it->len = gs[k].len;
            it->slots = gs[k].slots;
            total += it->slots;
            ni++;
            k++;
        }
    }
    *same = !changed && total <= SLOTS_MAX;
    /* SGRs of at most SLOTS_MAX slots, split between items. */
    size_t o = 0;
    int used = 0;
    for (size_t k = 0; k < ni; k++) {
        if (used > 0 && used + items[k].slots > SLOTS_MAX) {
            out[o++] = 'm';
            used = 0;
        }
        if (used == 0) {
            out[o++] = '\033';
            out[o++] = '[';
        } else {
            out[o++] = ';';
        }
        memcpy(out + o, items[k].text, items[k].len);
        o += items[k].len;
        used += items[k].slots;
    }
    if (o > 0)
        out[o++] = 'm';
    if (gs != gsmall)
        free(gs);
    if (items != ismall)
        free(items);
    return o;
}

unsigned vt_sgr_extra(unsigned cur, const char *params, size_t len)
{
    if (len == 0)
        return 0;
    unsigned fast = cur;
    if (plain(params, len, &fast))
        return fast;
    group gsmall[ON_STACK];
    group *gs = groups_for(len, gsmall);
    size_t n = parse(params, len, gs, len + 1);
    for (size_t k = 0; k < n;) {
        long v = gs[k].v[0];
        if (v == 38 || v == 48 || v == 58) {
            item it;
            bool keep;
            k += colour(gs, n, k, &it, &keep);
            continue;
        }
        switch (v) {
        case -1:
        case 0: cur = 0; break;
        case 2: cur |= VT_ATTR_DIM; break;
        case 8: cur |= VT_ATTR_CONCEAL; break;
        case 22: cur &= ~(unsigned)VT_ATTR_DIM; break;
        case 28: cur &= ~(unsigned)VT_ATTR_CONCEAL; break;
        default: break;
        }
        k++;
    }
    if (gs != gsmall)
        free(gs);
    return cur;
}
