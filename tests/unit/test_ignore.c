/* Unit tests for git's ignore rules as the snapshot reader matches them
 * (src/snap/snap_ignore.c): the expectations are what `git check-ignore
 * --no-index` answers for the same files, and hostile patterns stay
 * cheap. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "snap/snap_ignore.h"

static const char ROOT[] = "*.log\n!keep.log\nbuild/\n/rooted.txt\ndocs/*.tmp\n**/deep/x\na/**/z\nfoo/**\n\\#hash\n"
                           "trailing\\ \n[abc].c\n# a comment\n\n";
static const char SUB[] = "local.txt\n!*.log\n";

static void matches_what_git_ignores(void **state)
{
    (void)state;
    snap_ignore *ig = snap_ignore_new();
    snap_ignore_add(ig, "", ROOT, strlen(ROOT));
    snap_ignore_add(ig, "sub", SUB, strlen(SUB));
    static const struct {
        const char *path;
        bool dir, ignored;
    } cases[] = {
        {"x.log", false, true},       {"keep.log", false, false},     {"sub/x.log", false, false},
        {"build", false, false},      {"build", true, true},          {"rooted.txt", false, true},
        {"sub/rooted.txt", false, false}, {"docs/a.tmp", false, true}, {"docs/b/a.tmp", false, false},
        {"deep/x", false, true},      {"q/deep/x", false, true},      {"a/z", false, true},
        {"a/b/c/z", false, true},     {"foo/bar", false, true},       {"foo", true, false},
        {"#hash", false, true},       {"trailing ", false, true},     {"a.c", false, true},
        {"d.c", false, false},        {"sub/local.txt", false, true}, {"local.txt", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (snap_ignore_match(ig, cases[i].path, cases[i].dir) != cases[i].ignored)
            fail_msg("%s%s: %s, git says %s", cases[i].path, cases[i].dir ? "/" : "",
                     cases[i].ignored ? "not ignored" : "ignored", cases[i].ignored ? "ignored" : "not ignored");
    /* Rules of a directory the walk left are gone. */
    size_t mark = snap_ignore_mark(ig);
    snap_ignore_add(ig, "other", "*.c\n", 4);
    assert_true(snap_ignore_match(ig, "other/d.c", false));
    snap_ignore_pop(ig, mark);
    assert_false(snap_ignore_match(ig, "other/d.c", false));
    snap_ignore_free(ig);
}

static void wildmatch_follows_git(void **state)
{
    (void)state;
    assert_true(snap_wildmatch("**/foo", "foo", true));
    assert_true(snap_wildmatch("**/foo", "a/b/foo", true));
    assert_true(snap_wildmatch("a/**/b", "a/b", true));
    assert_true(snap_wildmatch("a/**/b", "a/x/y/b", true));
    assert_false(snap_wildmatch("a/*/b", "a/x/y/b", true));
    assert_true(snap_wildmatch("a/**", "a/x/y", true));
    assert_false(snap_wildmatch("a/**", "a", true));
    assert_true(snap_wildmatch("[!a-c]x", "dx", false));
    assert_false(snap_wildmatch("[!a-c]x", "bx", false));
    assert_true(snap_wildmatch("[[:digit:]]x", "7x", false));
    assert_false(snap_wildmatch("[[:nope:]]x", "7x", false));
    assert_false(snap_wildmatch("[abc", "a", false));
    assert_true(snap_wildmatch("\\*", "*", false));
    assert_false(snap_wildmatch("\\*", "x", false));
    assert_false(snap_wildmatch("a?c", "a/c", true));
}

/* A pattern of many stars against a long name that almost matches: git's
 * rule that a failed star stops the others keeps it linear (this would
 * run for years with plain backtracking). */
static void hostile_patterns_stay_cheap(void **state)
{
    (void)state;
    char name[4097];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    assert_false(snap_wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", name, false));
    assert_false(snap_wildmatch("**/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", name, true));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_what_git_ignores),
        cmocka_unit_test(wildmatch_follows_git),
        cmocka_unit_test(hostile_patterns_stay_cheap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
