/*
 * fuzz_gitconfig.c - libFuzzer target for the git config reader
 * (sandbox/gitconfig.c), which reads config files a sandboxed program may
 * have written to learn what the user's git will include and run.  Any
 * bytes must parse or fail with one line, "bad git config line N in
 * fuzz.config (...)" with N a line of the text, never crash, leak, read out
 * of bounds or take more than a moment, and:
 *
 *   - every variable handed on has a non-empty lower-case section
 *     ([a-z0-9-]) and key (a letter, then [a-z0-9-]), and a subsection
 *     without a newline; its value is read as a boolean too;
 *   - written back as config text (each variable under its own header,
 *     every value quoted and escaped), the variables read back the same;
 *   - a callback that returns non-zero on the second variable stops the
 *     parse there, and that value is returned.
 *
 * Built by tests/fuzz/build.sh for libFuzzer; make check builds it with
 * gcc and tests/fuzz/replay_main.c to replay tests/fuzz/corpus/gitconfig.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/gitconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the non-zero return stops the parse with (not -1: that is an error). */
#define STOP 42
#define NAME "fuzz.config"

/* Stop with a message: the fuzzer (or make check) reports the input. */
static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_gitconfig: %s: %s\n", what, detail ? detail : "(null)");
    abort();
}

/* A growable string. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;

static void put(strbuf *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        if (!t->s)
            abort();
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void puts_(strbuf *t, const char *s)
{
    put(t, s, strlen(s));
}

typedef struct var {
    char *section, *sub, *key, *value;
} var;

typedef struct vars {
    var *v;
    size_t n;
    bool keep;   /* record every variable */
    int calls;
    int stop_at; /* return STOP on this call (1-based; 0: never) */
} vars;

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

static void check_name(const char *what, const char *s, bool key)
{
    if (!s || !s[0])
        broken(what, "empty");
    if (key && !(s[0] >= 'a' && s[0] <= 'z'))
        broken(what, s);
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
            broken(what, s);
}

static int on_var(void *user, const char *section, const char *sub, const char *key, const char *value)
{
    vars *vs = user;
    check_name("a section that is not a lower-case name", section, false);
    check_name("a key that is not a lower-case name", key, true);
    if (sub && strchr(sub, '\n'))
        broken("a subsection with a newline", sub);
    volatile bool b = sb_gitconfig_bool(value);
    (void)b;
    if (vs->keep) {
        vs->v = realloc(vs->v, (vs->n + 1) * sizeof *vs->v);
        if (!vs->v)
            abort();
        vs->v[vs->n++] = (var){dup_or_null(section), dup_or_null(sub), dup_or_null(key), dup_or_null(value)};
    }
    vs->calls++;
    return vs->calls == vs->stop_at ? STOP : 0;
}

static void vars_free(vars *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        free(vs->v[i].section);
        free(vs->v[i].sub);
        free(vs->v[i].key);
        free(vs->v[i].value);
    }
    free(vs->v);
}

/* "bad git config line N in fuzz.config (...)", one line, N a line the
 * text has (lines counted at '\n', "\r\n" being one). */
static void check_error(const char *err, const uint8_t *data, size_t size)
{
    static const char head[] = "bad git config line ";
    if (strncmp(err, head, sizeof head - 1) != 0)
        broken("an error that does not name the line", err);
    char *end;
    long line = strtol(err + sizeof head - 1, &end, 10);
    if (strncmp(end, " in " NAME " ", 4 + sizeof NAME) != 0)
        broken("an error that does not name the file", err);
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (line < 1 || (size_t)line > lines)
        broken("an error naming a line the text does not have", err);
    if (strchr(err, '\n'))
        broken("an error of more than one line", err);
}

/* Config text that says exactly vs's variables. */
static void write_back(const vars *vs, strbuf *t)
{
    for (size_t i = 0; i < vs->n; i++) {
        const var *v = &vs->v[i];
        puts_(t, "[");
        puts_(t, v->section);
        if (v->sub) {
            puts_(t, " \"");
            for (const char *c = v->sub; *c; c++) {
                if (*c == '"' || *c == '\\')
                    put(t, "\\", 1);
                put(t, c, 1);
            }
            puts_(t, "\"");
        }
        puts_(t, "]\n");
        puts_(t, v->key);
        if (v->value) {
            puts_(t, " = \"");
            for (const char *c = v->value; *c; c++) {
                if (*c == '"' || *c == '\\')
                    put(t, "\\", 1);
                if (*c == '\n')
                    puts_(t, "\\n");
                else
                    put(t, c, 1);
            }
            puts_(t, "\"");
        }
        puts_(t, "\n");
    }
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void check_reads_back(const vars *vs)
{
    strbuf t = {0};
    puts_(&t, "");
    write_back(vs, &t);
    vars back = {.keep = true};
    char err[512] = "";
    if (sb_gitconfig_parse_text(t.s, t.len, NAME, on_var, &back, err, sizeof err) != 0)
        broken("the variables written back do not parse", err);
    if (back.n != vs->n)
        broken("the variables written back read as a different number", t.s);
    for (size_t i = 0; i < vs->n; i++) {
        const var *a = &vs->v[i], *b = &back.v[i];
        if (!same(a->section, b->section) || !same(a->sub, b->sub) || !same(a->key, b->key) ||
            !same(a->value, b->value))
            broken("a variable written back reads differently", t.s);
    }
    vars_free(&back);
    free(t.s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    vars all = {.keep = true};
    char err[512] = "";
    int rc = sb_gitconfig_parse_text(text, size, NAME, on_var, &all, err, sizeof err);
    if (rc == -1)
        check_error(err, data, size);
    else if (rc != 0)
        broken("an unexpected result", "neither 0 nor -1");
    if ((size_t)all.calls != all.n)
        broken("a variable was not recorded", NAME);
    if (rc == 0)
        check_reads_back(&all);
    if (all.calls >= 2) {
        /* Stopped on the second variable: the parse ends there. */
        vars stop = {.stop_at = 2};
        err[0] = '\0';
        int src = sb_gitconfig_parse_text(text, size, NAME, on_var, &stop, err, sizeof err);
        if (src != STOP || stop.calls != 2) {
            char what[64];
            snprintf(what, sizeof what, "returned %d after %d calls", src, stop.calls);
            broken("a callback's non-zero result did not stop the parse", what);
        }
    }
    vars_free(&all);
    return 0;
}
