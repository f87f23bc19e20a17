/* Unit tests for the exec policy's decision matrix: rules, heuristics and
 * the four approval policies combined (policy.h), for plain commands and
 * bash -lc scripts. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

static const char rules_text[] =
    "prefix_rule(pattern=[\"git\", [\"status\", \"diff\"]], decision=\"allow\")\n"
    "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\", justification=\"pushing changes the remote\")\n"
    "prefix_rule(pattern=[\"rm\", [\"-rf\", \"-fr\"]], decision=\"forbidden\", justification=\"use trash\")\n"
    "prefix_rule(pattern=[\"make\"], decision=\"allow\")\n";

static rules_t *rules;

static int setup(void **state)
{
    (void)state;
    char err[512];
    rules = rules_new();
    if (rules_load_text(rules, "test.rules", rules_text, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rules_free(rules);
    return 0;
}

/* The verdict for a shell line run as bash -lc LINE. */
static policy_result judge(approval_policy ap, const char *line, sandbox_request req)
{
    policy_settings ps = {ap, true, true};
    char *argv[] = {"bash", "-lc", (char *)line, NULL};
    policy_result r;
    policy_evaluate(rules, NULL, &ps, argv, req, false, &r);
    return r;
}

#define EXPECT(ap, line, req, want)                                                                            \
    do {                                                                                                       \
        policy_result r_ = judge(ap, line, req);                                                               \
        if (r_.verdict != (want))                                                                              \
            fail_msg("%s, '%s', request %d: verdict %d, want %d (%s)", approval_policy_name(ap), line, req,     \
                     r_.verdict, want, r_.reason);                                                             \
    } while (0)

static void rules_decide_first(void **state)
{
    (void)state;
    for (int ap = 0; ap < 4; ap++) {
        EXPECT(ap, "rm -rf build", SANDBOX_DEFAULT, VERDICT_FORBIDDEN);
        EXPECT(ap, "git status && rm -rf x", SANDBOX_DEFAULT, VERDICT_FORBIDDEN); /* strictest segment */
        EXPECT(ap, "git status", SANDBOX_DEFAULT, VERDICT_RUN);
    }
    policy_result r = judge(APPROVAL_ON_REQUEST, "git push origin main", SANDBOX_DEFAULT);
    assert_int_equal(r.verdict, VERDICT_ASK);
    assert_string_equal(r.reason, "pushing changes the remote");
    assert_string_equal(r.rule, "git push");
    r = judge(APPROVAL_ON_REQUEST, "rm -rf build", SANDBOX_DEFAULT);
    assert_string_equal(r.reason, "use trash");
}

static void never_never_asks(void **state)
{
    (void)state;
    EXPECT(APPROVAL_NEVER, "git push", SANDBOX_DEFAULT, VERDICT_FORBIDDEN);
    EXPECT(APPROVAL_NEVER, "rm -f x", SANDBOX_DEFAULT, VERDICT_FORBIDDEN); /* dangerous, no rule */
    EXPECT(APPROVAL_NEVER, "npm test", SANDBOX_ESCALATED, VERDICT_FORBIDDEN);
    EXPECT(APPROVAL_NEVER, "npm test", SANDBOX_DEFAULT, VERDICT_RUN); /* sandboxed */
    policy_result r = judge(APPROVAL_NEVER, "git push", SANDBOX_DEFAULT);
    assert_non_null(strstr(r.reason, "approval policy never"));
}

static void on_request(void **state)
{
    (void)state;
    EXPECT(APPROVAL_ON_REQUEST, "npm test", SANDBOX_DEFAULT, VERDICT_RUN);
    EXPECT(APPROVAL_ON_REQUEST, "rm -f x", SANDBOX_DEFAULT, VERDICT_ASK);
    EXPECT(APPROVAL_ON_REQUEST, "npm test", SANDBOX_ESCALATED, VERDICT_ASK);
    EXPECT(APPROVAL_ON_REQUEST, "npm test", SANDBOX_MORE_PERMISSIONS, VERDICT_ASK);
    /* Only an explicit allow of every segment escapes the sandbox unasked. */
    policy_result r = judge(APPROVAL_ON_REQUEST, "make && git diff", SANDBOX_ESCALATED);
    assert_int_equal(r.verdict, VERDICT_RUN);
    assert_true(r.explicit_allow);
    assert_false(r.sandboxed);
    EXPECT(APPROVAL_ON_REQUEST, "make && ls", SANDBOX_ESCALATED, VERDICT_ASK); /* ls: heuristic only */
    /* A complex script is one unit: no rule for "bash -lc ...". */
    r = judge(APPROVAL_ON_REQUEST, "make > log", SANDBOX_ESCALATED);
    assert_true(r.complex);
    assert_int_equal(r.verdict, VERDICT_ASK);
}

