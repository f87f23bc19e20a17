/*
 * fuzz_rules.c - libFuzzer target for the exec-policy rules language
 * (src/policy/rules_syntax.c, src/policy/rules_parse.c, src/policy/rules.c): any bytes as a rules
 * file must load or fail with one "NAME:LINE:COLUMN: message" (or a size or
 * reading error), never crash, leak, read out of bounds or take more than
 * a moment.  A file that loads is then matched: every rule's own tokens
 * must match it, and the line corral appends for an "always allow" of those
 * tokens must load back and match them too.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -Isrc -I<dir with an empty config.h> tests/fuzz/fuzz_rules.c src/policy/rules.c \
 *     src/policy/rules_parse.c src/policy/rules_syntax.c src/base/util.c -o fuzz_rules
 *
 * (Debian's clang 14 has libFuzzer in libclang-rt-14-dev.)
 *   ./fuzz_rules -dict=tests/fuzz/rules.dict -max_len=8192 CORPUS_DIR tests/fuzz/corpus/rules
 *
 * Fold what a run found back into the committed corpus, kept small (edges
 * only, not hit counts):
 *
 *   ./fuzz_rules -merge=1 -use_counters=0 NEW_DIR tests/fuzz/corpus/rules CORPUS_DIR
 *
 * Built with -DRULES_FUZZ_MAIN it is a plain program that runs each file
 * named on the command line once, or every file of a directory named there,
 * printing TAP; make check builds it so with gcc and runs it over the
 * committed corpus, tests/fuzz/corpus/rules: the merge of every run's
 * findings, seeded with the policy goldens, the man page's examples and the
 * built-in rules, plus the inputs that once failed (regress-*).
 */
#include "config.h"

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/rules_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stop with a message: the fuzzer (or make check) reports the input. */
static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_rules: %s: %s\n", what, detail);
    abort();
}

/* The error must be one line that starts with the file's name. */
static void check_error(const char *err)
{
    if (strncmp(err, "f.rules:", 8) != 0)
        broken("an error that does not start with the file name", err);
    if (strchr(err, '\n'))
        broken("an error of more than one line", err);
}

/* argv of rule p made of the first alternative of each element; false
 * when a token holds a NUL (no real argument can). */
static bool rule_argv(const prule *p, char ***out)
{
    char **argv = xcalloc(p->nrest + 2, sizeof *argv);
    argv[0] = p->first.s;
    bool ok = strlen(p->first.s) == p->first.n;
    for (size_t i = 0; i < p->nrest; i++) {
        argv[i + 1] = p->rest[i].alts[0].s;
        ok = ok && strlen(argv[i + 1]) == p->rest[i].alts[0].n;
    }
    *out = argv;
    return ok;
}

/* What rules_append_prefix_rule writes for argv, loaded back on its own. */
static void check_amendment(char **argv)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "prefix_rule(pattern=[");
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            buf_puts(&b, ", ");
        rules_json_string(&b, argv[i], strlen(argv[i]));
    }
    buf_puts(&b, "], decision=\"allow\")\n");
    rules_t *back = rules_new();
    char err[1024];
    if (rules_load_buffer(back, "f.rules", b.data, b.len, err, sizeof err) < 0)
        broken("an appended allow rule does not load back", err);
    rule_match *m;
    size_t n = rules_match(back, argv, false, &m);
    if (rules_decide(m, n) != RULE_ALLOW)
        broken("an appended allow rule does not allow its own command", b.data);
    rules_matches_free(m, n);
    rules_free(back);
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rules_t *r = rules_new();
    char err[1024];
    if (rules_load_buffer(r, "f.rules", (const char *)data, size, err, sizeof err) < 0) {
        check_error(err);
        if (rules_prefix_count(r) || rules_network_count(r) || rules_host_executable_count(r))
            broken("a file that failed left rules behind", err);
        rules_free(r);
        return 0;
    }
    for (size_t i = 0; i < r->npr && i < 64; i++) {
        char **argv;
        if (rule_argv(&r->pr[i], &argv)) {
            rule_match *m;
            size_t n = rules_match(r, argv, true, &m);
            if (n == 0)
                broken("a rule does not match its own tokens", argv[0]);
            rules_matches_free(m, n);
            char *json = rules_check_json(r, argv, true, i % 2 == 0);
            free(json);
            check_amendment(argv);
        }
        free(argv);
    }
    for (size_t i = 0; i < rules_network_count(r); i++) {
        const rule_network *n = rules_network_get(r, i);
        /* A glob applies to a host it covers: "*.x.y" to a.x.y, "**.x.y"
         * to x.y itself. */
        char *host = strncmp(n->host, "**.", 3) == 0  ? xstrdup(n->host + 3)
                     : strncmp(n->host, "*.", 2) == 0 ? xasprintf("a%s", n->host + 1)
                                                      : xstrdup(n->host);
        if (rules_network_decide(r, host, n->protocol, NULL) < n->decision)
            broken("a network rule does not apply to its own host", n->host);
        free(host);
    }
    rules_free(r);
    return 0;
}

#ifdef RULES_FUZZ_MAIN
/* The files to run: each argument, a directory's files in name order. */
static void add_inputs(const char *path, char ***list, size_t *n)
{
    struct dirent **names;
    int k = scandir(path, &names, NULL, alphasort);
    if (k < 0) {
        *list = xrealloc(*list, (*n + 1) * sizeof **list);
        (*list)[(*n)++] = xstrdup(path);
        return;
    }
    for (int i = 0; i < k; i++) {
        if (names[i]->d_name[0] != '.') {
            *list = xrealloc(*list, (*n + 1) * sizeof **list);
            (*list)[(*n)++] = xasprintf("%s/%s", path, names[i]->d_name);
        }
        free(names[i]);
    }
    free(names);
}

/* Run each input once, as TAP (make check runs it over the committed
 * corpus, $CORRAL_TESTS_SRCDIR/fuzz/corpus/rules, when given nothing): a
 * crash or a sanitizer report stops it after the last "ok" printed. */
int main(int argc, char **argv)
{
    char **list = NULL;
    size_t n = 0;
    for (int i = 1; i < argc; i++)
        add_inputs(argv[i], &list, &n);
    if (argc == 1) {
        const char *src = getenv("CORRAL_TESTS_SRCDIR");
        char *corpus = xasprintf("%s/fuzz/corpus/rules", src ? src : "tests");
        add_inputs(corpus, &list, &n);
        free(corpus);
    }
    printf("1..%zu\n", n ? n : 1);
    if (n == 0)
        printf("not ok 1 - no inputs found (is CORRAL_TESTS_SRCDIR set?)\n");
    int rc = n ? 0 : 1;
    for (size_t i = 0; i < n; i++) {
        char *text;
        size_t len;
        char err[1024];
        if (rules_read_file(list[i], false, &text, &len, err, sizeof err) < 0) {
            printf("not ok %zu - %s\n", i + 1, err);
            rc = 1;
        } else {
            fflush(stdout);
            LLVMFuzzerTestOneInput((const uint8_t *)text, len);
            const char *slash = strrchr(list[i], '/');
            printf("ok %zu - %s\n", i + 1, slash ? slash + 1 : list[i]);
            free(text);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}
#endif
