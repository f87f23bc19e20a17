/*
 * rules_syntax.c - reading the rules language (docs/corral.rules.5): the
 * lexer and the parser of a file into calls with string and list
 * arguments.  rules_parse.c gives the calls their meaning.
 *
 * Supported, as Starlark reads it: calls of a name with keyword or
 * positional arguments; strings in ' " ''' """ with Starlark's escapes, and
 * r"raw" strings; lists, nested, with trailing commas; `+` on strings and
 * on lists; # comments; `;` after a call; lines joined inside brackets and
 * by a final backslash; no tabs, no indented top-level lines.  Everything
 * else (variables, f-strings, numbers, None, def, load...) is an error
 * that says so.
 */
#include "config.h"

#include "base/quote.h"
#include "policy/rules_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------- */

void rules_fail_at(perr *e, int line, int col, const char *fmt, ...)
{
    if (e->set)
        return;
    e->set = true;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The message quotes the file's strings: keep it on one line, with
     * nothing a terminal would act on (quote.h; C1 controls included). */
    char *text = xasprintf("%s:%d:%d: %s", e->name, line, col, msg);
    char *v = quote_text_visible(text, strlen(text));
    snprintf(e->buf, e->len, "%s", v);
    free(v);
    free(text);
}

/* ---- lexer ---------------------------------------------------------------------------- */

typedef enum tkind { T_EOF, T_NEWLINE, T_IDENT, T_STRING, T_NUMBER, T_PUNCT } tkind;

typedef struct tok {
    tkind k;
    int line, col;
    const char *p; /* source text */
    size_t len;
    rstr str; /* T_STRING: the value (owned until taken) */
} tok;

typedef struct lexer {
    const char *s;
    size_t len, i;
    int line, col;
    int depth;         /* open ( [ { */
    bool line_start;   /* at the start of a logical line at depth 0 */
    bool last_newline; /* the last token was a NEWLINE (or none yet) */
    perr *e;
} lexer;

static int peekc(const lexer *lx, size_t ahead)
{
    return lx->i + ahead < lx->len ? (unsigned char)lx->s[lx->i + ahead] : -1;
}

static void adv(lexer *lx)
{
    unsigned char c = (unsigned char)lx->s[lx->i++];
    if (c == '\n') {
        lx->line++;
        lx->col = 1;
    } else if ((c & 0xc0) != 0x80) { /* columns count characters, not bytes */
        lx->col++;
    }
}