static void unless_trusted(void **state)
{
    (void)state;
    EXPECT(APPROVAL_UNLESS_TRUSTED, "ls -la", SANDBOX_DEFAULT, VERDICT_RUN);
    EXPECT(APPROVAL_UNLESS_TRUSTED, "cat f | wc -l", SANDBOX_DEFAULT, VERDICT_RUN);
    EXPECT(APPROVAL_UNLESS_TRUSTED, "npm test", SANDBOX_DEFAULT, VERDICT_ASK);
    EXPECT(APPROVAL_UNLESS_TRUSTED, "git log", SANDBOX_DEFAULT, VERDICT_ASK); /* git is not safe */
    EXPECT(APPROVAL_UNLESS_TRUSTED, "git status", SANDBOX_DEFAULT, VERDICT_RUN); /* but a rule allows it */
    EXPECT(APPROVAL_UNLESS_TRUSTED, "ls > out", SANDBOX_DEFAULT, VERDICT_ASK); /* complex */
}

static void granular(void **state)
{
    (void)state;
    policy_settings ps = {APPROVAL_GRANULAR, false, true};
    char *push[] = {"git", "push", NULL};
    char *npm[] = {"npm", "test", NULL};
    policy_result r;
    policy_evaluate(rules, NULL, &ps, push, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_ASK); /* rules may ask */
    policy_evaluate(rules, NULL, &ps, npm, SANDBOX_ESCALATED, false, &r);
    assert_int_equal(r.verdict, VERDICT_FORBIDDEN); /* escalations may not */
    ps = (policy_settings){APPROVAL_GRANULAR, true, false};
    policy_evaluate(rules, NULL, &ps, push, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_FORBIDDEN);
    policy_evaluate(rules, NULL, &ps, npm, SANDBOX_ESCALATED, false, &r);
    assert_int_equal(r.verdict, VERDICT_ASK);
}

static void deny_read_keeps_sandbox(void **state)
{
    (void)state;
    policy_settings ps = {APPROVAL_ON_REQUEST, true, true};
    char *make[] = {"make", NULL};
    policy_result r;
    policy_evaluate(rules, NULL, &ps, make, SANDBOX_ESCALATED, true, &r);
    assert_int_equal(r.verdict, VERDICT_RUN);
    assert_true(r.sandboxed);
    policy_evaluate(NULL, NULL, &ps, make, SANDBOX_DEFAULT, false, &r); /* no rules at all */
    assert_int_equal(r.verdict, VERDICT_RUN);
    assert_true(r.sandboxed);
}

static void user_rules_override_defaults(void **state)
{
    (void)state;
    char err[256];
    rules_t *defaults = rules_new(), *user = rules_new();
    assert_int_equal(rules_load_text(defaults, "d", "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n",
                                     err, sizeof err), 0);
    assert_int_equal(rules_load_text(user, "u", "prefix_rule(pattern=[\"git\", \"push\", \"origin\"])\n", err,
                                     sizeof err), 0);
    policy_settings ps = {APPROVAL_ON_REQUEST, true, true};
    char *mine[] = {"git", "push", "origin", "main", NULL};
    char *other[] = {"git", "push", "upstream", NULL};
    policy_result r;
    policy_evaluate(user, defaults, &ps, mine, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_RUN);
    policy_evaluate(user, defaults, &ps, other, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_ASK);
    rules_free(user);
    rules_free(defaults);
}

static void policy_names(void **state)
{
    (void)state;
    approval_policy p;
    assert_int_equal(approval_policy_parse("unless-trusted", &p), 0);
    assert_int_equal(p, APPROVAL_UNLESS_TRUSTED);
    assert_int_equal(approval_policy_parse("untrusted", &p), 0);
    assert_int_equal(approval_policy_parse("sometimes", &p), -1);
    assert_string_equal(approval_policy_name(APPROVAL_NEVER), "never");
}

