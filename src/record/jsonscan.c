/*
 * jsonscan.c - see jsonscan.h.  A recursive-descent checker that records
 * where the top-level members are; nothing is allocated while scanning.
 */
#include "config.h"

#include "record/jsonscan.h"
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan {
    const char *s, *end, *p;
    const char *why;
} scan;

static void ws(scan *S)
{
    while (S->p < S->end && (*S->p == ' ' || *S->p == '\t' || *S->p == '\n' || *S->p == '\r'))
        S->p++;
}

static bool fail(scan *S, const char *why)
{
    if (!S->why)
        S->why = why;
    return false;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value((unsigned char)p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* At the opening quote. */
static bool string(scan *S)
{
    const char *p = S->p + 1, *end = S->end;
    for (;;) {
        /* The common case: a run of plain ASCII. */
        while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' && *p != '\\')
            p++;
        if (p >= end) {
            S->p = p;
            return fail(S, "a string that does not end");
        }
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            S->p = p + 1;
            return true;
        }
        if (c < 0x20) {
            S->p = p;
            return fail(S, "a control character in a string");
        }
        if (c == '\\') {
            if (p + 1 >= end) {
                S->p = p;
                return fail(S, "a string that does not end");
            }
            char e = p[1];
            if (e == 'u') {
                int v = p + 6 <= end ? hex4(p + 2) : -1;
                if (v < 0) {
                    S->p = p;
                    return fail(S, "a \\u escape without four hex digits");
                }
                p += 6;
                if (v == 0) {
                    S->p = p - 6;
                    return fail(S, "\\u0000 in a string");
                }
                if (v >= 0xdc00 && v <= 0xdfff) {
                    S->p = p - 6;
                    return fail(S, "a lone low surrogate escape");
                }
                if (v >= 0xd800 && v <= 0xdbff) {
                    int lo = p + 6 <= end && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : -1;
                    if (lo < 0xdc00 || lo > 0xdfff) {
                        S->p = p - 6;
                        return fail(S, "a high surrogate escape without its low one");
                    }
                    p += 6;
                }
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                S->p = p;
                return fail(S, "an invalid escape in a string");
            }
            p += 2;
            continue;
        }
        int32_t cp;
        size_t n = utf8_decode(p, (size_t)(end - p), &cp);
        if (cp < 0) {
            S->p = p;
            return fail(S, "invalid UTF-8 in a string");
        }
        p += n;
    }
}

static bool digits(scan *S)
{
    const char *start = S->p;
    while (S->p < S->end && *S->p >= '0' && *S->p <= '9')
        S->p++;
    return S->p > start;
}

static bool number(scan *S)
{
    if (*S->p == '-')
        S->p++;
    if (S->p < S->end && *S->p == '0')
        S->p++;
    else if (!digits(S))
        return fail(S, "an invalid number");
    if (S->p < S->end && *S->p == '.') {
        S->p++;
        if (!digits(S))
            return fail(S, "an invalid number");
    }
    if (S->p < S->end && (*S->p == 'e' || *S->p == 'E')) {
        S->p++;
        if (S->p < S->end && (*S->p == '+' || *S->p == '-'))
            S->p++;
        if (!digits(S))
            return fail(S, "an invalid number");
    }
    return true;
}

static bool literal(scan *S, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(S->end - S->p) < n || memcmp(S->p, word, n) != 0)
        return fail(S, "an unexpected character");
    S->p += n;
    return true;
}

static bool value(scan *S, int depth, char *type);