static bool is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(int c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static void put_scalar(buf_t *b, uint32_t c)
{
    char u[4];
    size_t n = utf8_put_scalar(c, u);
    buf_append(b, u, n);
}

/* A string literal whose opening quote is at lx->i; t has its position. */
static bool lex_string(lexer *lx, tok *t, bool raw)
{
    int q = peekc(lx, 0);
    bool triple = peekc(lx, 1) == q && peekc(lx, 2) == q;
    for (int k = 0; k < (triple ? 3 : 1); k++)
        adv(lx);
    buf_t b;
    buf_init(&b);
    for (;;) {
        int c = peekc(lx, 0);
        if (c < 0 || (c == '\n' && !triple)) {
            rules_fail_at(lx->e, t->line, t->col, "unfinished string literal (no closing %s)",
                    triple ? (q == '"' ? "\"\"\"" : "'''") : (q == '"' ? "\"" : "'"));
            buf_free(&b);
            return false;
        }
        if (c == q) {
            if (!triple) {
                adv(lx);
                break;
            }
            if (peekc(lx, 1) == q && peekc(lx, 2) == q) {
                adv(lx), adv(lx), adv(lx);
                break;
            }
            buf_putc(&b, (char)c);
            adv(lx);
            continue;
        }
        if (c != '\\') {
            buf_putc(&b, (char)c);
            adv(lx);
            continue;
        }
        int eline = lx->line, ecol = lx->col;
        int d = peekc(lx, 1);
        if (raw) { /* kept as written, but \" is " (it does not end the string) */
            if (d != q)
                buf_putc(&b, '\\');
            adv(lx);
            if (d >= 0) {
                buf_putc(&b, (char)d);
                adv(lx);
            }
            continue;
        }
        adv(lx); /* the backslash */
        if (d < 0)
            continue; /* reported as unfinished */
        const char *simple = strchr("\n\\'\"abfnrtv", d);
        if (d && simple) {
            adv(lx);
            static const char to[] = {0, '\\', '\'', '"', '\a', '\b', '\f', '\n', '\r', '\t', '\v'};
            if (d != '\n')
                buf_putc(&b, to[simple - "\n\\'\"abfnrtv"]);
            continue;
        }
        if (d >= '0' && d <= '7') {
            uint32_t v = 0;
            for (int k = 0; k < 3 && peekc(lx, 0) >= '0' && peekc(lx, 0) <= '7'; k++) {
                v = v * 8 + (uint32_t)(peekc(lx, 0) - '0');
                adv(lx);
            }
            put_scalar(&b, v);
            continue;
        }
        if (d == 'x' || d == 'u' || d == 'U') {
            int want = d == 'x' ? 2 : d == 'u' ? 4 : 8;
            adv(lx);
            uint32_t v = 0;
            for (int k = 0; k < want; k++) {
                int h = hex_value(peekc(lx, 0));
                if (h < 0) {
                    rules_fail_at(lx->e, eline, ecol, "invalid escape sequence: \\%c needs %d hex digits", d, want);
                    buf_free(&b);
                    return false;
                }
                v = v * 16 + (uint32_t)h;
                adv(lx);
            }
            if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) {
                rules_fail_at(lx->e, eline, ecol, "invalid escape sequence: \\%c%0*X is not a Unicode scalar value", d,
                        want, v);
                buf_free(&b);
                return false;
            }
            put_scalar(&b, v);
            continue;
        }
        buf_putc(&b, '\\'); /* an unknown escape stays as written, as in Starlark */
    }
    t->k = T_STRING;
    t->str = rstr_dup(b.data ? b.data : "", b.len);
    buf_free(&b);
    return true;
}

/* The next token into t; false on a lexical error (reported). */
static bool lex(lexer *lx, tok *t)
{
    memset(t, 0, sizeof *t);
    bool indented = false;
    for (;;) {
        int c = peekc(lx, 0);
        if (c == ' ' || c == '\t') {
            if (lx->line_start && lx->depth == 0) {
                indented = true; /* an error unless the line is blank or a comment */
            } else if (c == '\t') {
                rules_fail_at(lx->e, lx->line, lx->col, "tabs are not allowed (use spaces)");
                return false;
            }
            adv(lx);
        } else if (c == '\\' && peekc(lx, 1) == '\n') {
            adv(lx);
            adv(lx);
        } else if (c == '#') {
            while (peekc(lx, 0) >= 0 && peekc(lx, 0) != '\n')
                adv(lx);
        } else if (c == '\n') {
            t->line = lx->line, t->col = lx->col;
            adv(lx);
            indented = false;
            if (lx->depth > 0)
                continue;
            lx->line_start = true;
            if (lx->last_newline)
                continue;
            lx->last_newline = true;
            t->k = T_NEWLINE;
            return true;
        } else {
            break;
        }
    }
    t->line = lx->line, t->col = lx->col;
    t->p = lx->s + lx->i;
    int c = peekc(lx, 0);
    if (c < 0) {
        t->k = T_EOF;
        return true;
    }
    if (indented) {
        rules_fail_at(lx->e, t->line, 1, "unexpected indentation: a top-level call starts in column 1");
        return false;
    }
    if (c < 0x20 || c == 0x7f) {
        rules_fail_at(lx->e, t->line, t->col, "invalid character U+%04X outside a string", (unsigned)c);
        return false;
    }
    lx->line_start = false;
    lx->last_newline = false;
    if (c == '"' || c == '\'') {
        if (!lex_string(lx, t, false))
            return false;
    } else if (is_ident_start(c)) {
        while (is_ident_char(peekc(lx, 0)))
            adv(lx);
        size_t n = (size_t)(lx->s + lx->i - t->p);
        int q = peekc(lx, 0);
        bool f = memchr(t->p, 'f', n) || memchr(t->p, 'F', n), b = memchr(t->p, 'b', n) || memchr(t->p, 'B', n);
        if ((q == '"' || q == '\'') && n == 1 && t->p[0] == 'r') {
            if (!lex_string(lx, t, true))
                return false;
        } else if ((q == '"' || q == '\'') && n <= 2 && (f || b)) {
            rules_fail_at(lx->e, t->line, t->col, "%s are not supported in rules files", f ? "f-strings" : "bytes literals");
            return false;
        } else {
            t->k = T_IDENT;
        }
    } else if (c >= '0' && c <= '9') {
        while (is_ident_char(peekc(lx, 0)) || peekc(lx, 0) == '.')
            adv(lx);
        t->k = T_NUMBER;
    } else {
        t->k = T_PUNCT;
        adv(lx);
        while (lx->i < lx->len && ((unsigned char)lx->s[lx->i] & 0xc0) == 0x80)
            adv(lx);
        if (c == '(' || c == '[' || c == '{')
            lx->depth++;
        else if ((c == ')' || c == ']' || c == '}') && lx->depth > 0)
            lx->depth--;
    }
    t->len = (size_t)(lx->s + lx->i - t->p);
    return true;
}

