/* Unit tests for the exec-policy rules language (src/policy/rules*.c): what loads,
 * every error with its FILE:LINE:COLUMN, example checks, host executables,
 * network rules, matching and severity, the JSON of `policy check` and
 * appending rules to a file (also from concurrent processes). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/rules.h"

static char dir[] = "/tmp/corral-test-rules-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static char *path_in_dir(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = fread(s, 1, (1 << 20) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Load text as "t.rules"; 0 or -1. */
static int load(rules_t *r, const char *text, char *err, size_t errlen)
{
    return rules_load_text(r, "t.rules", text, err, errlen);
}

static rules_t *must_load(const char *text)
{
    rules_t *r = rules_new();
    char err[1024] = "";
    int rc = load(r, text, err, sizeof err);
    if (rc != 0)
        fail_msg("did not load: %s", err);
    return r;
}

static void expect_error(const char *text, const char *want)
{
    rules_t *r = rules_new();
    char err[1024] = "";
    assert_int_equal(load(r, text, err, sizeof err), -1);
    assert_string_equal(err, want);
    assert_int_equal(rules_prefix_count(r), 0);
    rules_free(r);
}

/* The JSON for argv (NULL-terminated list of words). */
static char *check(const rules_t *r, bool resolve, bool pretty, ...)
{
    char *argv[32];
    size_t n = 0;
    va_list ap;
    va_start(ap, pretty);
    while ((argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    return rules_check_json(r, argv, resolve, pretty);
}

static void expect_json(const rules_t *r, const char *want, bool resolve, ...)
{
    char *argv[32];
    size_t n = 0;
    va_list ap;
    va_start(ap, resolve);
    while ((argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    char *got = rules_check_json(r, argv, resolve, false);
    assert_string_equal(got, want);
    free(got);
}

static rule_decision decide(const rules_t *r, bool resolve, char **argv)
{
    rule_match *m;
    size_t n = rules_match(r, argv, resolve, &m);
    rule_decision d = rules_decide(m, n);
    rules_matches_free(m, n);
    return d;
}

/* ---- loading ------------------------------------------------------------------------- */

static void valid_files(void **state)
{
    (void)state;
    rules_t *r = must_load("# a comment line\n"
                           "\n"
                           "prefix_rule(\n"
                           "    pattern = [\"git\", [\"status\", 'diff',],],  # trailing commas\n"
                           "    decision = 'allow',\n"
                           "    justification = \"it's \\\"read-only\\\"\\t\\u00e9\\x41\\101\\n\",\n"
                           ")\n"
                           "prefix_rule(pattern=[[\"rm\", \"unlink\"], \"-f\"], decision=\"forbidden\")\n"
                           "prefix_rule(pattern=['''npm''', r\"t\\est\"]); prefix_rule(pattern=[\"a\" + \"b\"] + [\"c\"])\n"
                           "prefix_rule(pattern=[\"x\"], justification=\"\"\"two\n"
                           "lines\"\"\")\n"
                           "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n"
                           "network_rule(host=\"Example.COM.\", protocol=\"https\", decision=\"deny\")\n");
    /* rm and unlink are one rule each */
    assert_int_equal(rules_prefix_count(r), 6);
    assert_int_equal(rules_host_executable_count(r), 1);
    assert_int_equal(rules_network_count(r), 1);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\",\"diff\"],\"decision\":\"allow\","
                "\"justification\":\"it's \\\"read-only\\\"\\t\xc3\xa9"
                "AA\\n\"}}],\"decision\":\"allow\"}\n",
                false, "git", "diff", "HEAD", NULL);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"unlink\",\"-f\"],\"decision\":"
                "\"forbidden\"}}],\"decision\":\"forbidden\"}\n",
                false, "unlink", "-f", "x", NULL);
    expect_json(r, "{\"matchedRules\":[]}\n", false, "unlink", "-r", NULL);
    /* raw strings keep backslashes */
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"npm\",\"t\\\\est\"],\"decision\":"
                "\"allow\"}}],\"decision\":\"allow\"}\n",
                false, "npm", "t\\est", NULL);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"ab\",\"c\"],\"decision\":"
                "\"allow\"}}],\"decision\":\"allow\"}\n",
                false, "ab", "c", NULL);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"x\"],\"decision\":\"allow\","
                "\"justification\":\"two\\nlines\"}}],\"decision\":\"allow\"}\n",
                false, "x", NULL);
    rules_free(r);

    /* Empty files, comments only, CRLF line ends, backslash line joining. */
    r = must_load("");
    assert_int_equal(rules_prefix_count(r), 0);
    rules_free(r);
    r = must_load("# nothing\n\n   # indented comment\n");
    rules_free(r);
    r = must_load("prefix_rule(pattern=[\"a\"])\r\nprefix_rule(pattern=[\"a\"], decision=\"prompt\")\r\n");
    assert_int_equal(rules_prefix_count(r), 2);
    rules_free(r);
    r = must_load("prefix_rule(pattern=[\"a\"],\\\n  decision=\"prompt\")\\\n\n");
    rules_free(r);
    /* Positional arguments, in Codex's order (pattern, decision, match, not_match, justification). */
    r = must_load("prefix_rule([\"a\"], \"prompt\", [\"a b\"], [\"b\"], \"why\")\n"
                  "host_executable(\"a\", [\"/bin/a\"])\nnetwork_rule(\"h\", \"http\", \"allow\")\n");
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"a\"],\"decision\":\"prompt\","
                "\"justification\":\"why\"}}],\"decision\":\"prompt\"}\n",
                false, "a", NULL);
    rules_free(r);
}

static void escapes(void **state)
{
    (void)state;
    /* \0 and other escapes become characters; unknown escapes stay. */
    rules_t *r = must_load("prefix_rule(pattern=[\"a\"], justification=\"\\a\\v\\b\\f\\0\\1\\08\\xff\\777"
                           "\\U0001F600\\q\\\n.\")\n");
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"a\"],\"decision\":\"allow\","
                "\"justification\":\"\\u0007\\u000b\\b\\f\\u0000\\u0001\\u00008\xc3\xbf\xc7\xbf\xf0\x9f\x98\x80"
                "\\\\q.\"}}],\"decision\":\"allow\"}\n",
                false, "a", NULL);
    rules_free(r);
    /* A quote escaped in a raw string does not end it (and loses its backslash). */
    r = must_load("prefix_rule(pattern=[\"a\"], justification=r\"x\\\"y\\n\")\n");
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"a\"],\"decision\":\"allow\","
                "\"justification\":\"x\\\"y\\\\n\"}}],\"decision\":\"allow\"}\n",
                false, "a", NULL);
    rules_free(r);
    /* A NUL in a token: it matches no real argument. */
    r = must_load("prefix_rule(pattern=[\"a\\0b\"])\n");
    expect_json(r, "{\"matchedRules\":[]}\n", false, "a", NULL);
    rules_free(r);
}

