/* Unit tests for the exec policy's shell reading and heuristics: which
 * scripts are plain lists of commands (and their exact argv), which are
 * complex, which commands are known safe or dangerous (as the Codex CLI judges them). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/safety.h"
#include "policy/shsplit.h"

/* The commands as "a b|c d" (words joined by a blank, commands by '|'). */
static void render(const sh_commands *c, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (i)
            strncat(out, "|", len - strlen(out) - 1);
        for (char **a = c->cmds[i]; *a; a++) {
            if (a != c->cmds[i])
                strncat(out, " ", len - strlen(out) - 1);
            strncat(out, *a, len - strlen(out) - 1);
        }
    }
}

static void expect_plain(const char *script, const char *want)
{
    sh_commands c;
    int r = shsplit_plain(script, &c);
    if (r != 0)
        fail_msg("'%s' was complex, expected plain '%s'", script, want);
    char got[512];
    render(&c, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("'%s': got '%s', want '%s'", script, got, want);
    sh_commands_free(&c);
}

static void expect_complex(const char *script)
{
    sh_commands c;
    if (shsplit_plain(script, &c) != 1)
        fail_msg("'%s' should be complex", script);
    assert_int_equal(c.n, 0);
}

static void plain_scripts(void **state)
{
    (void)state;
    expect_plain("ls", "ls");
    expect_plain("git status && rm -rf x", "git status|rm -rf x");
    expect_plain("a || b; c | d", "a|b|c|d");
    expect_plain("echo 'a b' \"c d\" e\\ f", "echo a b c d e f");
    expect_plain("echo \"say \\\"hi\\\"\"", "echo say \"hi\"");
    expect_plain("ls '*.txt' \\*.c \"?\"", "ls *.txt *.c ?"); /* quoted: no glob */
    expect_plain("git show HEAD~1 a[", "git show HEAD~1 a["); /* ~ inside a word, [ never closed */
    expect_plain("[ -f x ]", "[ -f x ]");
    expect_plain("a &&\n  b\n\nc;", "a|b|c");
    expect_plain("'git status'", "git status"); /* one word: a program named 'git status' */
}

static void complex_scripts(void **state)
{
    (void)state;
    const char *cases[] = {"(ls)", "ls > out.txt", "cat < in", "echo $HOME", "echo \"$HOME\"", "echo $(id)",
                           "echo `id`", "a & b", "if true; then ls; fi", "for i in 1; do ls; done",
                           "{ ls; }", "FOO=1 ls", "a && && b", "; a", "a |", "a &&", "", "   ",
                           "echo 'unterminated", "echo \"open", "x=$(", "a |& b", "case x in y) ;; esac",
                           "ls # a comment is not a command", NULL};
    for (const char **c = cases; *c; c++)
        if (strcmp(*c, "ls # a comment is not a command") != 0)
            expect_complex(*c);
    /* A comment ends the line: the rest is plain. */
    expect_plain("ls # a comment", "ls");
}

/* Whether the literal reading of script has the command want ("a b"). */
static bool literal_has(const char *script, const char *want)
{
    sh_commands c;
    shsplit_literal(script, &c);
    bool found = false;
    for (size_t i = 0; i < c.n && !found; i++) {
        sh_commands one = {&c.cmds[i], 1};
        char got[512];
        render(&one, got, sizeof got);
        found = strcmp(got, want) == 0;
    }
    sh_commands_free(&c);
    return found;
}

/* What the shell runs, not the text: a backslash-newline vanishes between
 * and inside words and inside double quotes, but stays inside single
 * quotes (bash, dash and zsh agree; checked with each). */
static void line_continuations(void **state)
{
    (void)state;
    expect_plain("tou\\\nch x", "touch x");
    expect_plain("tou\\\n\\\nch x", "touch x");
    expect_plain("touch\\\n x", "touch x");
    expect_plain("touch \\\nx", "touch x");
    expect_plain("\\\ntouch x", "touch x");
    expect_plain("echo \"tou\\\nch\"", "echo touch");
    expect_plain("echo 'tou\\\nch'", "echo tou\\\nch");
    expect_plain("echo a\\\n#b", "echo a#b");           /* the word goes on: # is in it */
    expect_plain("echo a \\\n#b", "echo a");            /* a new word: # starts a comment */
    expect_plain("echo \\\\\nls", "echo \\|ls");    /* an escaped backslash, then a newline */
    expect_complex("i\\\nf true; then touch x; fi");    /* the reserved word if */
    expect_complex("FO\\\nO=1 touch x");                /* an assignment */
    expect_complex("touch x\\");                        /* a final backslash: shells differ */

    assert_true(literal_has("x=$(date); tou\\\nch y", "touch y")); /* the literal reading too */
    assert_true(literal_has("echo \"$(tou\\\nch z)\"", "touch z"));
}

/* A redirection's descriptor is no command name: "2>/dev/null git push"
 * runs git push (a rule on git must see it), "2 >x" runs a command 2. */
static void redirection_descriptors(void **state)
{
    (void)state;
    assert_true(literal_has("2>/dev/null touch forbidden-mark", "touch forbidden-mark"));
    assert_true(literal_has("10>x 2>&1 <in touch forbidden-mark", "touch forbidden-mark"));
    assert_true(literal_has("{fd}>x touch forbidden-mark", "touch forbidden-mark"));
    assert_true(literal_has("touch forbidden-mark 2>/dev/null", "touch forbidden-mark"));
    assert_true(literal_has("2 >x", "2"));
    assert_true(literal_has("'2'>x touch y", "2 touch y"));
}

/* Words the shell expands into other words are not plain: a glob can match
 * a file the sandbox created ("git pus?" runs git push when ./push exists),
 * braces need no file at all ({touch,x} runs touch x). */
static void expanding_words(void **state)
{
    (void)state;
    const char *cases[] = {"ls *.txt", "git pus? origin", "cat a[bc]", "{touch,x}", "git {push,}",
                           "cat ~/.ssh/id_rsa", "~/bin/touch x", "echo a=~", "echo PATH=a:~/b", "=touch x",
                           "find . -exec rm {} ;", NULL};
    for (const char **c = cases; *c; c++)
        expect_complex(*c);
}

/* Hostile scripts cost time in proportion to their length, and deep
 * nesting does not exhaust the stack. */
static void hostile_scripts(void **state)
{
    (void)state;
    size_t n = 200000;
    char *s = malloc(2 * n + 32);
    for (size_t i = 0; i < n; i++)
        memcpy(s + 2 * i, "$(", 2);
    strcpy(s + 2 * n, "touch x");
    sh_commands c;
    shsplit_literal(s, &c); /* unclosed: one scan, not one per "$(" */
    assert_int_equal(c.n, 0);
    sh_commands_free(&c);
    expect_complex(s);
    size_t depth = 50000; /* closed, deeply nested */
    char *d = malloc(3 * depth + 32), *p = d;
    for (size_t i = 0; i < depth; i++) {
        memcpy(p, "$(", 2);
        p += 2;
    }
    strcpy(p, "touch x");
    p += strlen(p);
    for (size_t i = 0; i < depth; i++)
        *p++ = ')';
    *p = 0;
    shsplit_literal(d, &c);
    sh_commands_free(&c);
    expect_complex(d);
    /* Within the bound, nested commands are still read. */
    assert_true(literal_has("echo $(echo $(echo $(touch y)))", "touch y"));
    free(s);
    free(d);
}

static void shell_detection(void **state)
{
    (void)state;
    char *a[] = {"bash", "-lc", "ls", NULL};
    char *b[] = {"/bin/zsh", "-c", "ls", NULL};
    char *c[] = {"bash", "-lc", "git", "status", NULL}; /* four argv: not a script */
    char *d[] = {"python3", "-c", "print()", NULL};
    char *e[] = {"sh", "-x", "ls", NULL};
    assert_string_equal(shsplit_shell_script(a), "ls");
    assert_string_equal(shsplit_shell_script(b), "ls");
    assert_null(shsplit_shell_script(c));
    assert_null(shsplit_shell_script(d));
    assert_null(shsplit_shell_script(e));
}

static bool safe_line(const char *line)
{
    char *argv[4] = {"bash", "-lc", (char *)line, NULL};
    return safety_known_safe(argv);
}

static void known_safe(void **state)
{
    (void)state;
    const char *safe[] = {"ls -la", "cat a b", "grep -r x .", "head -n 5 f", "wc -l f", "pwd", "echo hi",
                          "find . -name '*.c'", "rg -n foo", "sed -n 1,5p f", "sed -n 3p", "base64 f",
                          "ls && pwd", "cat f | wc -l", "seq 3 | tac", NULL};
    for (const char **s = safe; *s; s++)
        if (!safe_line(*s))
            fail_msg("'%s' should be known safe", *s);
    const char *unsafe[] = {"git status", "git log", "rm x", "find . -delete", "find . -exec rm {} ;",
                            "rg --pre=x foo", "rg -nz foo", "rg --search-zip x", "sed -i s/a/b/ f",
                            "sed -n 1p a b c", "sed -n 'w x' f", "base64 -o out f", "base64 --output=x f",
                            "ls > out", "(ls)", "ls && rm -rf /", "'git status'", "npm test", "python3 x.py",
                            "echo $(rm x)", NULL};
    for (const char **s = unsafe; *s; s++)
        if (safe_line(*s))
            fail_msg("'%s' should not be known safe", *s);
    char *direct[] = {"/usr/bin/ls", "-l", NULL};
    assert_true(safety_known_safe(direct));
    char *four[] = {"bash", "-lc", "git", "status", NULL};
    assert_false(safety_known_safe(four));
}

static void dangerous(void **state)
{
    (void)state;
    char *rmf[] = {"rm", "-rf", "build", NULL};
    char *rmfr[] = {"rm", "-r", "-f", "x", NULL};
    char *rmforce[] = {"/bin/rm", "--force", "x", NULL};
    char *rm_dashdash[] = {"rm", "--", "-f", NULL};
    char *rm_plain[] = {"rm", "-r", "x", NULL};
    char *sudo_rm[] = {"sudo", "rm", "-f", "x", NULL};
    char *sudo_ls[] = {"sudo", "ls", NULL};
    assert_true(safety_dangerous(rmf));
    assert_true(safety_dangerous(rmfr));
    assert_true(safety_dangerous(rmforce));
    assert_false(safety_dangerous(rm_dashdash));
    assert_false(safety_dangerous(rm_plain));
    assert_true(safety_dangerous(sudo_rm));
    assert_false(safety_dangerous(sudo_ls));
    const char *yes[] = {"printf x | rm -rf build", "echo \"$(rm -rf /tmp/x)\"", "if true; then rm -f x; fi",
                         "for i in 1; do sudo rm -rf /; done", "ls > log && rm -rf x", "echo `rm -f y`", NULL};
    const char *no[] = {"echo 'rm -rf x'", "cmd=rm; $cmd -rf x", "ls -f", "echo rm -rf", NULL};
    for (const char **s = yes; *s; s++) {
        char *argv[] = {"bash", "-lc", (char *)*s, NULL};
        if (!safety_dangerous(argv))
            fail_msg("'%s' should be dangerous", *s);
    }
    for (const char **s = no; *s; s++) {
        char *argv[] = {"sh", "-c", (char *)*s, NULL};
        if (safety_dangerous(argv))
            fail_msg("'%s' should not be dangerous", *s);
    }
}

/* The Codex CLI's is_likely_sandbox_denied, row by row. */
static void sandbox_denial(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *output;
        bool denied;
    } rows[] = {
        {0, "Permission denied", false},            /* success is never a denial */
        {1, "touch: cannot touch 'x': Read-only file system", true},
        {1, "OPERATION NOT PERMITTED", true},      /* any case */
        {1, "bash: /etc/x: Permission denied", true},
        {1, "blocked by seccomp", true},
        {1, "the sandbox said no", true},
        {1, "landlock: denied", true},
        {1, "error: failed to write file foo", true},
        {2, "usage: cmd [-x]", false},              /* quick rejects */
        {126, "cannot execute", false},
        {127, "not found", false},
        {126, "Permission denied", true},           /* keywords first */
        {159, "", true},                            /* 128 + SIGSYS */
        {1, "no such file or directory", false},
        {137, "", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *why = NULL;
        bool got = safety_likely_sandbox_denied(rows[i].code, rows[i].output, strlen(rows[i].output), &why);
        if (got != rows[i].denied)
            fail_msg("exit %d, '%s': %s, want %s", rows[i].code, rows[i].output, got ? "denied" : "not denied",
                     rows[i].denied ? "denied" : "not denied");
        if (got && !why)
            fail_msg("exit %d, '%s': no reason given", rows[i].code, rows[i].output);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_scripts),
        cmocka_unit_test(complex_scripts),
        cmocka_unit_test(line_continuations),
        cmocka_unit_test(redirection_descriptors),
        cmocka_unit_test(expanding_words),
        cmocka_unit_test(hostile_scripts),
        cmocka_unit_test(shell_detection),
        cmocka_unit_test(known_safe),
        cmocka_unit_test(dangerous),
        cmocka_unit_test(sandbox_denial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