/* ---- syntax tree ---------------------------------------------------------------------- */

void rules_value_free(value *v)
{
    rstr_free(&v->str);
    for (size_t i = 0; i < v->n; i++)
        rules_value_free(&v->items[i]);
    free(v->items);
    v->items = NULL;
    v->n = 0;
}

void rules_call_free(call *c)
{
    free(c->name);
    for (size_t i = 0; i < c->n; i++) {
        free(c->args[i].kw);
        rules_value_free(&c->args[i].v);
    }
    free(c->args);
}

/* ---- parser --------------------------------------------------------------------------- */

typedef struct parser {
    lexer lx;
    tok cur, nxt;
    bool have_nxt;
    int depth; /* lists open around the value being read */
    perr *e;
} parser;

static bool next(parser *p)
{
    rstr_free(&p->cur.str);
    if (p->have_nxt) {
        p->cur = p->nxt;
        p->have_nxt = false;
        return true;
    }
    return lex(&p->lx, &p->cur);
}

static bool peek2(parser *p)
{
    if (!p->have_nxt) {
        if (!lex(&p->lx, &p->nxt))
            return false;
        p->have_nxt = true;
    }
    return true;
}

static bool is_punct(const tok *t, char c)
{
    return t->k == T_PUNCT && t->len == 1 && t->p[0] == c;
}

/* "'decision'", "end of file", ... for "found X". */
static const char *describe(const tok *t, char *out, size_t n)
{
    switch (t->k) {
    case T_EOF: return "end of file";
    case T_NEWLINE: return "end of line";
    case T_STRING:
        snprintf(out, n, "string %.*s%s", (int)(t->len > 30 ? 30 : t->len), t->p, t->len > 30 ? "..." : "");
        return out;
    case T_NUMBER: snprintf(out, n, "number '%.*s'", (int)(t->len > 30 ? 30 : t->len), t->p); return out;
    default: snprintf(out, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->p); return out;
    }
}

static bool expected(parser *p, const char *what)
{
    char d[96];
    rules_fail_at(p->e, p->cur.line, p->cur.col, "expected %s, found %s", what, describe(&p->cur, d, sizeof d));
    return false;
}

static bool parse_value(parser *p, value *v);

/* Room for one more element of v->items (capacity *cap, doubling). */
static void grow_items(value *v, size_t *cap, size_t more)
{
    if (v->n + more <= *cap)
        return;
    size_t c = *cap ? *cap : 4;
    while (c < v->n + more)
        c *= 2;
    v->items = xrealloc(v->items, c * sizeof *v->items);
    *cap = c;
}

/* The elements of a list whose '[' is p->cur, up to its ']' (left in p->cur).
 * v->items[0..v->n) are the elements read so far, whatever happens. */