static void syntax_errors(void **state)
{
    (void)state;
    expect_error("prefix_rule(pattern=[\"git\"]\n    decision=\"allow\")\n",
                 "t.rules:2:5: expected ',' or ')' after argument, found 'decision'");
    expect_error("prefix_rule(pattern=[\"a\" \"b\"])\n",
                 "t.rules:1:26: expected ',' or ']' after list element, found string \"b\"");
    expect_error("prefix_rule(pattern=[\"a\"]\n", "t.rules:2:1: expected ',' or ')' after argument, found end of file");
    expect_error("prefix_rule(pattern=[\"a\"]))\n", "t.rules:1:27: expected end of line after the call, found ')'");
    expect_error("prefix_rule(pattern=[\"a\"]) prefix_rule(pattern=[\"b\"])\n",
                 "t.rules:1:28: expected end of line after the call, found 'prefix_rule'");
    expect_error("prefix_rule(pattern=[\"a\"]);;\n", "t.rules:1:28: expected a call such as prefix_rule(...), found ';'");
    expect_error("prefix_rule(pattern=[\"a\nb\"])\n", "t.rules:1:22: unfinished string literal (no closing \")");
    expect_error("prefix_rule(pattern=['''a])\n", "t.rules:1:22: unfinished string literal (no closing ''')");
    expect_error("prefix_rule(pattern=[\"\\x4\"])\n", "t.rules:1:23: invalid escape sequence: \\x needs 2 hex digits");
    expect_error("prefix_rule(pattern=[\"\\ud800\"])\n",
                 "t.rules:1:23: invalid escape sequence: \\uD800 is not a Unicode scalar value");
    expect_error("prefix_rule(pattern=[\"\\U00110000\"])\n",
                 "t.rules:1:23: invalid escape sequence: \\U00110000 is not a Unicode scalar value");
    expect_error("  prefix_rule(pattern=[\"a\"])\n",
                 "t.rules:1:1: unexpected indentation: a top-level call starts in column 1");
    expect_error("prefix_rule(pattern=[\"a\"],\n\tdecision=\"prompt\")\n",
                 "t.rules:2:1: tabs are not allowed (use spaces)");
    expect_error("x = [\"git\"]\n", "t.rules:1:1: variables are not supported in rules files (assignment to 'x')");
    expect_error("prefix_rule(pattern=x)\n",
                 "t.rules:1:21: variables are not supported in rules files: write the string or list itself "
                 "instead of 'x'");
    expect_error("prefix_rule(pattern=[f\"{x}\"])\n", "t.rules:1:22: f-strings are not supported in rules files");
    expect_error("prefix_rule(pattern=[1])\n", "t.rules:1:22: expected a string or a list, found number '1'");
    expect_error("prefix_rule(pattern=[\"a\"], justification=None)\n",
                 "t.rules:1:42: expected a string or a list, found 'None'");
    expect_error("prefix_rule(pattern=(\"a\",))\n",
                 "t.rules:1:21: expected a string or a list (tuples are not supported: use [...]), found '('");
    expect_error("prefix_rule(pattern=[\"a\"] + \"b\")\n", "t.rules:1:27: cannot add a list and a string");
    expect_error("def f():\n  pass\n",
                 "t.rules:1:1: 'def' is not supported: a rules file holds only prefix_rule(...), "
                 "host_executable(...) and network_rule(...) calls");
    expect_error("prefix_rule\n", "t.rules:1:12: expected '(' after 'prefix_rule', found end of line");
    expect_error("prefix_rule(pattern=[\"a\"], pattern=[\"b\"])\n",
                 "t.rules:1:28: repeated keyword 'pattern' (first given at 1:13)");
    expect_error("prefix_rule(pattern=[\"a\"], \"allow\")\n",
                 "t.rules:1:28: positional argument after keyword arguments");
    expect_error("prefix_rule(,)\n", "t.rules:1:13: expected an argument or ')', found ','");
    expect_error("prefix_rule(pattern=[\"a\"], decision=\"allow\")\n\xff\n", "t.rules:2:1: invalid UTF-8");
    /* Columns count characters, not bytes. */
    expect_error("prefix_rule(pattern=[\"\xc3\xa9\xc3\xa9\"] \"x\")\n",
                 "t.rules:1:28: expected ',' or ')' after argument, found string \"x\"");
    /* A syntax error anywhere wins over a meaning error before it (the file is read whole first). */
    expect_error("prefix_rule(pattern=[\"a\"], decision=\"maybe\")\nprefix_rule(\n",
                 "t.rules:3:1: expected an argument or ')', found end of file");
}

static void meaning_errors(void **state)
{
    (void)state;
    expect_error("prefix_rule(pattern=[\"git\"], decision=\"maybe\")\n",
                 "t.rules:1:39: invalid decision: maybe (use allow, prompt or forbidden)");
    expect_error("prefix_rule(pattern=[\"git\"], decision=\"deny\")\n",
                 "t.rules:1:39: invalid decision: deny (use allow, prompt or forbidden)");
    expect_error("prefix_rule(pattern=[\"git\"], reviewer=\"me\")\n",
                 "t.rules:1:30: Found `reviewer` extra named parameter(s) for call to prefix_rule (known: pattern, decision, "
                 "justification, match, not_match)");
    expect_error("prefix_rule(decision=\"allow\")\n", "t.rules:1:1: missing keyword 'pattern' for prefix_rule");
    expect_error("prefix_rule(pattern=[])\n", "t.rules:1:21: pattern must be a non-empty list");
    expect_error("prefix_rule(pattern=\"git\")\n", "t.rules:1:21: pattern must be a non-empty list");
    expect_error("prefix_rule(pattern=[\"a\", []])\n",
                 "t.rules:1:27: pattern alternatives must be a non-empty list of strings");
    expect_error("prefix_rule(pattern=[\"a\", [\"b\", [\"c\"]]])\n",
                 "t.rules:1:33: pattern alternatives must be strings, not a list");
    expect_error("prefix_rule(pattern=[\"a\"], justification=\"  \")\n",
                 "t.rules:1:42: justification must be a non-empty string");
    expect_error("prefix_rule(pattern=[\"a\"], justification=[\"x\"])\n",
                 "t.rules:1:42: justification must be a non-empty string");
    expect_error("prefix_rule(pattern=[\"a\"], decision=[\"allow\"])\n",
                 "t.rules:1:37: decision must be a string, not a list");
    expect_error("prefix_rule([\"a\"], \"allow\", [], [], \"j\", \"x\")\n",
                 "t.rules:1:42: prefix_rule takes at most 5 positional arguments (pattern, decision, "
                 "justification, match, not_match)");
    expect_error("prefix_rule([\"a\"], pattern=[\"b\"])\n",
                 "t.rules:1:20: prefix_rule got 'pattern' twice (positionally and by keyword)");
    expect_error("prefix_rule(pattern=[\"a\"], match=\"a\")\n",
                 "t.rules:1:34: match must be a list of examples (strings or lists of strings)");
    expect_error("prefix_rule(pattern=[\"a\"], match=[\"\"])\n",
                 "t.rules:1:35: invalid match example: it cannot be an empty string");
    expect_error("prefix_rule(pattern=[\"a\"], not_match=[[]])\n",
                 "t.rules:1:39: invalid not_match example: it cannot be an empty list");
    expect_error("prefix_rule(pattern=[\"a\"], match=[\"a 'open\"])\n",
                 "t.rules:1:35: invalid match example: the string has invalid shell syntax (an unterminated "
                 "quote or a trailing backslash)");
    expect_error("prefix_rule(pattern=[\"a\"], match=[[\"a\", [\"b\"]]])\n",
                 "t.rules:1:41: invalid match example: its tokens must be strings");
    expect_error("frobnicate(x=[\"a\"])\n",
                 "t.rules:1:1: unknown function 'frobnicate' (known: prefix_rule, host_executable, network_rule)");
    /* The first error wins and nothing of the file is loaded. */
    rules_t *r = rules_new();
    char err[1024];
    assert_int_equal(load(r, "prefix_rule(pattern=[\"ok\"])\nprefix_rule(pattern=[\"b\"], decision=\"no\")\n", err,
                          sizeof err),
                     -1);
    assert_int_equal(rules_prefix_count(r), 0);
    assert_int_equal(load(r, "prefix_rule(pattern=[\"ok\"])\n", err, sizeof err), 0);
    assert_int_equal(load(r, "prefix_rule(pattern=[\"x\"])\nnetwork_rule(host=\"*\", protocol=\"http\", "
                             "decision=\"allow\")\nhost_executable(name=\"x\", paths=[])\n",
                          err, sizeof err),
                     -1);
    assert_int_equal(rules_prefix_count(r), 1);
    assert_int_equal(rules_network_count(r), 0);
    assert_int_equal(rules_host_executable_count(r), 0);
    rules_free(r);
}