static bool container(scan *S, int depth, bool object)
{
    if (depth >= JS_MAX_DEPTH)
        return fail(S, "nested too deep");
    char close = object ? '}' : ']';
    S->p++;
    ws(S);
    if (S->p < S->end && *S->p == close) {
        S->p++;
        return true;
    }
    for (;;) {
        char t;
        if (object) {
            if (S->p >= S->end || *S->p != '"')
                return fail(S, "expected a member's name");
            if (!string(S))
                return false;
            ws(S);
            if (S->p >= S->end || *S->p != ':')
                return fail(S, "expected ':'");
            S->p++;
            ws(S);
        }
        if (!value(S, depth + 1, &t))
            return false;
        ws(S);
        if (S->p < S->end && *S->p == ',') {
            S->p++;
            ws(S);
            continue;
        }
        if (S->p < S->end && *S->p == close) {
            S->p++;
            return true;
        }
        return fail(S, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool value(scan *S, int depth, char *type)
{
    if (S->p >= S->end)
        return fail(S, "the text ends where a value should be");
    switch (*S->p) {
    case '"': *type = 's'; return string(S);
    case '{': *type = 'o'; return container(S, depth, true);
    case '[': *type = 'a'; return container(S, depth, false);
    case 't': *type = 't'; return literal(S, "true");
    case 'f': *type = 'f'; return literal(S, "false");
    case 'n': *type = 'z'; return literal(S, "null");
    default:
        if (*S->p == '-' || (*S->p >= '0' && *S->p <= '9')) {
            *type = 'n';
            return number(S);
        }
        return fail(S, "an unexpected character");
    }
}

int js_scan_object(const char *text, size_t len, js_member *m, int max, char *err, size_t errlen)
{
    scan S = {.s = text, .end = text + len, .p = text};
    int n = 0;
    ws(&S);
    if (S.p >= S.end || *S.p != '{') {
        fail(&S, "not a JSON object");
        goto bad;
    }
    S.p++;
    ws(&S);
    if (S.p < S.end && *S.p == '}') {
        S.p++;
    } else {
        for (;;) {
            if (S.p >= S.end || *S.p != '"') {
                fail(&S, "expected a member's name");
                goto bad;
            }
            const char *k = S.p;
            if (!string(&S))
                goto bad;
            js_span key = {k + 1, (size_t)(S.p - k - 2)};
            ws(&S);
            if (S.p >= S.end || *S.p != ':') {
                fail(&S, "expected ':'");
                goto bad;
            }
            S.p++;
            ws(&S);
            const char *v = S.p;
            char t;
            if (!value(&S, 1, &t))
                goto bad;
            if (n < max)
                m[n] = (js_member){.key = key, .val = {v, (size_t)(S.p - v)}, .type = t};
            n++;
            ws(&S);
            if (S.p < S.end && *S.p == ',') {
                S.p++;
                ws(&S);
                continue;
            }
            if (S.p < S.end && *S.p == '}') {
                S.p++;
                break;
            }
            fail(&S, "expected ',' or '}'");
            goto bad;
        }
    }
    ws(&S);
    if (S.p != S.end) {
        fail(&S, "text after the object");
        goto bad;
    }
    return n;
bad:
    snprintf(err, errlen, "%s at column %zu", S.why ? S.why : "invalid JSON", (size_t)(S.p - text) + 1);
    return -1;
}

const js_member *js_find(const js_member *m, int n, const char *key)
{
    size_t len = strlen(key);
    for (int i = n - 1; i >= 0; i--)
        if (m[i].key.n == len && memcmp(m[i].key.p, key, len) == 0)
            return &m[i];
    return NULL;
}

bool js_int(const js_member *m, long long *out)
{
    if (!m || m->type != 'n' || m->val.n > 20)
        return false;
    char buf[24];
    memcpy(buf, m->val.p, m->val.n);
    buf[m->val.n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno == ERANGE)
        return false; /* a fraction, an exponent, or beyond long long (not LLONG_MAX) */
    *out = v;
    return true;
}

bool js_number(const js_member *m, double *out)
{
    if (!m || m->type != 'n' || m->val.n > 64)
        return false;
    char buf[72];
    memcpy(buf, m->val.p, m->val.n);
    buf[m->val.n] = '\0';
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return false; /* 1e999: valid JSON, but no number a caller can use */
    *out = v;
    return true;
}

bool js_is(const js_member *m, const char *s)
{
    size_t n = strlen(s);
    return m && m->type == 's' && m->val.n == n + 2 && memcmp(m->val.p + 1, s, n) == 0;
}

char *js_string(const js_member *m, size_t *len)
{
    if (!m || m->type != 's')
        return NULL;
    const char *p = m->val.p + 1, *end = m->val.p + m->val.n - 1;
    char *out = xmalloc((size_t)(end - p) + 1), *o = out;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        char e = p[1];
        p += 2;
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            /* Checked by the scanner: four hex digits, surrogates paired. */
            uint32_t c = (uint32_t)hex4(p);
            p += 4;
            if (c >= 0xd800 && c <= 0xdbff) {
                c = 0x10000 + ((c - 0xd800) << 10) + ((uint32_t)hex4(p + 2) - 0xdc00);
                p += 6;
            }
            /* UTF-8 of c is never longer than the escape it replaces. */
            o += utf8_put_scalar(c, o);
            break;
        }
        default: *o++ = e; break;
        }
    }
    *o = '\0';
    if (len)
        *len = (size_t)(o - out);
    return out;
}

long js_array_length(const js_member *m)
{
    if (!m || m->type != 'a')
        return -1;
    scan S = {.s = m->val.p, .end = m->val.p + m->val.n, .p = m->val.p + 1};
    ws(&S);
    if (S.p < S.end && *S.p == ']')
        return 0;
    long n = 0;
    for (;;) {
        char t;
        if (!value(&S, 1, &t))
            return -1;
        n++;
        ws(&S);
        if (S.p < S.end && *S.p == ',') {
            S.p++;
            ws(&S);
            continue;
        }
        return S.p < S.end && *S.p == ']' ? n : -1;
    }
}