static bool parse_list_items(parser *p, value *v)
{
    size_t cap = 0;
    if (!next(p))
        return false;
    while (!is_punct(&p->cur, ']')) {
        grow_items(v, &cap, 1);
        value *item = &v->items[v->n];
        if (!parse_value(p, item)) {
            rules_value_free(item);
            return false;
        }
        v->n++;
        if (is_punct(&p->cur, ',')) {
            if (!next(p))
                return false;
        } else if (!is_punct(&p->cur, ']')) {
            return expected(p, "',' or ']' after list element");
        }
    }
    return true;
}

static bool parse_primary(parser *p, value *v)
{
    memset(v, 0, sizeof *v);
    v->line = p->cur.line, v->col = p->cur.col;
    if (p->cur.k == T_STRING) {
        v->kind = V_STR;
        v->str = p->cur.str;
        p->cur.str = (rstr){0};
        return next(p);
    }
    if (is_punct(&p->cur, '[')) {
        v->kind = V_LIST;
        /* The reader recurses once per level: a hostile file of "[[[[..."
         * must end in an error, not in a stack overflow. */
        if (p->depth >= RULES_MAX_NESTING) {
            rules_fail_at(p->e, p->cur.line, p->cur.col,
                          "lists nested more than %d deep (a pattern needs two levels, examples three)",
                          RULES_MAX_NESTING);
            return false;
        }
        p->depth++;
        bool ok = parse_list_items(p, v);
        p->depth--;
        return ok && next(p);
    }
    char d[96];
    if (p->cur.k == T_IDENT) {
        if ((p->cur.len == 4 && (memcmp(p->cur.p, "None", 4) == 0 || memcmp(p->cur.p, "True", 4) == 0)) ||
            (p->cur.len == 5 && memcmp(p->cur.p, "False", 5) == 0))
            return expected(p, "a string or a list");
        rules_fail_at(p->e, p->cur.line, p->cur.col,
                "variables are not supported in rules files: write the string or list itself instead of %s",
                describe(&p->cur, d, sizeof d));
        return false;
    }
    if (is_punct(&p->cur, '('))
        return expected(p, "a string or a list (tuples are not supported: use [...])");
    return expected(p, "a string or a list");
}

/* primary ('+' primary)*: strings join, lists concatenate.  v is filled
 * whatever happens (the caller frees it); a chain of any length costs time
 * in proportion to its size. */
static bool parse_value(parser *p, value *v)
{
    if (!parse_primary(p, v))
        return false;
    buf_t joined; /* the string so far, once a '+' follows a string */
    buf_init(&joined);
    size_t cap = v->n;
    bool ok = true;
    while (ok && is_punct(&p->cur, '+')) {
        int line = p->cur.line, col = p->cur.col;
        value r = {0}; /* freed below: it must be valid even when next() fails */
        ok = next(p) && parse_primary(p, &r);
        if (ok && r.kind != v->kind) {
            rules_fail_at(p->e, line, col, "cannot add a %s and a %s", v->kind == V_STR ? "string" : "list",
                          r.kind == V_STR ? "string" : "list");
            ok = false;
        }
        if (ok && v->kind == V_STR) {
            if (!joined.data)
                buf_append(&joined, v->str.s, v->str.n);
            buf_append(&joined, r.str.s, r.str.n);
        } else if (ok) {
            grow_items(v, &cap, r.n);
            if (r.n)
                memcpy(v->items + v->n, r.items, r.n * sizeof *r.items);
            v->n += r.n;
            r.n = 0; /* moved: only the array itself is freed with r */
        }
        rules_value_free(&r);
    }
    if (joined.data) {
        rstr_free(&v->str);
        v->str.n = joined.len;
        v->str.s = buf_steal(&joined);
    }
    return ok;
}