static void files_on_disk(void **state)
{
    (void)state;
    const char *p = path_in_dir("disk.rules");
    FILE *f = fopen(p, "w");
    fputs("prefix_rule(pattern=[\"a\"])\nprefix_rule(pattern=[\"b\"], decision=\"sometimes\")\n", f);
    fclose(f);
    rules_t *r = rules_new();
    char err[1024], want[512];
    assert_int_equal(rules_load_file(r, p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2:37: invalid decision: sometimes (use allow, prompt or forbidden)", p);
    assert_string_equal(err, want);
    assert_int_equal(rules_prefix_count(r), 0);
    assert_int_equal(rules_load_file(r, path_in_dir("missing.rules"), err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: No such file or directory", path_in_dir("missing.rules"));
    assert_string_equal(err, want);
    /* A NUL byte in the file. */
    p = path_in_dir("nul.rules");
    f = fopen(p, "w");
    fwrite("prefix_rule(pattern=[\"a\"])\n  \0", 1, 30, f);
    fclose(f);
    assert_int_equal(rules_load_file(r, p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2:3: NUL byte in the file", p);
    assert_string_equal(err, want);
    rules_free(r);
}

/* ---- examples -------------------------------------------------------------------------- */

static void examples(void **state)
{
    (void)state;
    /* Strings are split like a shell (quotes, backslashes, # comments); lists are taken as they are. */
    rules_t *r = must_load("prefix_rule(pattern=[\"git\", [\"status\", \"diff\"]], match=[[\"git\", \"status\"], "
                           "\"git diff --stat\", \"git 'diff' # comment\"], not_match=[\"git push\", \"git\", "
                           "\"'git status'\", [\"git \", \"status\"]])\n");
    assert_int_equal(rules_prefix_count(r), 1);
    rules_free(r);
    r = must_load("prefix_rule(pattern=[\"a\", \"b c\", \"d\\\\e\", \"$x\"], match=[\"a 'b c' \\\"d\\\\\\\\e\\\" "
                  "\\\\$x\", \"a b\\\\ c d\\\\\\\\e '$x'\"])\n");
    rules_free(r);
    /* First-token alternatives: each example may match any of the rules. */
    r = must_load("prefix_rule(pattern=[[\"rm\", \"unlink\"], \"-f\"], match=[\"rm -f x\", \"unlink -f\"], "
                  "not_match=[\"rmdir -f\"])\n");
    assert_int_equal(rules_prefix_count(r), 2);
    rules_free(r);

    expect_error("prefix_rule(pattern=[\"git\", \"status\"], match=[\"git diff\"])\n",
                 "t.rules:1:47: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: PrefixPattern { first: \\\"git\\\", rest: [Single(\\\"status\\\")] }, decision: Allow, justification: None }\"]; "
                 "unmatched examples: [\"git diff\"]");
    expect_error("prefix_rule(pattern=[\"git\"],\n  match=[\"git\", [\"hg\", \"x y\"], \"svn 'a b'\"])\n",
                 "t.rules:2:17: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: PrefixPattern { first: \\\"git\\\", rest: [] }, decision: Allow, justification: None }\"]; unmatched "
                 "examples: [\"hg 'x y'\", \"svn 'a b'\"]");
    expect_error("prefix_rule(pattern=[\"git\"], not_match=[\"hg\", \"git push\"])\n",
                 "t.rules:1:47: expected example to not match rule `PrefixRule { pattern: PrefixPattern { first: \"git\", rest: [] }, decision: Allow, justification: None }`: git push");
    /* Codex shows the rules as Rust's Debug: alternatives, decision, justification (escaped twice). */
    expect_error("prefix_rule(pattern=[\"git\", [\"a\", \"b\"]], decision=\"prompt\", justification=\"say \\\"hi\\\"\", "
                 "match=[\"git c\"])\n",
                 "t.rules:1:96: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: "
                 "PrefixPattern { first: \\\"git\\\", rest: [Alts([\\\"a\\\", \\\"b\\\"])] }, decision: Prompt, "
                 "justification: Some(\\\"say \\\\\\\"hi\\\\\\\"\\\") }\"]; unmatched examples: [\"git c\"]");
    /* Examples are checked against their own rule only, not the whole policy. */
    expect_error("prefix_rule(pattern=[\"git\"])\nprefix_rule(pattern=[\"git\", \"push\"], match=[\"git pull\"])\n",
                 "t.rules:2:45: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: PrefixPattern { first: \\\"git\\\", rest: [Single(\\\"push\\\")] }, decision: Allow, justification: None }\"]; "
                 "unmatched examples: [\"git pull\"]");
    /* Absolute examples fall back to their basename, limited by host_executable (even a later one). */
    r = must_load("prefix_rule(pattern=[\"git\"], match=[\"/opt/bin/git status\"])\n");
    rules_free(r);
    expect_error("prefix_rule(pattern=[\"git\"], match=[\"/opt/bin/git status\"])\n"
                 "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n",
                 "t.rules:1:37: expected every example to match at least one rule. rules: [\"PrefixRule { pattern: PrefixPattern { first: \\\"git\\\", rest: [] }, decision: Allow, justification: None }\"]; unmatched "
                 "examples: [\"/opt/bin/git status\"]");
    expect_error("prefix_rule(pattern=[\"git\"], not_match=[\"/usr/bin/git status\"])\n",
                 "t.rules:1:41: expected example to not match rule `PrefixRule { pattern: PrefixPattern { first: \"git\", rest: [] }, decision: Allow, justification: None }`: /usr/bin/git status");
    r = must_load("host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n");
    char err[1024];
    assert_int_equal(load(r, "prefix_rule(pattern=[\"git\"], not_match=[\"/opt/git x\"])\n", err, sizeof err), 0);
    rules_free(r);
}

/* ---- host executables ------------------------------------------------------------------- */

static void host_executables(void **state)
{
    (void)state;
    expect_error("host_executable(name=\"git\", paths=[\"bin/git\"])\n",
                 "t.rules:1:36: host_executable paths must be absolute or start with ~/ (got bin/git)");
    expect_error("host_executable(name=\"git\", paths=[\"~\"])\n",
                 "t.rules:1:36: host_executable paths must be absolute or start with ~/ (got ~)");
    expect_error("host_executable(name=\"git\", paths=[\"/usr/bin/gitx\"])\n",
                 "t.rules:1:36: host_executable path `/usr/bin/gitx` must have basename `git`");
    expect_error("host_executable(name=\"git\", paths=[\"/usr/bin/git/..\"])\n",
                 "t.rules:1:36: host_executable path `/usr/bin/git/..` must have basename `git`");
    expect_error("host_executable(name=\"bin/git\", paths=[])\n",
                 "t.rules:1:22: host_executable name must be a bare executable name (got bin/git)");
    expect_error("host_executable(name=\"..\", paths=[])\n",
                 "t.rules:1:22: host_executable name must be a bare executable name (got ..)");
    expect_error("host_executable(name=\"\", paths=[])\n", "t.rules:1:22: host_executable name cannot be empty");
    expect_error("host_executable(name=\"git\")\n", "t.rules:1:1: missing keyword 'paths' for host_executable");
    expect_error("host_executable(name=\"git\", paths=\"/usr/bin/git\")\n",
                 "t.rules:1:35: host_executable paths must be a list of strings");
    expect_error("host_executable(name=\"git\", paths=[\"/usr/bin/git\\n\"])\n",
                 "t.rules:1:36: host_executable path `/usr/bin/git\\n` must have basename `git`");
    /* Paths are normalised; ~/ is the home directory. */
    setenv("HOME", "/home/tester", 1);
    rules_t *r = must_load("prefix_rule(pattern=[\"git\"], decision=\"prompt\")\n"
                           "host_executable(name=\"git\", paths=[\"/usr/bin/../bin//git/\", \"~/bin/git\"])\n");
    char *a1[] = {"/usr/bin/git", "x", NULL}, *a2[] = {"/home/tester/bin/./git", NULL},
         *a3[] = {"/usr/local/bin/git", NULL};
    assert_int_equal(decide(r, true, a1), RULE_PROMPT);
    assert_int_equal(decide(r, true, a2), RULE_PROMPT);
    assert_int_equal(decide(r, true, a3), RULE_NONE);
    assert_int_equal(decide(r, false, a1), RULE_NONE);
    /* A later host_executable for the same name replaces the earlier one. */
    char err[1024];
    assert_int_equal(load(r, "host_executable(name=\"git\", paths=[\"/usr/local/bin/git\"])\n", err, sizeof err), 0);
    assert_int_equal(decide(r, true, a1), RULE_NONE);
    assert_int_equal(decide(r, true, a3), RULE_PROMPT);
    assert_int_equal(rules_host_executable_count(r), 1);
    rules_free(r);
}

/* ---- network rules ------------------------------------------------------------------------ */

static void expect_host(const char *raw, const char *want)
{
    char err[256] = "";
    char *h = rules_normalize_host(raw, err, sizeof err);
    if (!want) {
        assert_null(h);
        return;
    }
    if (!h)
        fail_msg("%s: %s", raw, err);
    assert_string_equal(h, want);
    free(h);
}

static void host_error(const char *raw, const char *want)
{
    char err[256] = "";
    assert_null(rules_normalize_host(raw, err, sizeof err));
    assert_string_equal(err, want);
}

static void network_rules(void **state)
{
    (void)state;
    expect_host("GitHub.COM.", "github.com");
    expect_host(" github.com ", "github.com");
    expect_host("github.com:443", "github.com");
    expect_host("[::1]:8080", "::1");
    expect_host("[::1]", "::1");
    expect_host("::1", "::1");
    expect_host("a:b", "a:b");
    expect_host(":443", ":443");
    expect_host("example.com..", "example.com");
    expect_host("\xc3\xa9xample.com", "\xc3\xa9xample.com");
    host_error("*.github.com", "network_rule host must be a specific host; wildcards are not allowed");
    host_error("a.*.com", "network_rule host must be a specific host; wildcards are not allowed");
    host_error("a:*", "network_rule host must be a specific host; wildcards are not allowed");
    host_error("https://github.com", "network_rule host must be a hostname or IP literal (without scheme or path)");
    host_error("github.com/x", "network_rule host must be a hostname or IP literal (without scheme or path)");
    host_error("a?b", "network_rule host must be a hostname or IP literal (without scheme or path)");
    host_error("a#b", "network_rule host must be a hostname or IP literal (without scheme or path)");
    host_error("a b", "network_rule host cannot contain whitespace");
    host_error("a\xc2\xa0" "b", "network_rule host cannot contain whitespace");
    host_error("", "network_rule host cannot be empty");
    host_error(" . ", "network_rule host cannot be empty");
    host_error("[::1", "network_rule host has an invalid bracketed IPv6 literal");
    host_error("[::1]x", "network_rule host contains an unsupported suffix: [::1]x");
    host_error("[::1]:", "network_rule host contains an unsupported suffix: [::1]:");

    expect_error("network_rule(host=\"a.*.github.com\", protocol=\"https\", decision=\"allow\")\n",
                 "t.rules:1:19: network_rule host must be a specific host; wildcards are not allowed");
    expect_error("network_rule(host=\"*.com\", protocol=\"https\", decision=\"allow\")\n",
                 "t.rules:1:19: network_rule host pattern *.com must name a domain with at least two labels after "
                 "the wildcard (like *.example.com)");
    expect_error("network_rule(host=\"github.com\", protocol=\"https\", decision=\"ask\")\n",
                 "t.rules:1:60: invalid decision: ask (use allow, prompt, forbidden or deny)");
    expect_error("network_rule(host=\"github.com\", protocol=\"ftp\", decision=\"allow\")\n",
                 "t.rules:1:42: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ftp)");
    expect_error("network_rule(host=\"github.com\", protocol=\"https\")\n",
                 "t.rules:1:1: missing keyword 'decision' for network_rule");
    expect_error("network_rule(host=\"a\", protocol=\"https\", decision=\"allow\", justification=\" \")\n",
                 "t.rules:1:74: justification must be a non-empty string");
    expect_error("network_rule(host=\"a\", protocol=\"https\", decision=\"allow\", port=443)\n",
                 "t.rules:1:65: expected a string or a list, found number '443'");

    rules_t *r = must_load("network_rule(host=\"GitHub.com:443\", protocol=\"https_connect\", decision=\"allow\", "
                           "justification=\"code\")\n"
                           "network_rule(host=\"github.com\", protocol=\"http-connect\", decision=\"deny\")\n"
                           "network_rule(host=\"pypi.org\", protocol=\"https\", decision=\"prompt\")\n"
                           "network_rule(host=\"pypi.org\", protocol=\"socks5_tcp\", decision=\"allow\")\n"
                           "network_rule(host=\"[::1]:53\", protocol=\"socks5_udp\", decision=\"forbidden\")\n");
    assert_int_equal(rules_network_count(r), 5);
    const rule_network *n = rules_network_get(r, 0);
    assert_string_equal(n->host, "github.com");
    assert_int_equal(n->protocol, RULE_NET_HTTPS);
    assert_int_equal(n->decision, RULE_ALLOW);
    assert_string_equal(n->justification, "code");
    assert_int_equal(rules_network_get(r, 1)->decision, RULE_FORBIDDEN);
    assert_null(rules_network_get(r, 5));
    const char *j = "unset";
    /* deny wins over allow for the same host and protocol */
    assert_int_equal(rules_network_decide(r, "GITHUB.com.", RULE_NET_HTTPS, &j), RULE_FORBIDDEN);
    assert_null(j);
    assert_int_equal(rules_network_decide(r, "github.com", RULE_NET_HTTP, &j), RULE_NONE);
    assert_int_equal(rules_network_decide(r, "pypi.org:443", RULE_NET_HTTPS, NULL), RULE_PROMPT);
    assert_int_equal(rules_network_decide(r, "pypi.org", RULE_NET_SOCKS5_TCP, NULL), RULE_ALLOW);
    assert_int_equal(rules_network_decide(r, "::1", RULE_NET_SOCKS5_UDP, NULL), RULE_FORBIDDEN);
    assert_int_equal(rules_network_decide(r, "*", RULE_NET_HTTPS, NULL), RULE_NONE);
    /* Network rules never show in check output. */
    expect_json(r, "{\"matchedRules\":[]}\n", true, "github.com", NULL);
    rules_free(r);

    rule_net_proto p;
    assert_int_equal(rule_net_proto_parse("http-connect", &p), 0);
    assert_int_equal(p, RULE_NET_HTTPS);
    assert_int_equal(rule_net_proto_parse("socks5", &p), -1);
    assert_string_equal(rule_net_proto_name(RULE_NET_SOCKS5_UDP), "socks5_udp");
}

/* ---- matching -------------------------------------------------------------------------------- */

static const char *test_rules =
    "prefix_rule(pattern=[\"git\", [\"status\",\"diff\",\"log\"]], decision=\"allow\",\n"
    "            justification=\"read-only git inspection\",\n"
    "            match=[[\"git\",\"status\"], \"git diff --stat\"], not_match=[\"git push\"])\n"
    "prefix_rule(pattern=[\"git\",\"push\"], decision=\"prompt\", justification=\"pushing changes the remote\")\n"
    "prefix_rule(pattern=[\"rm\", [\"-rf\",\"-fr\"]], decision=\"forbidden\", justification=\"Use `trash` instead of "
    "rm -rf.\")\n"
    "prefix_rule(pattern=[\"npm\",\"test\"])\n"
    "prefix_rule(pattern=[\"git\"], decision=\"prompt\")\n"
    "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n";

static void matching(void **state)
{
    (void)state;
    rules_t *r = must_load(test_rules);
    char *argv[] = {"git", "push", "origin", NULL};
    rule_match *m;
    size_t n = rules_match(r, argv, false, &m);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].n, 2);
    assert_string_equal(m[0].prefix[0], "git");
    assert_string_equal(m[0].prefix[1], "push");
    assert_int_equal(m[0].decision, RULE_PROMPT);
    assert_string_equal(m[0].justification, "pushing changes the remote");
    assert_null(m[0].resolved_program);
    assert_int_equal(m[1].n, 1);
    assert_null(m[1].justification);
    assert_int_equal(rules_decide(m, n), RULE_PROMPT);
    rules_matches_free(m, n);
    assert_int_equal(rules_decide(NULL, 0), RULE_NONE);

    char *rm[] = {"rm", "-fr", "/", NULL}, *rm2[] = {"rm", "-r", NULL}, *ls[] = {"ls", NULL}, *none[] = {NULL},
         *npm[] = {"npm", "test", "--", "--watch", NULL}, *npm1[] = {"npm", NULL};
    assert_int_equal(decide(r, false, rm), RULE_FORBIDDEN);
    assert_int_equal(decide(r, false, rm2), RULE_NONE);
    assert_int_equal(decide(r, false, ls), RULE_NONE);
    assert_int_equal(decide(r, false, none), RULE_NONE);
    assert_int_equal(decide(r, false, npm), RULE_ALLOW);
    assert_int_equal(decide(r, false, npm1), RULE_NONE); /* shorter than the pattern */

    /* Max severity over rules of several files, in load order. */
    char err[1024];
    assert_int_equal(load(r, "prefix_rule(pattern=[\"npm\"], decision=\"prompt\")\n"
                             "prefix_rule(pattern=[\"npm\", \"test\", \"--\"], decision=\"forbidden\")\n",
                          err, sizeof err),
                     0);
    n = rules_match(r, npm, false, &m);
    assert_int_equal(n, 3);
    assert_int_equal(m[0].decision, RULE_ALLOW);
    assert_int_equal(m[1].decision, RULE_PROMPT);
    assert_int_equal(m[2].decision, RULE_FORBIDDEN);
    assert_int_equal(m[2].n, 3);
    assert_int_equal(rules_decide(m, n), RULE_FORBIDDEN);
    rules_matches_free(m, n);
    assert_string_equal(rule_decision_name(RULE_FORBIDDEN), "forbidden");
    assert_string_equal(rule_decision_name(RULE_ALLOW), "allow");
    rules_free(r);
}

static void resolve_host_executables(void **state)
{
    (void)state;
    rules_t *r = must_load(test_rules);
    /* Without the flag an absolute program has no rules of its own. */
    expect_json(r, "{\"matchedRules\":[]}\n", false, "/usr/bin/git", "status", NULL);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\",\"status\"],\"decision\":"
                "\"allow\",\"resolvedProgram\":\"/usr/bin/git\",\"justification\":\"read-only git inspection\"}},"
                "{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\"],\"decision\":\"prompt\",\"resolvedProgram\":"
                "\"/usr/bin/git\"}}],\"decision\":\"prompt\"}\n",
                true, "/usr/bin/git", "status", NULL);
    /* Only listed paths (normalised) may fall back. */
    expect_json(r, "{\"matchedRules\":[]}\n", true, "/usr/local/bin/git", "status", NULL);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\"],\"decision\":\"prompt\","
                "\"resolvedProgram\":\"/usr/bin/git\"}}],\"decision\":\"prompt\"}\n",
                true, "/usr/bin/./../bin/git", "fetch", "-f", NULL);
    /* No host_executable for rm: any absolute rm falls back. */
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"rm\",\"-rf\"],\"decision\":"
                "\"forbidden\",\"resolvedProgram\":\"/opt/x/rm\",\"justification\":\"Use `trash` instead of rm "
                "-rf.\"}}],\"decision\":\"forbidden\"}\n",
                true, "/opt/x//rm/", "-rf", NULL);
    /* Relative paths never fall back; exact rules for the path win. */
    expect_json(r, "{\"matchedRules\":[]}\n", true, "bin/rm", "-rf", NULL);
    char err[1024];
    assert_int_equal(load(r, "prefix_rule(pattern=[\"/opt/x/rm\"], decision=\"allow\")\n", err, sizeof err), 0);
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"/opt/x/rm\"],\"decision\":"
                "\"allow\"}}],\"decision\":\"allow\"}\n",
                true, "/opt/x/rm", "-rf", NULL);
    /* "/" has no basename. */
    expect_json(r, "{\"matchedRules\":[]}\n", true, "/", NULL);
    rules_free(r);
}