/* A complex script is one unit, yet a forbidding or asking rule about a
 * command written in it still applies; an allow does not carry over. */
static void complex_scripts_keep_rules(void **state)
{
    (void)state;
    EXPECT(APPROVAL_ON_REQUEST, "x=$(date); rm -rf build", SANDBOX_DEFAULT, VERDICT_FORBIDDEN);
    EXPECT(APPROVAL_ON_REQUEST, "echo $(pwd) && git push", SANDBOX_DEFAULT, VERDICT_ASK);
    EXPECT(APPROVAL_ON_REQUEST, "make > log.txt", SANDBOX_DEFAULT, VERDICT_RUN);
    EXPECT(APPROVAL_ON_REQUEST, "make > log.txt", SANDBOX_ESCALATED, VERDICT_ASK);
    /* A redirection first: its descriptor is not the command. */
    EXPECT(APPROVAL_ON_REQUEST, "2>/dev/null rm -rf build", SANDBOX_DEFAULT, VERDICT_FORBIDDEN);
    EXPECT(APPROVAL_ON_REQUEST, "2>/dev/null git push", SANDBOX_DEFAULT, VERDICT_ASK);
    policy_result r = judge(APPROVAL_ON_REQUEST, "for f in *; do rm -rf build; done", SANDBOX_DEFAULT);
    assert_int_equal(r.verdict, VERDICT_FORBIDDEN);
    assert_string_equal(r.reason, "use trash");
}

/* Rules judge what the shell runs: a backslash-newline inside a word is
 * gone when bash runs it, and a word the shell expands (a glob a file in
 * the workspace can match, braces) makes the script complex, so it is
 * never taken for an allowed plain command. */
static void scripts_read_as_the_shell_runs_them(void **state)
{
    (void)state;
    rules_t *touch = rules_new();
    char err[512];
    assert_int_equal(rules_load_text(touch, "t.rules",
                                     "prefix_rule(pattern=[\"touch\"], decision=\"forbidden\")\n"
                                     "prefix_rule(pattern=[\"git\"], decision=\"allow\")\n"
                                     "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n",
                                     err, sizeof err),
                     0);
    policy_settings ps = {APPROVAL_ON_REQUEST, true, true};
    policy_result r;
    char *cont[] = {"bash", "-c", "tou\\\nch x", NULL};
    policy_evaluate(touch, NULL, &ps, cont, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_FORBIDDEN);
    char *quoted[] = {"bash", "-c", "\"tou\\\nch\" x", NULL};
    policy_evaluate(touch, NULL, &ps, quoted, SANDBOX_DEFAULT, false, &r);
    assert_int_equal(r.verdict, VERDICT_FORBIDDEN);
    char *glob[] = {"bash", "-c", "git pus? origin", NULL};
    policy_evaluate(touch, NULL, &ps, glob, SANDBOX_ESCALATED, false, &r);
    assert_int_equal(r.verdict, VERDICT_ASK);
    assert_true(r.complex);
    char *brace[] = {"bash", "-c", "git {push,} origin", NULL};
    policy_evaluate(touch, NULL, &ps, brace, SANDBOX_ESCALATED, false, &r);
    assert_int_equal(r.verdict, VERDICT_ASK);
    char *plain[] = {"bash", "-c", "git status", NULL}; /* still allowed, outside the sandbox too */
    policy_evaluate(touch, NULL, &ps, plain, SANDBOX_ESCALATED, false, &r);
    assert_int_equal(r.verdict, VERDICT_RUN);
    rules_free(touch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rules_decide_first), cmocka_unit_test(never_never_asks), cmocka_unit_test(on_request),
        cmocka_unit_test(unless_trusted),     cmocka_unit_test(granular),         cmocka_unit_test(deny_read_keeps_sandbox),
        cmocka_unit_test(user_rules_override_defaults), cmocka_unit_test(policy_names), cmocka_unit_test(complex_scripts_keep_rules),
        cmocka_unit_test(scripts_read_as_the_shell_runs_them),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