static bool parse_call(parser *p, call *c)
{
    static const char *const statements[] = {"def", "load", "if", "for", "while", "return", "lambda", "pass",
                                             "elif", "else", "break", "continue"};
    memset(c, 0, sizeof *c);
    c->line = p->cur.line, c->col = p->cur.col;
    char d[96];
    if (p->cur.k != T_IDENT)
        return expected(p, "a call such as prefix_rule(...)");
    for (size_t i = 0; i < sizeof statements / sizeof *statements; i++) {
        if (strlen(statements[i]) == p->cur.len && memcmp(statements[i], p->cur.p, p->cur.len) == 0) {
            rules_fail_at(p->e, c->line, c->col,
                    "'%s' is not supported: a rules file holds only prefix_rule(...), host_executable(...) and "
                    "network_rule(...) calls",
                    statements[i]);
            return false;
        }
    }
    c->name = xstrndup(p->cur.p, p->cur.len);
    if (!next(p))
        return false;
    if (is_punct(&p->cur, '=') || is_punct(&p->cur, '+')) {
        rules_fail_at(p->e, c->line, c->col, "variables are not supported in rules files (assignment to '%s')", c->name);
        return false;
    }
    if (!is_punct(&p->cur, '(')) {
        snprintf(d, sizeof d, "'(' after '%s'", c->name);
        return expected(p, d);
    }
    if (!next(p))
        return false;
    while (!is_punct(&p->cur, ')')) {
        arg a = {0};
        a.line = p->cur.line, a.col = p->cur.col;
        if (p->cur.k != T_IDENT && p->cur.k != T_STRING && !is_punct(&p->cur, '['))
            return expected(p, "an argument or ')'");
        /* No builtin takes more than five: this bounds the repeated-keyword
         * check below, which is quadratic in the number of arguments. */
        if (c->n == RULES_MAX_ARGS) {
            rules_fail_at(p->e, a.line, a.col, "too many arguments for %s (a call takes at most %d)", c->name,
                          RULES_MAX_ARGS);
            return false;
        }
        if (p->cur.k == T_IDENT) {
            if (!peek2(p))
                return false;
            if (is_punct(&p->nxt, '=')) {
                a.kw = xstrndup(p->cur.p, p->cur.len);
                if (!next(p) || !next(p)) {
                    free(a.kw);
                    return false;
                }
            }
        }
        if (!a.kw && c->n > 0 && c->args[c->n - 1].kw) {
            rules_fail_at(p->e, a.line, a.col, "positional argument after keyword arguments");
            return false;
        }
        for (size_t i = 0; a.kw && i < c->n; i++) {
            if (c->args[i].kw && strcmp(c->args[i].kw, a.kw) == 0) {
                rules_fail_at(p->e, a.line, a.col, "repeated keyword '%s' (first given at %d:%d)", a.kw, c->args[i].line,
                        c->args[i].col);
                free(a.kw);
                return false;
            }
        }
        bool ok = parse_value(p, &a.v);
        if ((c->n & (c->n - 1)) == 0) /* 0, 1, 2, 4, 8: double the room */
            c->args = xrealloc(c->args, (c->n ? 2 * c->n : 1) * sizeof *c->args);
        c->args[c->n++] = a;
        if (!ok)
            return false;
        if (is_punct(&p->cur, ',')) {
            if (!next(p))
                return false;
        } else if (!is_punct(&p->cur, ')')) {
            return expected(p, "',' or ')' after argument");
        }
    }
    return next(p);
}

static bool parse_file(parser *p, call **calls, size_t *ncalls)
{
    size_t cap = 0;
    if (!next(p))
        return false;
    for (;;) {
        while (p->cur.k == T_NEWLINE)
            if (!next(p))
                return false;
        if (p->cur.k == T_EOF)
            return true;
        if (*ncalls == cap) {
            cap = cap ? 2 * cap : 16;
            *calls = xrealloc(*calls, cap * sizeof **calls);
        }
        call *c = &(*calls)[(*ncalls)++];
        if (!parse_call(p, c))
            return false;
        if (is_punct(&p->cur, ';')) { /* c(); d() and c(); are fine, ;; is not */
            if (!next(p))
                return false;
            continue;
        }
        if (p->cur.k != T_NEWLINE && p->cur.k != T_EOF)
            return expected(p, "end of line after the call");
    }
}

bool rules_parse_calls(perr *e, const char *text, size_t len, call **calls, size_t *ncalls)
{
    parser p = {0};
    p.lx = (lexer){text, len, 0, 1, 1, 0, true, true, e};
    p.e = e;
    *calls = NULL;
    *ncalls = 0;
    bool ok = parse_file(&p, calls, ncalls);
    rstr_free(&p.cur.str);
    if (p.have_nxt)
        rstr_free(&p.nxt.str);
    return ok;
}