/* ---- output -------------------------------------------------------------------------------- */

static void json_output(void **state)
{
    (void)state;
    rules_t *r = must_load("prefix_rule(pattern=[\"a\"], justification=\"q\\\"b\\\\s/ \\t\\n\\r\\b\\f\\x01\\x1f\\x7f "
                           "\xc3\xa9\xe2\x9c\x93 \\u2028\")\n");
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"a\"],\"decision\":\"allow\","
                "\"justification\":\"q\\\"b\\\\s/ \\t\\n\\r\\b\\f\\u0001\\u001f\x7f \xc3\xa9\xe2\x9c\x93 "
                "\xe2\x80\xa8\"}}],\"decision\":\"allow\"}\n",
                false, "a", NULL);
    /* argv tokens are escaped the same way */
    rules_free(r);
    r = must_load("prefix_rule(pattern=[\"echo\", \"a\\nb\\\"\"], decision=\"prompt\")\n");
    expect_json(r,
                "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"echo\",\"a\\nb\\\"\"],\"decision\":"
                "\"prompt\"}}],\"decision\":\"prompt\"}\n",
                false, "echo", "a\nb\"", NULL);
    rules_free(r);

    r = must_load(test_rules);
    char *got = check(r, false, true, "git", "log", "-1", NULL);
    assert_string_equal(got, "{\n"
                             "  \"matchedRules\": [\n"
                             "    {\n"
                             "      \"prefixRuleMatch\": {\n"
                             "        \"matchedPrefix\": [\n"
                             "          \"git\",\n"
                             "          \"log\"\n"
                             "        ],\n"
                             "        \"decision\": \"allow\",\n"
                             "        \"justification\": \"read-only git inspection\"\n"
                             "      }\n"
                             "    },\n"
                             "    {\n"
                             "      \"prefixRuleMatch\": {\n"
                             "        \"matchedPrefix\": [\n"
                             "          \"git\"\n"
                             "        ],\n"
                             "        \"decision\": \"prompt\"\n"
                             "      }\n"
                             "    }\n"
                             "  ],\n"
                             "  \"decision\": \"prompt\"\n"
                             "}\n");
    free(got);
    got = check(r, false, true, "ls", NULL);
    assert_string_equal(got, "{\n  \"matchedRules\": []\n}\n");
    free(got);
    got = check(r, true, true, "/usr/bin/git", "push", NULL);
    assert_string_equal(got, "{\n"
                             "  \"matchedRules\": [\n"
                             "    {\n"
                             "      \"prefixRuleMatch\": {\n"
                             "        \"matchedPrefix\": [\n"
                             "          \"git\",\n"
                             "          \"push\"\n"
                             "        ],\n"
                             "        \"decision\": \"prompt\",\n"
                             "        \"resolvedProgram\": \"/usr/bin/git\",\n"
                             "        \"justification\": \"pushing changes the remote\"\n"
                             "      }\n"
                             "    },\n"
                             "    {\n"
                             "      \"prefixRuleMatch\": {\n"
                             "        \"matchedPrefix\": [\n"
                             "          \"git\"\n"
                             "        ],\n"
                             "        \"decision\": \"prompt\",\n"
                             "        \"resolvedProgram\": \"/usr/bin/git\"\n"
                             "      }\n"
                             "    }\n"
                             "  ],\n"
                             "  \"decision\": \"prompt\"\n"
                             "}\n");
    free(got);
    rules_free(r);
}

