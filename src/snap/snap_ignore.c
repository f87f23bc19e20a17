/*
 * snap_ignore.c - see snap_ignore.h.
 */
#include "config.h"

#include "snap/snap_ignore.h"

#include "base/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A pattern longer than this, or more rules than this in all, is not
 * taken: nothing real comes close, and a hostile file stays cheap. */
#define PATTERN_MAX 4096
#define RULES_MAX 200000

typedef struct rule {
    char *pattern;   /* as wildmatch takes it: no leading "!" or "/", no trailing "/" */
    char *base;      /* "" or "a/b": the directory of its file */
    bool negative;   /* "!": re-include */
    bool dir_only;   /* trailing "/" */
    bool basename;   /* no "/" in it: matches a name at any depth below base */
    bool literal;    /* no wildcard: a plain comparison does */
} rule;

struct snap_ignore {
    rule *rules;
    size_t n, cap;
};

snap_ignore *snap_ignore_new(void)
{
    return xcalloc(1, sizeof(snap_ignore));
}

static void rule_free(rule *r)
{
    free(r->pattern);
    free(r->base);
}

void snap_ignore_free(snap_ignore *ig)
{
    if (!ig)
        return;
    for (size_t i = 0; i < ig->n; i++)
        rule_free(&ig->rules[i]);
    free(ig->rules);
    free(ig);
}

size_t snap_ignore_mark(const snap_ignore *ig)
{
    return ig->n;
}

void snap_ignore_pop(snap_ignore *ig, size_t mark)
{
    while (ig->n > mark)
        rule_free(&ig->rules[--ig->n]);
}

/* ---- wildmatch -------------------------------------------------------------------- */

/* Results: a match, no match here, or no match anywhere further along the
 * text (the callers' stars then stop trying: that is what keeps a pattern
 * of many stars linear instead of exponential). */
enum { WM_ABORT_TO_STARSTAR = -2, WM_ABORT_ALL = -1, WM_NOMATCH = 0, WM_MATCH = 1 };

