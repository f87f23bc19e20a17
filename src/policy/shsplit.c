/*
 * shsplit.c - a small shell lexer for the exec policy: enough of POSIX sh
 * quoting to read words exactly, and to recognise (not interpret) every
 * construct that makes a script more than a list of plain commands.
 */
#include "config.h"

#include "policy/shsplit.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

typedef enum tok_kind {
    T_END,
    T_WORD,  /* text holds the word with quotes removed */
    T_SEP,   /* && || ; | newline: joins plain commands */
    T_OTHER, /* anything else: redirection, & ( ) ;; |& ... */
} tok_kind;

typedef struct token {
    tok_kind kind;
    buf_t text;
    bool literal; /* a word without expansions or substitutions */
    bool pattern; /* a word the shell may turn into other words: a glob,
                     a brace expansion, a tilde, zsh's =cmd */
    bool quoted;  /* some part of the word was quoted */
    bool io_number; /* "2" of 2>file, "{fd}" of {fd}>file: part of a redirection, not a word */
} token;

/* Substitutions inside substitutions read for their commands: deeper ones
 * are skipped (each level copies and rescans its text). */
#define MAX_SUBST_DEPTH 16

typedef struct lexer {
    const char *p;
    sh_commands *subs; /* literal mode: commands of $(...) and `...` go here */
    int depth;         /* literal mode: substitutions around this text */
} lexer;

static void collect_literal(const char *script, size_t len, int depth, sh_commands *out);

static void add_command(sh_commands *out, char **argv, size_t argc)
{
    char **copy = xcalloc(argc + 1, sizeof *copy);
    for (size_t i = 0; i < argc; i++)
        copy[i] = xstrdup(argv[i]);
    out->cmds = xrealloc(out->cmds, (out->n + 1) * sizeof *out->cmds);
    out->cmds[out->n++] = copy;
}

void sh_commands_free(sh_commands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        for (char **a = c->cmds[i]; *a; a++)
            free(*a);
        free(c->cmds[i]);
    }
    free(c->cmds);
    c->cmds = NULL;
    c->n = 0;
}

const char *shsplit_shell_script(char *const *argv)
{
    if (!argv[0] || !argv[1] || !argv[2] || argv[3])
        return NULL;
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp(base, "bash") != 0 && strcmp(base, "sh") != 0 && strcmp(base, "zsh") != 0)
        return NULL;
    if (strcmp(argv[1], "-c") != 0 && strcmp(argv[1], "-lc") != 0)
        return NULL;
    return argv[2];
}

/* The end of a $( ... ) whose '(' is at p[-1]: past the matching ')',
 * minding quotes and nesting; NULL when unbalanced. */
static const char *skip_parens(const char *p)
{
    int depth = 1;
    while (*p) {
        char c = *p++;
        if (c == '\\' && *p)
            p++;
        else if (c == '\'') {
            while (*p && *p != '\'')
                p++;
            if (*p)
                p++;
        } else if (c == '"') {
            while (*p && *p != '"')
                p += (*p == '\\' && p[1]) ? 2 : 1;
            if (*p)
                p++;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return p;
        }
    }
    return NULL;
}

/* $(...) or `...` at *pp (after the opening): its commands go to subs;
 * returns false when it is not closed. */
static bool substitution(lexer *lx, const char **pp, bool backtick)
{
    const char *start = *pp, *end;
    if (backtick) {
        end = start;
        while (*end && *end != '`')
            end += (*end == '\\' && end[1]) ? 2 : 1;
        if (!*end)
            return false;
        if (lx->subs && lx->depth < MAX_SUBST_DEPTH)
            collect_literal(start, (size_t)(end - start), lx->depth + 1, lx->subs);
        *pp = end + 1;
        return true;
    }
    end = skip_parens(start);
    if (!end)
        return false;
    if (lx->subs && lx->depth < MAX_SUBST_DEPTH)
        collect_literal(start, (size_t)(end - 1 - start), lx->depth + 1, lx->subs);
    *pp = end;
    return true;
}

static bool word_char(char c)
{
    return c && !strchr(" \t\n;&|<>()", c);
}

/* The rest of the text after an unterminated quote or substitution: it is
 * all one broken token (a syntax error for the shell), and reading on
 * from inside it could rescan the rest again for every "$(" in it. */
static const char *broken_rest(const char *p)
{
    return p + strlen(p);
}

/* One token.  An unterminated quote or substitution is T_OTHER (a syntax
 * error is never a plain script).
 *
 * A backslash-newline is removed wherever the shell removes it (between
 * words, inside a word, inside double quotes; not inside single quotes or
 * a comment), so that `tou\<newline>ch` is read as the shell runs it:
 * touch. */