/* ---- appending ---------------------------------------------------------------------------- */

static void append_rules(void **state)
{
    (void)state;
    char err[512];
    const char *p = path_in_dir("new/sub/default.rules");
    char *t1[] = {"echo", "Hello, world!"};
    assert_int_equal(rules_append_prefix_rule(p, t1, 2, err, sizeof err), 0);
    char *s = slurp(p);
    assert_string_equal(s, "prefix_rule(pattern=[\"echo\", \"Hello, world!\"], decision=\"allow\")\n");
    free(s);
    /* an identical line is not appended again */
    assert_int_equal(rules_append_prefix_rule(p, t1, 2, err, sizeof err), 0);
    char *t2[] = {"printf", "a\"b\\c\n\x01\xc3\xa9"};
    assert_int_equal(rules_append_prefix_rule(p, t2, 2, err, sizeof err), 0);
    s = slurp(p);
    assert_string_equal(s, "prefix_rule(pattern=[\"echo\", \"Hello, world!\"], decision=\"allow\")\n"
                           "prefix_rule(pattern=[\"printf\", \"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"], decision=\"allow\")\n");
    free(s);
    /* what was appended loads and matches */
    rules_t *r = rules_new();
    assert_int_equal(rules_load_file(r, p, err, sizeof err), 0);
    char *a2[] = {"printf", "a\"b\\c\n\x01\xc3\xa9", "more", NULL};
    assert_int_equal(decide(r, false, a2), RULE_ALLOW);
    rules_free(r);
    /* a file without a final newline gets one first */
    p = path_in_dir("nonl.rules");
    FILE *f = fopen(p, "w");
    fputs("prefix_rule(pattern=[\"ls\"], decision=\"allow\")", f);
    fclose(f);
    char *t3[] = {"ls"}, *t4[] = {"pwd"};
    assert_int_equal(rules_append_prefix_rule(p, t3, 1, err, sizeof err), 0); /* already there */
    assert_int_equal(rules_append_prefix_rule(p, t4, 1, err, sizeof err), 0);
    s = slurp(p);
    assert_string_equal(s, "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n"
                           "prefix_rule(pattern=[\"pwd\"], decision=\"allow\")\n");
    free(s);
    assert_int_equal(rules_append_prefix_rule(p, t4, 0, err, sizeof err), -1);
    assert_string_equal(err, "prefix rule requires at least one token");
    /* a file that cannot be created */
    assert_int_equal(rules_append_prefix_rule("/proc/corral-no/x.rules", t4, 1, err, sizeof err), -1);

    /* network rules */
    p = path_in_dir("net.rules");
    assert_int_equal(rules_append_network_rule(p, "API.example.com:443", RULE_NET_HTTPS, RULE_ALLOW,
                                               "Allow API calls", err, sizeof err),
                     0);
    assert_int_equal(rules_append_network_rule(p, "evil.example", RULE_NET_HTTP, RULE_FORBIDDEN, NULL, err,
                                               sizeof err),
                     0);
    assert_int_equal(rules_append_network_rule(p, "*.example", RULE_NET_HTTP, RULE_ALLOW, NULL, err, sizeof err),
                     -1);
    assert_string_equal(err, "network_rule host must be a specific host; wildcards are not allowed");
    s = slurp(p);
    assert_string_equal(s, "network_rule(host=\"api.example.com\", protocol=\"https\", decision=\"allow\", "
                           "justification=\"Allow API calls\")\n"
                           "network_rule(host=\"evil.example\", protocol=\"http\", decision=\"deny\")\n");
    free(s);
    r = rules_new();
    assert_int_equal(rules_load_file(r, p, err, sizeof err), 0);
    assert_int_equal(rules_network_decide(r, "evil.example", RULE_NET_HTTP, NULL), RULE_FORBIDDEN);
    rules_free(r);
}

