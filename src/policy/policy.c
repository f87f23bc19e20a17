/*
 * policy.c - see policy.h.
 */
#include "config.h"

#include "policy/policy.h"
#include "policy/safety.h"
#include "policy/shsplit.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const char *const policy_names[] = {"on-request", "unless-trusted", "never", "granular"};

int approval_policy_parse(const char *s, approval_policy *out)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, policy_names[i]) == 0) {
            *out = (approval_policy)i;
            return 0;
        }
    }
    if (strcmp(s, "untrusted") == 0) { /* Codex's name for it */
        *out = APPROVAL_UNLESS_TRUSTED;
        return 0;
    }
    return -1;
}

const char *approval_policy_name(approval_policy p)
{
    return (unsigned)p < 4 ? policy_names[p] : "?";
}

/* One segment's judgement. */
typedef struct segment_verdict {
    rule_decision decision; /* RULE_ALLOW also for "runs in the sandbox" */
    bool by_rule;
    bool dangerous;
    char reason[256];
    char rule[256];
} segment_verdict;

static void join_tokens(char **tokens, size_t n, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", i ? " " : "", tokens[i]);
    }
}

static void judge_segment(const rules_t *rules, const rules_t *defaults, const policy_settings *ps,
                          char *const *argv, segment_verdict *v)
{
    memset(v, 0, sizeof *v);
    rule_match *m = NULL;
    size_t n = rules ? rules_match(rules, argv, true, &m) : 0;
    if (n == 0 && defaults)
        n = rules_match(defaults, argv, true, &m);
    if (n > 0) {
        v->by_rule = true;
        v->decision = rules_decide(m, n);
        /* The deciding rule: the first of the strictest decision. */
        for (size_t i = 0; i < n; i++) {
            if (m[i].decision != v->decision)
                continue;
            join_tokens(m[i].prefix, m[i].n, v->rule, sizeof v->rule);
            if (m[i].justification)
                snprintf(v->reason, sizeof v->reason, "%.*s", (int)m[i].justification_len, m[i].justification);
            else
                snprintf(v->reason, sizeof v->reason, "rule prefix_rule(%s) says %s", v->rule,
                         rule_decision_name(v->decision));
            break;
        }
        rules_matches_free(m, n);
        return;
    }
    if (safety_dangerous(argv)) {
        v->dangerous = true;
        v->decision = RULE_PROMPT;
        snprintf(v->reason, sizeof v->reason, "dangerous command (a forced rm)");
        return;
    }
    if (ps->approval == APPROVAL_UNLESS_TRUSTED && !safety_known_safe(argv)) {
        v->decision = RULE_PROMPT;
        snprintf(v->reason, sizeof v->reason, "not known to be safe (approval policy unless-trusted)");
        return;
    }
    v->decision = RULE_ALLOW;
}

bool policy_can_ask(const policy_settings *ps, bool escalation, const char **why)
{
    const char *no = NULL;
    if (ps->approval == APPROVAL_NEVER)
        no = "approval policy never";
    else if (ps->approval == APPROVAL_GRANULAR && escalation && !ps->granular_sandbox_approval)
        no = "approval policy granular: sandbox escalations are not asked";
    else if (ps->approval == APPROVAL_GRANULAR && !escalation && !ps->granular_rules)
        no = "approval policy granular: rule prompts are not asked";
    if (why)
        *why = no;
    return no == NULL;
}

/* Turn a "would ask" into a refusal where the policy never asks for it. */
static void refuse_unaskable(const policy_settings *ps, bool escalation, policy_result *out)
{
    const char *why;
    if (!policy_can_ask(ps, escalation, &why)) {
        out->verdict = VERDICT_FORBIDDEN;
        size_t used = strlen(out->reason);
        snprintf(out->reason + used, sizeof out->reason - used, "%s%s", used ? "; refused: " : "refused: ", why);
    }
}

void policy_evaluate(const rules_t *rules, const rules_t *defaults, const policy_settings *ps, char *const *argv,
                     sandbox_request req, bool deny_read, policy_result *out)
{
    memset(out, 0, sizeof *out);
    sh_commands cmds = {0};
    const char *script = shsplit_shell_script(argv);
    bool split = script && shsplit_plain(script, &cmds) == 0;
    out->complex = script && !split;
    size_t nseg = split ? cmds.n : 1;
    out->segments = nseg;
    rule_decision worst = RULE_NONE;
    bool all_explicit = true;
    for (size_t i = 0; i < nseg; i++) {
        segment_verdict v;
        judge_segment(rules, defaults, ps, split ? cmds.cmds[i] : argv, &v);
        all_explicit = all_explicit && v.by_rule && v.decision == RULE_ALLOW;
        out->dangerous = out->dangerous || v.dangerous;
        if (v.decision > worst) {
            worst = v.decision;
            snprintf(out->reason, sizeof out->reason, "%s", v.reason);
            snprintf(out->rule, sizeof out->rule, "%s", v.rule);
        }
    }
    sh_commands_free(&cmds);
    /* A complex script is one unit, but a rule that forbids or asks about
     * a command written in it still speaks: `x=$(date); rm -rf /` must
     * not slip past a rule on rm by being complex.  (Allows do not carry
     * over: the unit as a whole was not allowed.) */
    if (out->complex) {
        sh_commands lit = {0};
        shsplit_literal(script, &lit);
        for (size_t i = 0; i < lit.n; i++) {
            segment_verdict v;
            judge_segment(rules, defaults, ps, lit.cmds[i], &v);
            if (v.by_rule && v.decision > worst && v.decision >= RULE_PROMPT) {
                worst = v.decision;
                snprintf(out->reason, sizeof out->reason, "%s", v.reason);
                snprintf(out->rule, sizeof out->rule, "%s", v.rule);
            }
        }
        sh_commands_free(&lit);
    }
    out->explicit_allow = all_explicit;
    bool escalation = req != SANDBOX_DEFAULT;
    /* Only an explicit allow of every segment runs escalated unasked; a
     * deny-read entry keeps the sandbox whatever was approved. */
    out->sandboxed = !(req == SANDBOX_ESCALATED) || deny_read;
    if (worst == RULE_FORBIDDEN) {
        out->verdict = VERDICT_FORBIDDEN;
        return;
    }
    if (worst == RULE_PROMPT) {
        /* A rule's or a heuristic's prompt: the granular "rules" switch
         * governs both; an escalation on top also needs the sandbox one. */
        out->verdict = VERDICT_ASK;
        refuse_unaskable(ps, false, out);
        if (out->verdict == VERDICT_ASK && escalation)
            refuse_unaskable(ps, true, out);
        return;
    }
    if (escalation && !all_explicit) {
        out->verdict = VERDICT_ASK;
        snprintf(out->reason, sizeof out->reason, "%s",
                 req == SANDBOX_ESCALATED ? "asks to run without the sandbox"
                                          : "asks for more than its sandbox allows");
        refuse_unaskable(ps, true, out);
        return;
    }
    out->verdict = VERDICT_RUN;
}