static void next_token(lexer *lx, token *t)
{
    const char *p = lx->p;
    buf_free(&t->text);
    buf_init(&t->text);
    t->literal = true;
    t->pattern = false;
    t->quoted = false;
    t->io_number = false;
    while (*p == ' ' || *p == '\t' || (*p == '\\' && p[1] == '\n'))
        p += *p == '\\' ? 2 : 1;
    if (*p == '#') { /* a comment runs to the end of the line */
        while (*p && *p != '\n')
            p++;
    }
    if (!*p) {
        t->kind = T_END;
        lx->p = p;
        return;
    }
    if ((p[0] == '&' && p[1] == '&') || (p[0] == '|' && p[1] == '|')) {
        t->kind = T_SEP;
        buf_append(&t->text, p, 2);
        lx->p = p + 2;
        return;
    }
    if (p[0] == '|' && p[1] == '&') {
        t->kind = T_OTHER;
        lx->p = p + 2;
        return;
    }
    if (*p == '\n' || *p == '|' || (*p == ';' && p[1] != ';')) {
        t->kind = T_SEP;
        buf_putc(&t->text, *p);
        lx->p = p + 1;
        return;
    }
    if (!word_char(*p)) { /* & ( ) < > ;; and friends */
        t->kind = T_OTHER;
        lx->p = p + (p[0] == ';' ? 2 : 1);
        return;
    }
    t->kind = T_WORD;
    bool open_bracket = false, open_brace = false; /* unquoted [ and { seen */
    char prev = 0;                                 /* the last unquoted character, or 0 */
    while (word_char(*p)) {
        char c = *p++;
        char was = prev;
        prev = 0;
        if (c == '\\') {
            if (*p == '\n') { /* a line continuation: gone, the word goes on */
                p++;
                prev = was;
                continue;
            }
            if (!*p) { /* bash and dash keep a final backslash, zsh drops it */
                t->kind = T_OTHER;
                break;
            }
            buf_putc(&t->text, *p++);
            t->quoted = true;
        } else if (c == '\'') {
            const char *q = strchr(p, '\'');
            if (!q) {
                t->kind = T_OTHER;
                p = broken_rest(p);
                break;
            }
            buf_append(&t->text, p, (size_t)(q - p));
            p = q + 1;
            t->quoted = true;
        } else if (c == '"') {
            t->quoted = true;
            while (*p && *p != '"') {
                if (*p == '\\' && p[1] == '\n') {
                    p += 2; /* removed inside double quotes too */
                } else if (*p == '\\' && p[1] && strchr("\"\\$`", p[1])) {
                    buf_putc(&t->text, p[1]);
                    p += 2;
                } else if (*p == '$' && p[1] == '(') {
                    p += 2;
                    t->literal = false;
                    if (!substitution(lx, &p, false)) {
                        t->kind = T_OTHER;
                        break;
                    }
                } else if (*p == '`') {
                    p++;
                    t->literal = false;
                    if (!substitution(lx, &p, true)) {
                        t->kind = T_OTHER;
                        break;
                    }
                } else {
                    if (*p == '$')
                        t->literal = false;
                    buf_putc(&t->text, *p++);
                }
            }
            if (t->kind == T_OTHER || *p != '"') {
                t->kind = T_OTHER;
                p = broken_rest(p);
                break;
            }
            p++;
        } else if (c == '$' && *p == '(') {
            p++;
            t->literal = false;
            if (!substitution(lx, &p, false)) {
                t->kind = T_OTHER;
                p = broken_rest(p);
                break;
            }
        } else if (c == '`') {
            t->literal = false;
            if (!substitution(lx, &p, true)) {
                t->kind = T_OTHER;
                p = broken_rest(p);
                break;
            }
        } else {
            if (c == '$')
                t->literal = false;
            /* Unquoted, these make the shell expand the word: *, ?, [...]
             * globs (a file the sandbox creates can match them), {a,b}
             * braces, a ~ at the start or after = or : (bash expands
             * a=~), and zsh's =cmd.  What runs is then not the word. */
            bool first = t->text.len == 0 && !t->quoted;
            if (c == '*' || c == '?' || (c == ']' && open_bracket) || (c == '}' && open_brace) ||
                (c == '~' && (first || was == '=' || was == ':')) || (c == '=' && first))
                t->pattern = true;
            open_bracket = open_bracket || c == '[';
            open_brace = open_brace || c == '{';
            buf_putc(&t->text, c);
            prev = c;
        }
    }
    /* Digits (or bash's {name}) right before < or >, unquoted: the shell
     * reads them as the redirection's descriptor, so "2>/dev/null touch x"
     * runs touch, not a command named 2. */
    if (t->kind == T_WORD && !t->quoted && t->text.len && (*p == '<' || *p == '>')) {
        const char *w = t->text.data;
        size_t n = t->text.len;
        bool digits = strspn(w, "0123456789") == n;
        bool named = n > 2 && w[0] == '{' && w[n - 1] == '}' && strspn(w + 1, "abcdefghijklmnopqrstuvwxyz"
                                                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                              "0123456789_") == n - 2;
        t->io_number = digits || named;
    }
    lx->p = p;
}