/* Children append at once: every rule is there exactly once, no line torn. */
static void append_concurrently(void **state)
{
    (void)state;
    const char *p = path_in_dir("race/default.rules");
    enum { KIDS = 8, EACH = 25 };
    pid_t kids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            char err[256], tok[32], big[600];
            memset(big, 'x', sizeof big - 1);
            big[sizeof big - 1] = '\0';
            for (int i = 0; i < EACH; i++) {
                snprintf(tok, sizeof tok, "kid%d-%d", k, i);
                char *own[] = {"cmd", tok, big};
                char *shared[] = {"shared", "rule"};
                if (rules_append_prefix_rule(p, own, 3, err, sizeof err) < 0 ||
                    rules_append_prefix_rule(p, shared, 2, err, sizeof err) < 0)
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < KIDS; k++) {
        int st;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    char *s = slurp(p);
    size_t lines = 0, shared = 0;
    for (char *l = s, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
        lines++;
        *nl = '\0';
        assert_true(strncmp(l, "prefix_rule(pattern=[", 21) == 0);
        assert_true(strcmp(nl - 20, "], decision=\"allow\")") == 0);
        if (strcmp(l, "prefix_rule(pattern=[\"shared\", \"rule\"], decision=\"allow\")") == 0)
            shared++;
        *nl = '\n';
    }
    assert_int_equal(shared, 1);
    assert_int_equal(lines, KIDS * EACH + 1);
    free(s);
    rules_t *r = rules_new();
    char err[512];
    assert_int_equal(rules_load_file(r, p, err, sizeof err), 0);
    assert_int_equal(rules_prefix_count(r), KIDS * EACH + 1);
    rules_free(r);
}

/* ---- hostile and broken files ------------------------------------------------------------- */

/* A file whose text is the pieces joined n times between head and tail. */
static char *repeat(const char *head, const char *piece, size_t n, const char *tail)
{
    size_t hl = strlen(head), pl = strlen(piece), tl = strlen(tail);
    char *s = malloc(hl + n * pl + tl + 1), *p = s;
    memcpy(p, head, hl), p += hl;
    for (size_t i = 0; i < n; i++)
        memcpy(p, piece, pl), p += pl;
    memcpy(p, tail, tl + 1);
    return s;
}

/* Every broken file is an error at its place, never a crash: these once
 * freed an uninitialised value (the typo from issue 9), overflowed the
 * stack, or leaked. */
static void broken_files_are_errors(void **state)
{
    (void)state;
    expect_error("prefix_rule(pattern = [\"git\"] + \"unterminated\n",
                 "t.rules:1:33: unfinished string literal (no closing \")");
    expect_error("prefix_rule(pattern = [\"git\"] + \"unterminated",
                 "t.rules:1:33: unfinished string literal (no closing \")");
    expect_error("prefix_rule(pattern = [\"git\"] + \n", "t.rules:2:1: expected a string or a list, found end of file");
    expect_error("prefix_rule(pattern = [\"git\"] + [\"a\", [\"b\" + \"\\x1\"]])\n",
                 "t.rules:1:47: invalid escape sequence: \\x needs 2 hex digits");
    expect_error("prefix_rule(pattern = [\"git\"] + [\"a\"] + \"b\")\n", "t.rules:1:39: cannot add a list and a string");
    expect_error("prefix_rule(pattern = \"a\" + [\"a\"])\n", "t.rules:1:27: cannot add a string and a list");
    expect_error("prefix_rule(pattern = [\"a\"] + x)\n",
                 "t.rules:1:31: variables are not supported in rules files: write the string or list itself "
                 "instead of 'x'");
    /* Empty example lists are fine (and kept nowhere). */
    rules_t *r = must_load("prefix_rule(pattern=[\"a\"], match=[], not_match=[])\n");
    rules_free(r);

    /* Deep nesting is an error at the first list too deep. */
    char *deep = repeat("prefix_rule(pattern=", "[", 100000, "");
    expect_error(deep, "t.rules:1:37: lists nested more than 16 deep (a pattern needs two levels, examples three)");
    free(deep);
    deep = repeat("prefix_rule(pattern=[[[[[[[[[[[[[[[[\"a\"", "]", 16, ")\n"); /* 16 deep is fine */
    expect_error(deep, "t.rules:1:23: pattern alternatives must be strings, not a list");
    free(deep);

    /* Too large. */
    char *big = repeat("", "# filler line of a rules file\n", RULES_MAX_FILE_BYTES / 30 + 1, "");
    char err[1024], want[256];
    r = rules_new();
    assert_int_equal(load(r, big, err, sizeof err), -1);
    snprintf(want, sizeof want, "t.rules: too large: %zu bytes (a rules file holds at most %d bytes)", strlen(big),
             RULES_MAX_FILE_BYTES);
    assert_string_equal(err, want);
    rules_free(r);
    free(big);

    /* Long chains of + join in one piece. */
    char *chain = repeat("prefix_rule(pattern=[\"a\"", " + \"b\"", 100000, "])\n");
    r = must_load(chain);
    char *word = repeat("a", "b", 100000, "");
    char *argv[] = {word, NULL};
    rule_match *m;
    assert_int_equal(rules_match(r, argv, false, &m), 1);
    rules_matches_free(m, 1);
    rules_free(r);
    free(word);
    free(chain);
    chain = repeat("prefix_rule(pattern=[\"a\"]", " + [\"b\"]", 100000, ")\n");
    r = must_load(chain);
    rules_free(r);
    free(chain);

    /* A NUL byte given as text with its length. */
    r = rules_new();
    assert_int_equal(rules_load_buffer(r, "b.rules", "prefix_rule(pattern=[\"a\"])\0x", 28, err, sizeof err), -1);
    assert_string_equal(err, "b.rules:1:27: NUL byte in the file");
    rules_free(r);
}

/* The bounds of one file, each an error that says which. */
static void bounds(void **state)
{
    (void)state;
    expect_error("prefix_rule(pattern=[\"a\"], a=[], b=[], c=[], d=[], e=[], f=[], g=[], h=[], i=[], j=[], k=[], "
                 "l=[], m=[], n=[], o=[], p=[])\n",
                 "t.rules:1:118: too many arguments for prefix_rule (a call takes at most 16)");
    char *alts = repeat("prefix_rule(pattern=[\"a\", [\"x\"", ", \"x\"", RULES_MAX_ALTERNATIVES, "]])\n");
    expect_error(alts, "t.rules:1:27: too many alternatives: 1025 (at most 1024 in one pattern element)");
    free(alts);
    char *ex = repeat("prefix_rule(pattern=[\"a\"], match=[\"a\"", ", \"a\"", RULES_MAX_EXAMPLES, "])\n");
    expect_error(ex, "t.rules:1:34: too many examples: 257 (at most 256 match and not_match examples in one rule)");
    free(ex);
    /* 1000 programs sharing 1000 alternatives: a million strings once expanded. */
    char *heads = repeat("prefix_rule(pattern=[[\"h\"", ", \"h\"", 999, "], [\"x\"");
    char *both = repeat(heads, ", \"x\"", 999, "]])\n");
    expect_error(both, "t.rules:1:21: this file's patterns are too large: with this one they hold more than 200000 "
                       "strings (each alternative of a pattern's first element is a rule with its own copy of the "
                       "rest)");
    free(heads);
    free(both);
    char *paths = repeat("host_executable(name=\"a\", paths=[\"/a\"", ", \"/a\"", RULES_MAX_PATHS, "])\n");
    expect_error(paths, "t.rules:1:33: too many host_executable paths: 1025 (at most 1024)");
    free(paths);
    char *hx = repeat("", "host_executable(name=\"a\", paths=[])\n", RULES_MAX_HOST_EXECUTABLES + 1, "");
    char want[128];
    snprintf(want, sizeof want, "t.rules:%d:1: too many host_executable calls in one file (at most 1024)",
             RULES_MAX_HOST_EXECUTABLES + 1);
    expect_error(hx, want);
    free(hx);
}

/* Only regular files are read: a FIFO would block the server, a device
 * never end. */
static void special_files(void **state)
{
    (void)state;
    char err[1024], want[512];
    rules_t *r = rules_new();
    char *fifo = strdup(path_in_dir("fifo.rules"));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(rules_load_file(r, fifo, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file", fifo);
    assert_string_equal(err, want);
    assert_int_equal(rules_load_file(r, "/dev/zero", err, sizeof err), -1);
    assert_string_equal(err, "/dev/zero: not a regular file");
    assert_int_equal(rules_load_file(r, dir, err, sizeof err), -1);
    char *link = strdup(path_in_dir("link.rules")); /* path_in_dir's buffer is reused */
    char *target = strdup(path_in_dir("target.rules"));
    FILE *f = fopen(target, "w");
    fputs("prefix_rule(pattern=[\"a\"])\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(rules_load_file(r, link, err, sizeof err), 0); /* the user's own links are followed */
    char *text;
    size_t len;
    assert_int_equal(rules_read_file(link, true, &text, &len, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: is a symbolic link (a workspace's rules files must be regular files)", link);
    assert_string_equal(err, want);
    assert_int_equal(rules_read_file(target, true, &text, &len, err, sizeof err), 0);
    assert_int_equal(len, strlen("prefix_rule(pattern=[\"a\"])\n"));
    free(text);
    rules_free(r);
    free(fifo);
    free(link);
    free(target);
}

/* A stored host normalises to itself: a rule applies to the host it names. */
static void hosts_are_stable(void **state)
{
    (void)state;
    expect_host("a:1.", "a");
    expect_host("a.:1", "a");
    expect_host("a.\r.", "a");
    host_error("\r.\r.", "network_rule host cannot be empty");
    host_error("[a:1]", "network_rule host has an invalid bracketed IPv6 literal");
    host_error("[D:0]:443", "network_rule host has an invalid bracketed IPv6 literal");
    host_error("[]", "network_rule host has an invalid bracketed IPv6 literal");
    const char *raw[] = {"GitHub.COM.", "[::1]:8080", "a:b", ":443", "a :1", "[1:2::3.]", "x.y..:80", NULL};
    for (const char **p = raw; *p; p++) {
        char err[256];
        char *once = rules_normalize_host(*p, err, sizeof err);
        assert_non_null(once);
        char *twice = rules_normalize_host(once, err, sizeof err);
        if (!twice || strcmp(once, twice) != 0)
            fail_msg("%s -> %s -> %s", *p, once, twice ? twice : err);
        free(once);
        free(twice);
    }
}

/* corral's host globs: "*.x.y" covers subdomains only, "**.x.y" the
 * domain too; an exact host is exact.  (Codex accepts exact hosts only.) */
static void network_host_globs(void **state)
{
    (void)state;
    rules_t *r = must_load("network_rule(host=\"*.example.com\", protocol=\"https\", decision=\"allow\")\n"
                           "network_rule(host=\"**.pkg.dev\", protocol=\"https\", decision=\"allow\")\n"
                           "network_rule(host=\"*.Evil.example.com\", protocol=\"https\", decision=\"deny\")\n");
    assert_int_equal(rules_network_decide(r, "api.example.com", RULE_NET_HTTPS, NULL), RULE_ALLOW);
    assert_int_equal(rules_network_decide(r, "a.b.example.com", RULE_NET_HTTPS, NULL), RULE_ALLOW);
    assert_int_equal(rules_network_decide(r, "example.com", RULE_NET_HTTPS, NULL), RULE_NONE);
    assert_int_equal(rules_network_decide(r, "badexample.com", RULE_NET_HTTPS, NULL), RULE_NONE);
    assert_int_equal(rules_network_decide(r, "api.example.com", RULE_NET_HTTP, NULL), RULE_NONE);
    assert_int_equal(rules_network_decide(r, "pkg.dev", RULE_NET_HTTPS, NULL), RULE_ALLOW);
    assert_int_equal(rules_network_decide(r, "eu.pkg.dev", RULE_NET_HTTPS, NULL), RULE_ALLOW);
    assert_int_equal(rules_network_decide(r, "xpkg.dev", RULE_NET_HTTPS, NULL), RULE_NONE);
    /* Deny is the strictest, glob or not. */
    assert_int_equal(rules_network_decide(r, "x.evil.example.com", RULE_NET_HTTPS, NULL), RULE_FORBIDDEN);
    assert_true(rules_host_matches("a.b", "a.b"));
    assert_false(rules_host_matches("*.a.b", "a.b"));
    rules_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_files),
        cmocka_unit_test(escapes),
        cmocka_unit_test(syntax_errors),
        cmocka_unit_test(meaning_errors),
        cmocka_unit_test(files_on_disk),
        cmocka_unit_test(examples),
        cmocka_unit_test(host_executables),
        cmocka_unit_test(network_rules),
        cmocka_unit_test(network_host_globs),
        cmocka_unit_test(matching),
        cmocka_unit_test(resolve_host_executables),
        cmocka_unit_test(json_output),
        cmocka_unit_test(append_rules),
        cmocka_unit_test(append_concurrently),
        cmocka_unit_test(broken_files_are_errors),
        cmocka_unit_test(bounds),
        cmocka_unit_test(special_files),
        cmocka_unit_test(hosts_are_stable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
