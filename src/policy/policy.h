/*
 * policy.h - deciding what happens to one command (docs/ARCHITECTURE.md, "One exec, end to end" step
 * 2; the Codex CLI's exec policy): its segments (the plain commands of a
 * `bash -lc` script, or the command itself) are checked against the rules,
 * then the heuristics where no rule matched, and the approval policy turns
 * the strictest result into one verdict.
 *
 * The matrix, by approval policy (on-request is the default):
 *  - a rule's forbidden is forbidden; a rule's prompt asks (never: refused;
 *    granular without rules: refused);
 *  - no rule: a dangerous command asks (never: refused); under
 *    unless-trusted only a known-safe command runs without asking;
 *    anything else runs in the sandbox;
 *  - an escalation (require_escalated or extra permissions) asks unless
 *    every segment is explicitly allowed by a rule, which is the only way
 *    to run without the sandbox unasked (never, or granular without
 *    sandbox approval: refused);
 *  - a deny-read entry keeps the sandbox even when escalated.
 *
 * Included by src/policy/, src/server/, src/gate/, src/mcp/ and src/cli/.
 */
#ifndef CORRAL_POLICY_H
#define CORRAL_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/rules.h"

typedef enum approval_policy {
    APPROVAL_ON_REQUEST, /* default: ask for escalations, prompts and dangerous commands */
    APPROVAL_UNLESS_TRUSTED, /* ask for anything not known safe or allowed by a rule */
    APPROVAL_NEVER,      /* never ask: what would ask is refused */
    APPROVAL_GRANULAR,   /* ask for some things, refuse the others */
} approval_policy;

typedef struct policy_settings {
    approval_policy approval;
    bool granular_sandbox_approval; /* granular: escalations may ask */
    bool granular_rules;            /* granular: rule prompts may ask */
} policy_settings;

/* "on-request", "unless-trusted", "never", "granular": 0 or -1. */
int approval_policy_parse(const char *s, approval_policy *out);
const char *approval_policy_name(approval_policy p);

typedef enum sandbox_request {
    SANDBOX_DEFAULT,          /* the session's profile */
    SANDBOX_ESCALATED,        /* require_escalated: without the sandbox */
    SANDBOX_MORE_PERMISSIONS, /* with_additional_permissions: a wider sandbox */
} sandbox_request;

typedef enum policy_verdict {
    VERDICT_RUN,       /* as requested: in the sandbox, or widened/unsandboxed when explicitly allowed */
    VERDICT_ASK,       /* a human decides */
    VERDICT_FORBIDDEN, /* refused, with the reason */
} policy_verdict;

typedef struct policy_result {
    policy_verdict verdict;
    bool sandboxed;       /* when it runs (now or once approved): inside a sandbox */
    bool explicit_allow;  /* every segment allowed by a rule */
    bool complex;         /* a script judged as one unit */
    bool dangerous;
    size_t segments;
    char reason[512];     /* why it asks or is refused; the rule's justification when there is one */
    char rule[512];       /* the deciding rule's prefix, as text; empty for heuristics */
} policy_result;

/* May this policy ask a human (about an escalation, or about a rule's or
 * a heuristic's prompt)?  *why (may be NULL) says why not. */
bool policy_can_ask(const policy_settings *ps, bool escalation, const char **why);

/* Judge argv.  rules: the user's (may be NULL); defaults: corral's
 * built-in rules, consulted for a segment only when no user rule matches
 * it, so a user's rule (an "always" answer) overrides them (may be NULL).
 * deny_read: the profile has deny entries (they keep the sandbox when
 * escalated). */
void policy_evaluate(const rules_t *rules, const rules_t *defaults, const policy_settings *ps, char *const *argv,
                     sandbox_request req, bool deny_read, policy_result *out);

#endif