/* Words that make a command something other than a plain one. */
static bool reserved(const token *t)
{
    static const char *const words[] = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do",
                                        "done", "case", "esac", "function", "select", "{", "}", "!", "[[",
                                        "]]", "coproc", "time", NULL};
    if (t->quoted || !t->text.data)
        return false;
    for (const char *const *w = words; *w; w++)
        if (strcmp(t->text.data, *w) == 0)
            return true;
    return false;
}

/* NAME=value before a command: an assignment, not a plain word. */
static bool assignment(const token *t)
{
    const char *s = t->text.data;
    if (!s || t->quoted || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
        return false;
    while (*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
        s++;
    return *s == '=';
}

typedef struct words {
    char **v;
    size_t n, cap;
} words;

static void words_push(words *w, const char *s)
{
    if (w->n + 1 >= w->cap) {
        w->cap = w->cap ? w->cap * 2 : 8;
        w->v = xrealloc(w->v, w->cap * sizeof *w->v);
    }
    w->v[w->n++] = xstrdup(s ? s : "");
    w->v[w->n] = NULL;
}

static void words_clear(words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    w->n = 0;
}

int shsplit_plain(const char *script, sh_commands *out)
{
    memset(out, 0, sizeof *out);
    lexer lx = {script, NULL, 0};
    token t = {0};
    words w = {0};
    int complex = 0;
    bool need_command = false; /* the last separator was && || or | */
    for (;;) {
        next_token(&lx, &t);
        if (t.kind == T_END)
            break;
        if (t.kind == T_OTHER ||
            (t.kind == T_WORD && (!t.literal || t.pattern || (w.n == 0 && (reserved(&t) || assignment(&t)))))) {
            complex = 1;
            break;
        }
        if (t.kind == T_WORD) {
            words_push(&w, t.text.data);
            need_command = false;
            continue;
        }
        bool newline = t.text.data[0] == '\n', semi = t.text.data[0] == ';';
        if (w.n) {
            add_command(out, w.v, w.n);
            words_clear(&w);
        } else if (!newline || need_command) {
            /* "a && && b", "; a", "a |" then a newline: not a plain list */
            if (!(newline && need_command)) {
                complex = 1;
                break;
            }
            continue; /* a line break after && waits for the command */
        }
        need_command = !newline && !semi;
    }
    if (!complex && w.n)
        add_command(out, w.v, w.n);
    else if (!complex && need_command)
        complex = 1; /* ends in && || or | */
    if (!complex && out->n == 0)
        complex = 1; /* nothing to run is not a plain command either */
    words_clear(&w);
    free(w.v);
    buf_free(&t.text);
    if (complex)
        sh_commands_free(out);
    return complex;
}

static void collect_literal(const char *script, size_t len, int depth, sh_commands *out)
{
    char *copy = xstrndup(script, len);
    lexer lx = {copy, out, depth};
    token t = {0};
    words w = {0};
    bool literal = true, skip_next = false;
    for (;;) {
        next_token(&lx, &t);
        bool end_command = t.kind != T_WORD;
        if (t.kind == T_WORD) {
            if (skip_next) { /* a redirection's target */
                skip_next = false;
                continue;
            }
            if (t.io_number)
                continue; /* the descriptor of the redirection that follows */
            if (w.n == 0 && (reserved(&t) || assignment(&t)))
                continue; /* if/for/do... and NAME=x: the command follows */
            literal = literal && t.literal;
            words_push(&w, t.text.data);
        } else if (t.kind == T_OTHER && (lx.p[-1] == '<' || lx.p[-1] == '>')) {
            skip_next = true;
            end_command = false;
        }
        if (end_command || t.kind == T_END) {
            if (w.n && literal)
                add_command(out, w.v, w.n);
            words_clear(&w);
            literal = true;
        }
        if (t.kind == T_END)
            break;
    }
    words_clear(&w);
    free(w.v);
    buf_free(&t.text);
    free(copy);
}

void shsplit_literal(const char *script, sh_commands *out)
{
    memset(out, 0, sizeof *out);
    collect_literal(script, strlen(script), 0, out);
}