static bool named_class(const char *name, size_t len, unsigned char c, bool *known)
{
    static const struct {
        const char *name;
        int (*fn)(int);
    } classes[] = {{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
                   {"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
                   {"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit}};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0) {
            *known = true;
            return classes[i].fn(c) != 0;
        }
    *known = false;
    return false;
}

/* A bracket expression at *pp (its "["), against t.  *pp is left on its
 * closing "]".  Returns WM_MATCH or WM_NOMATCH for t, or
 * WM_ABORT_ALL when the expression is malformed (it then matches
 * nothing, as git has it). */
static int bracket(const unsigned char **pp, unsigned char t)
{
    const unsigned char *p = *pp + 1;
    bool negated = false, matched = false;
    if (*p == '!' || *p == '^') {
        negated = true;
        p++;
    }
    unsigned char prev = 0;
    bool first = true;
    for (;; p++) {
        unsigned char c = *p;
        if (!c)
            return WM_ABORT_ALL;
        if (c == ']' && !first)
            break;
        first = false;
        if (c == '\\') {
            c = *++p;
            if (!c)
                return WM_ABORT_ALL;
            matched |= t == c;
            prev = c;
        } else if (c == '-' && prev && p[1] && p[1] != ']') {
            unsigned char hi = *++p;
            if (hi == '\\') {
                hi = *++p;
                if (!hi)
                    return WM_ABORT_ALL;
            }
            matched |= t >= prev && t <= hi;
            prev = 0; /* "a-c-e": the second dash is a plain character */
        } else if (c == '[' && p[1] == ':') {
            const unsigned char *name = p + 2, *end = name;
            while (*end && *end != ']')
                end++;
            if (!*end)
                return WM_ABORT_ALL;
            if (end - name < 1 || end[-1] != ':') {
                /* No ":]": a plain "[". */
                matched |= t == '[';
                prev = '[';
                continue;
            }
            bool known;
            matched |= named_class((const char *)name, (size_t)(end - 1 - name), t, &known);
            if (!known)
                return WM_ABORT_ALL;
            p = end;
            prev = 0;
        } else {
            matched |= t == c;
            prev = c;
        }
    }
    *pp = p;
    return matched != negated ? WM_MATCH : WM_NOMATCH;
}

static int wild(const unsigned char *start, const unsigned char *p, const unsigned char *t, bool pathname)
{
    for (; *p; p++, t++) {
        unsigned char pc = *p, tc = *t;
        if (!tc && pc != '*')
            return WM_ABORT_ALL;
        switch (pc) {
        case '\\':
            pc = *++p;
            if (!pc || tc != pc)
                return WM_NOMATCH;
            break;
        case '?':
            if (pathname && tc == '/')
                return WM_NOMATCH;
            break;
        case '[': {
            int r = bracket(&p, tc);
            if (r == WM_ABORT_ALL)
                return r;
            if (r == WM_NOMATCH || (pathname && tc == '/'))
                return WM_NOMATCH;
            break;
        }
        case '*': {
            bool cross; /* may this star match a "/"? */
            const unsigned char *before = p - 1;
            if (p[1] == '*') {
                while (p[1] == '*')
                    p++;
                const unsigned char *after = p + 1;
                /* "**" standing alone between slashes (or at an end)
                 * spans directories; anywhere else it is one star. */
                if ((before < start || *before == '/') && (!*after || *after == '/')) {
                    if (*after == '/' && wild(start, after + 1, t, pathname) == WM_MATCH)
                        return WM_MATCH; /* "a/" "**" "/b": no directory between */
                    cross = true;
                } else {
                    cross = !pathname;
                }
            } else {
                cross = !pathname;
            }
            p++;
            if (!*p)
                return cross || !strchr((const char *)t, '/') ? WM_MATCH : WM_NOMATCH;
            if (!cross && *p == '/') {
                /* "*" then "/": the star takes the rest of this name. */
                const char *slash = strchr((const char *)t, '/');
                if (!slash)
                    return WM_ABORT_ALL;
                t = (const unsigned char *)slash;
                break; /* the "/" of each side is passed by the loop */
            }
            for (;; tc = *++t) {
                if (!tc)
                    return WM_ABORT_ALL;
                int r = wild(start, p, t, pathname);
                if (r != WM_NOMATCH) {
                    if (!cross || r != WM_ABORT_TO_STARSTAR)
                        return r;
                } else if (!cross && tc == '/') {
                    return WM_ABORT_TO_STARSTAR;
                }
            }
        }
        default:
            if (tc != pc)
                return WM_NOMATCH;
            break;
        }
    }
    return *t ? WM_NOMATCH : WM_MATCH;
}

bool snap_wildmatch(const char *pattern, const char *text, bool pathname)
{
    const unsigned char *p = (const unsigned char *)pattern;
    return wild(p, p, (const unsigned char *)text, pathname) == WM_MATCH;
}

/* ---- rules ------------------------------------------------------------------------ */

/* One line of a .gitignore into r; false for a blank line, a comment or
 * something unusable. */
static bool parse_line(const char *line, size_t len, rule *r)
{
    if (len == 0 || line[0] == '#' || len > PATTERN_MAX)
        return false;
    memset(r, 0, sizeof *r);
    if (line[0] == '!') {
        r->negative = true;
        line++;
        len--;
    }
    /* Trailing spaces go unless escaped with a backslash. */
    while (len > 0 && line[len - 1] == ' ') {
        size_t backslashes = 0;
        while (backslashes + 1 < len && line[len - 2 - backslashes] == '\\')
            backslashes++;
        if (backslashes % 2)
            break;
        len--;
    }
    if (len > 0 && line[len - 1] == '/') {
        r->dir_only = true;
        len--;
    }
    if (len == 0)
        return false;
    const char *slash = memchr(line, '/', len);
    r->basename = slash == NULL;
    if (line[0] == '/') {
        line++;
        len--;
        if (len == 0)
            return false;
    }
    r->pattern = xstrndup(line, len);
    if (strlen(r->pattern) != len) { /* a NUL inside: no such name exists */
        free(r->pattern);
        return false;
    }
    r->literal = strpbrk(r->pattern, "*?[\\") == NULL;
    return true;
}

void snap_ignore_add(snap_ignore *ig, const char *base, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end && ig->n < RULES_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        rule r;
        if (parse_line(p, n, &r)) {
            r.base = xstrdup(base);
            if (ig->n == ig->cap) {
                ig->cap = ig->cap ? ig->cap * 2 : 64;
                ig->rules = xrealloc(ig->rules, ig->cap * sizeof *ig->rules);
            }
            ig->rules[ig->n++] = r;
        }
        p = nl ? nl + 1 : end;
    }
}

/* path relative to base, or NULL when path is not below base. */
static const char *below(const char *path, const char *base)
{
    size_t bl = strlen(base);
    if (!bl)
        return path;
    if (strncmp(path, base, bl) != 0 || path[bl] != '/')
        return NULL;
    return path + bl + 1;
}

bool snap_ignore_match(const snap_ignore *ig, const char *path, bool dir)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    for (size_t i = ig->n; i-- > 0;) {
        const rule *r = &ig->rules[i];
        if (r->dir_only && !dir)
            continue;
        const char *rel = below(path, r->base);
        if (!rel)
            continue;
        bool hit = r->literal    ? strcmp(r->pattern, r->basename ? name : rel) == 0
                   : r->basename ? snap_wildmatch(r->pattern, name, false)
                                 : snap_wildmatch(r->pattern, rel, true);
        if (hit)
            return !r->negative;
    }
    return false;
}
