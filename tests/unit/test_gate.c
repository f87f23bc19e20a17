/* Unit tests for the one gate (gate.h), without a server: every origin x
 * approval policy x deny entries x rule decision x answer, what the
 * widened sandbox is, the session cache, the rule "always" would save, and
 * the one retry after a sandbox denial. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate.h"
#include "sandbox/profile.h"
#include "protocol/proto.h"
#include "base/util.h"

/* One command per rule decision; "make" matches no rule (and is neither
 * known safe nor dangerous). */
static const char rules_text[] = "prefix_rule(pattern=[\"deploy\"], decision=\"allow\")\n"
                                 "prefix_rule(pattern=[\"publish\"], decision=\"prompt\", justification=\"it ships\")\n"
                                 "prefix_rule(pattern=[\"wipe\"], decision=\"forbidden\", justification=\"never\")\n";
static rules_t *rules;

enum rule_kind { R_NONE, R_ALLOW, R_PROMPT, R_FORBIDDEN, N_RULES };
static const char *const rule_cmd[] = {"make", "deploy", "publish", "wipe"};
static const char *const rule_names[] = {"no rule", "allow", "prompt", "forbidden"};

enum deny_kind { D_NONE, D_SESSION, D_CONFIG, N_DENY };
static const char *const deny_names[] = {"no deny", "session deny", "config deny"};

/* The policies, with granular's two switches. */
typedef struct pol {
    const char *name;
    policy_settings ps;
} pol;
static const pol policies[] = {
    {"on-request", {APPROVAL_ON_REQUEST, false, false}},
    {"unless-trusted", {APPROVAL_UNLESS_TRUSTED, false, false}},
    {"never", {APPROVAL_NEVER, false, false}},
    {"granular(none)", {APPROVAL_GRANULAR, false, false}},
    {"granular(sandbox)", {APPROVAL_GRANULAR, true, false}},
    {"granular(rules)", {APPROVAL_GRANULAR, false, true}},
    {"granular(both)", {APPROVAL_GRANULAR, true, true}},
};
#define N_POL (sizeof policies / sizeof policies[0])

/* The origins as the server fills them: an exec in the sandbox, an exec
 * asking to leave it, corral escalate from inside a session, a hook's
 * check of a typed line. */
enum case_origin { C_EXEC, C_EXEC_ESCALATED, C_ESCALATE, C_HOOK, N_ORIGINS };
static const char *const origin_names[] = {"exec", "exec --require-escalated", "escalate", "hook"};

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

static char **strv(const char *a, const char *b, const char *c)
{
    const char *in[] = {a, b, c, NULL};
    return strv_copy((char **)in);
}

static void fill(gate_request *g, enum case_origin o, const pol *p, enum deny_kind d, enum rule_kind r,
                 gate_cache *cache)
{
    gate_origin origin = o == C_ESCALATE ? GATE_ESCALATE : o == C_HOOK ? GATE_HOOK : GATE_EXEC;
    gate_request_init(g, origin);
    g->requester = strdup("codex");
    g->session = o == C_ESCALATE || o == C_HOOK ? 7 : 0;
    g->cache = cache;
    g->cwd = strdup("/ws");
    g->workspace = strdup("/ws");
    g->policy = p->ps;
    if (o == C_HOOK) {
        g->line = strdup(rule_cmd[r]);
        g->argv = strv("bash", "-c", rule_cmd[r]);
    } else {
        g->argv = strv(rule_cmd[r], "now", NULL);
    }
    g->sandbox = o == C_EXEC_ESCALATED || o == C_ESCALATE ? SANDBOX_ESCALATED : SANDBOX_DEFAULT;
    if (d == D_SESSION)
        g->base.deny = strv("/ws/secrets", NULL, NULL);
    g->config_deny = d == D_CONFIG;
}

/* What the gate must say first, worked out from the design's rules
 * (docs/ARCHITECTURE.md, "The gate"), not from the code. */
static gate_next expected_judgement(enum case_origin o, const pol *p, enum rule_kind r)
{
    const policy_settings *ps = &p->ps;
    bool escalation = o == C_EXEC_ESCALATED || o == C_ESCALATE;
    bool can_ask_rules = ps->approval != APPROVAL_NEVER &&
                         !(ps->approval == APPROVAL_GRANULAR && !ps->granular_rules);
    bool can_ask_sandbox = ps->approval != APPROVAL_NEVER &&
                           !(ps->approval == APPROVAL_GRANULAR && !ps->granular_sandbox_approval);
    if (r == R_FORBIDDEN)
        return GATE_REFUSE;
    if (r == R_PROMPT || (r == R_NONE && ps->approval == APPROVAL_UNLESS_TRUSTED))
        return can_ask_rules && (!escalation || can_ask_sandbox) ? GATE_ASK : GATE_REFUSE;
    /* An explicit allow, or nothing said about it. */
    if (o == C_ESCALATE) /* from inside a sandbox: always a human */
        return can_ask_sandbox ? GATE_ASK : GATE_REFUSE;
    if (o == C_EXEC_ESCALATED && r != R_ALLOW) /* only an explicit allow leaves the sandbox unasked */
        return can_ask_sandbox ? GATE_ASK : GATE_REFUSE;
    return GATE_LAUNCH;
}

static void check_widened(const gate_request *g, enum case_origin o, enum deny_kind d, const char *what)
{
    gate_launch l;
    gate_widen(g, &l);
    bool escalation = o == C_EXEC_ESCALATED || o == C_ESCALATE;
    bool writes_all = false;
    for (char **w = l.spec.write; w && *w; w++)
        writes_all = writes_all || strcmp(*w, "/") == 0;
    if (escalation && d == D_NONE && (!l.spec.profile || strcmp(l.spec.profile, "full") != 0))
        fail_msg("%s: escalated without deny entries must run without a sandbox", what);
    if (escalation && d != D_NONE && (!l.keeps_sandbox || !writes_all || l.spec.net != SB_NET_FULL))
        fail_msg("%s: deny entries must keep a sandbox, writable everywhere else, network on", what);
    if (d == D_SESSION && (!l.spec.deny || !l.spec.deny[0] || strcmp(l.spec.deny[0], "/ws/secrets") != 0))
        fail_msg("%s: the session's own deny entries must survive the widening", what);
    if (!escalation && (writes_all || l.keeps_sandbox || (l.spec.profile && strcmp(l.spec.profile, "full") == 0)))
        fail_msg("%s: a request in the sandbox must not be widened", what);
    if (strcmp(l.spec.workspace, "/ws") != 0 || strcmp(l.spec.cwd, "/ws") != 0)
        fail_msg("%s: the workspace and cwd are the request's resolved ones", what);
    gate_launch_free(&l);
}

static const approval_answer answers[] = {ANSWER_ONCE, ANSWER_SESSION, ANSWER_PERSIST, ANSWER_DENY,
                                          ANSWER_STOP, ANSWER_FORBID, ANSWER_TIMEOUT, ANSWER_GONE};

static void test_matrix(void **state)
{
    (void)state;
    size_t cases = 0;
    for (int o = 0; o < N_ORIGINS; o++)
        for (size_t p = 0; p < N_POL; p++)
            for (int d = 0; d < N_DENY; d++)
                for (int r = 0; r < N_RULES; r++)
                    for (size_t a = 0; a < sizeof answers / sizeof answers[0]; a++) {
                        char what[200];
                        snprintf(what, sizeof what, "%s, %s, %s, %s, answer %s", origin_names[o],
                                 policies[p].name, deny_names[d], rule_names[r],
                                 approval_answer_name(answers[a]));
                        gate_cache cache = {0};
                        gate_request g;
                        fill(&g, o, &policies[p], d, r, &cache);
                        gate_next want = expected_judgement(o, &policies[p], r);
                        gate_next got = gate_judge(&g, rules, NULL);
                        if (got != want)
                            fail_msg("%s: judged %d, want %d (%s)", what, got, want, g.verdict.reason);
                        cases++;
                        if (got == GATE_REFUSE) {
                            if (!g.message || !strstr(g.message, o == C_ESCALATE ? "corral escalate: not run"
                                                                  : o == C_HOOK  ? "was not run"
                                                                                 : "did not run"))
                                fail_msg("%s: a refusal says what did not run: %s", what, g.message);
                        } else if (got == GATE_LAUNCH) {
                            check_widened(&g, o, d, what);
                        } else {
                            if (g.state != GATE_ASKED || !g.reason)
                                fail_msg("%s: an asked request says why", what);
                            gate_next after = gate_answer(&g, answers[a], "use make check");
                            approval_answer ans = answers[a];
                            bool yes = ans == ANSWER_ONCE || ans == ANSWER_SESSION || ans == ANSWER_PERSIST;
                            gate_next want2 = yes ? GATE_LAUNCH : ans == ANSWER_GONE ? GATE_DROP : GATE_DENY;
                            if (after != want2)
                                fail_msg("%s: answered %d, want %d", what, after, want2);
                            if (after == GATE_LAUNCH)
                                check_widened(&g, o, d, what);
                            if (after == GATE_DENY) {
                                if (!strstr(g.message, "use make check"))
                                    fail_msg("%s: the user's note reaches the requester: %s", what, g.message);
                                if (ans == ANSWER_STOP && !strstr(g.message, "stop and wait"))
                                    fail_msg("%s: a stop says so: %s", what, g.message);
                                if (ans == ANSWER_TIMEOUT && !strstr(g.message, "in time"))
                                    fail_msg("%s: a timeout says so: %s", what, g.message);
                            }
                            /* "For this session": the same request again does
                             * not ask; another one does. */
                            gate_request again;
                            fill(&again, o, &policies[p], d, r, &cache);
                            gate_next second = gate_judge(&again, rules, NULL);
                            gate_next want3 = ans == ANSWER_SESSION ? GATE_LAUNCH : GATE_ASK;
                            if (second != want3)
                                fail_msg("%s: the same request again: %d, want %d", what, second, want3);
                            if (ans == ANSWER_SESSION && again.state != GATE_CACHED)
                                fail_msg("%s: a remembered answer shows as cached", what);
                            gate_request_free(&again);
                            gate_request other;
                            fill(&other, o, &policies[p], d, r, &cache);
                            free(other.cwd);
                            other.cwd = strdup("/ws/sub");
                            if (gate_judge(&other, rules, NULL) != GATE_ASK)
                                fail_msg("%s: a request in another directory asks again", what);
                            gate_request_free(&other);
                        }
                        gate_request_free(&g);
                        gate_cache_free(&cache);
                    }
    assert_int_equal(cases, (size_t)N_ORIGINS * N_POL * N_DENY * N_RULES * 8);
}

/* Item 6 of the review: an escalation from inside a session keeps the
 * session's own --deny entries; and the widened sandbox never swaps the
 * session's workspace for a directory the request names. */
static void test_escalation_keeps_session_deny_and_workspace(void **state)
{
    (void)state;
    gate_request g;
    gate_request_init(&g, GATE_ESCALATE);
    g.argv = strv("cat", "/ws/secrets/key", NULL);
    g.cwd = strdup("/elsewhere");
    g.workspace = strdup("/ws");
    g.base.deny = strv("/ws/secrets", NULL, NULL);
    g.sandbox = SANDBOX_ESCALATED;
    gate_launch l;
    gate_widen(&g, &l);
    assert_true(l.keeps_sandbox);
    assert_non_null(l.spec.deny);
    assert_string_equal(l.spec.deny[0], "/ws/secrets");
    assert_string_equal(l.spec.workspace, "/ws");
    assert_string_equal(l.spec.cwd, "/elsewhere");
    gate_launch_free(&l);
    gate_request_free(&g);
}

static void test_more_permissions(void **state)
{
    (void)state;
    gate_request g;
    gate_request_init(&g, GATE_ESCALATE);
    g.argv = strv("make", "install", NULL);
    g.cwd = strdup("/ws");
    g.workspace = strdup("/ws");
    g.base.write = strv("/data", NULL, NULL);
    g.sandbox = SANDBOX_MORE_PERMISSIONS;
    g.write = strv("/opt/out", NULL, NULL);
    g.network = true;
    gate_launch l;
    gate_widen(&g, &l);
    assert_false(l.keeps_sandbox);
    assert_null(l.spec.profile);
    assert_string_equal(l.spec.write[0], "/data");
    assert_string_equal(l.spec.write[1], "/opt/out");
    assert_null(l.spec.write[2]);
    assert_int_equal(l.spec.net, SB_NET_FULL);
    /* The widened request is the launch spec the server starts: the
     * command, directory and terminal as asked, the roots resolved when it
     * came (which must still be bound from exactly there), an agent's
     * process under the request's own approval policy. */
    assert_ptr_equal(l.spec.argv, g.argv);
    assert_string_equal(l.spec.cwd, "/ws");
    assert_string_equal(l.spec.workspace, "/ws");
    assert_ptr_equal(l.spec.resolved_write, g.write);
    assert_true(l.spec.agent);
    assert_ptr_equal(l.spec.policy, &g.policy);
    gate_launch_free(&l);
    /* The cache key holds the resolved extra roots: another root is
     * another request. */
    char *k1 = gate_cache_key(&g);
    free(g.write[0]);
    g.write[0] = strdup("/etc");
    char *k2 = gate_cache_key(&g);
    assert_string_not_equal(k1, k2);
    free(k1);
    free(k2);
    gate_request_free(&g);
}

/* Item 5: "always" for a typed line goes through the same filter as an
 * agent's suggestion: python3 alone is never saved as a rule. */
static void test_persist_filter(void **state)
{
    (void)state;
    static const struct {
        gate_origin origin;
        const char *line;         /* hook */
        const char *prefix[3];    /* exec's suggestion */
        const char *want[3];      /* the rule, or NULL: none offered */
    } rows[] = {
        {GATE_HOOK, "python3", {NULL}, {NULL}},
        {GATE_HOOK, "python3 -c 'print(1)'", {NULL}, {NULL}},
        {GATE_HOOK, "/usr/bin/python3.11 x.py", {NULL}, {NULL}},
        {GATE_HOOK, "env FOO=1 make", {NULL}, {NULL}},
        {GATE_HOOK, "sudo make install", {NULL}, {NULL}},
        {GATE_HOOK, "make build", {NULL}, {"make", "build", NULL}},
        {GATE_HOOK, "make a && make b", {NULL}, {NULL}},
        {GATE_EXEC, NULL, {"npm", "test", NULL}, {"npm", "test", NULL}},
        {GATE_EXEC, NULL, {"node", "-e", NULL}, {NULL}},
        {GATE_EXEC, NULL, {NULL}, {NULL}},
        {GATE_ESCALATE, NULL, {NULL}, {NULL}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gate_request g;
        gate_request_init(&g, rows[i].origin);
        g.cwd = strdup("/ws");
        g.workspace = strdup("/ws");
        if (rows[i].line) {
            g.line = strdup(rows[i].line);
            g.argv = strv("bash", "-c", rows[i].line);
        } else {
            g.argv = strv("true", NULL, NULL);
        }
        if (rows[i].prefix[0])
            g.prefix_rule = strv_copy((char **)rows[i].prefix);
        g.policy.approval = APPROVAL_UNLESS_TRUSTED; /* everything asks */
        gate_judge(&g, NULL, NULL);
        if (!rows[i].want[0]) {
            if (g.persist)
                fail_msg("row %zu: no rule may be offered, got %s", i, g.persist[0]);
            if (!g.persist_refusal)
                fail_msg("row %zu: the refusal says why", i);
        } else {
            if (!g.persist)
                fail_msg("row %zu: a rule is offered (%s)", i, g.persist_refusal);
            for (size_t k = 0; rows[i].want[k]; k++)
                assert_string_equal(g.persist[k], rows[i].want[k]);
        }
        json_t *j = gate_request_json(&g);
        assert_true((json_object_get(j, "prefix_rule") != NULL) == (rows[i].want[0] != NULL));
        json_decref(j);
        gate_request_free(&g);
    }
}

/* Every request says who waits for its answer and how that wait ends;
 * an MCP call, whether progress keeps it alive. */
static void test_waiter(void **state)
{
    (void)state;
    static const struct {
        gate_origin origin;
        int mcp_progress_s;
        const char *want;
    } rows[] = {
        {GATE_EXEC, 5, "its MCP call is open, kept alive by progress every 5 s"},
        {GATE_EXEC, 0, "without progress (the client asked for none)"},
        {GATE_EXEC, -1, "its client waits (closing it withdraws the request)"},
        {GATE_RETRY, 30, "kept alive by progress every 30 s"},
        {GATE_ESCALATE, -1, "corral escalate waits in the session"},
        {GATE_HOOK, -1, "the session's shell holds the typed line"},
        {GATE_NETWORK, -1, "the proxy holds the program's connection"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gate_request g;
        gate_request_init(&g, rows[i].origin);
        g.argv = strv("true", NULL, NULL);
        if (rows[i].origin == GATE_NETWORK)
            g.host = strdup("example.org");
        g.mcp_progress_s = rows[i].mcp_progress_s;
        json_t *j = gate_request_json(&g);
        const char *waiter = json_string_value(json_object_get(j, "waiter"));
        if (!waiter || !strstr(waiter, rows[i].want))
            fail_msg("row %zu: waiter '%s', wanted '%s'", i, waiter ? waiter : "(none)", rows[i].want);
        json_decref(j);
        gate_request_free(&g);
    }
}

static gate_request launched_exec(policy_settings ps)
{
    gate_request g;
    gate_request_init(&g, GATE_EXEC);
    g.argv = strv("touch", "/etc/x", NULL);
    g.cwd = strdup("/ws");
    g.workspace = strdup("/ws");
    g.policy = ps;
    gate_judge(&g, NULL, NULL);
    gate_launched(&g);
    return g;
}

/* Item 11: the retry needs a sandbox-shaped failure and someone to answer
 * it; never after a setup failure; never twice. */
static void test_retry(void **state)
{
    (void)state;
    char *roots[] = {"/ws", "/tmp", NULL};
    static const char erofs[] = "touch: cannot touch '/etc/x': Read-only file system\n";
    gate_run run = {.exit_code = 1, .output = erofs, .len = sizeof erofs - 1, .write_roots = roots,
                    .someone_can_answer = true};
    policy_settings on_request = {APPROVAL_ON_REQUEST, false, false};

    gate_request g = launched_exec(on_request);
    assert_int_equal(gate_after_run(&g, &run), GATE_ASK);
    assert_int_equal(g.origin, GATE_RETRY);
    assert_int_equal(g.sandbox, SANDBOX_ESCALATED);
    assert_non_null(strstr(g.reason, "read-only file system"));
    assert_null(g.persist);
    assert_int_equal(gate_answer(&g, ANSWER_DENY, "use /tmp"), GATE_REPLY); /* the first run's reply stands */
    assert_non_null(strstr(g.message, "retry")); /* and carries which answer it was, and the note */
    assert_non_null(strstr(g.message, "denied"));
    assert_non_null(strstr(g.message, "use /tmp"));
    assert_int_equal(g.denial.kind, DENIAL_READONLY);
    assert_string_equal(g.denial.path, "/etc/x");
    gate_request_free(&g);

    g = launched_exec(on_request);
    assert_int_equal(gate_after_run(&g, &run), GATE_ASK);
    assert_int_equal(gate_answer(&g, ANSWER_ONCE, NULL), GATE_LAUNCH);
    gate_launch l;
    gate_widen(&g, &l);
    assert_string_equal(l.spec.profile, "full");
    gate_launch_free(&l);
    gate_launched(&g);
    assert_int_equal(gate_after_run(&g, &run), GATE_REPLY); /* never a second one */
    gate_request_free(&g);

    static const struct {
        const char *output;
        int exit_code;
        bool setup_failed, nobody, streamed, unconfined, never;
    } no[] = {
        {"touch: cannot touch '/etc/x': Read-only file system\n", 1, true, false, false, false, false},
        {"touch: cannot touch '/etc/x': Read-only file system\n", 1, false, true, false, false, false},
        {"touch: cannot touch '/etc/x': Read-only file system\n", 1, false, false, true, false, false},
        {"touch: cannot touch '/etc/x': Read-only file system\n", 1, false, false, false, true, false},
        {"touch: cannot touch '/etc/x': Read-only file system\n", 1, false, false, false, false, true},
        {"touch: cannot touch '/etc/x': Read-only file system\n", 0, false, false, false, false, false},
        {"git@github.com: Permission denied (publickey).\n", 128, false, false, false, false, false},
        {"sh: 1: /ws/run.sh: Permission denied\n", 126, false, false, false, false, false},
        {"cannot open /ws/locked/f: Permission denied\n", 1, false, false, false, false, false},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        policy_settings ps = on_request;
        if (no[i].never)
            ps.approval = APPROVAL_NEVER;
        g = launched_exec(ps);
        gate_run r = {.exit_code = no[i].exit_code, .output = no[i].output, .len = strlen(no[i].output),
                      .write_roots = roots, .setup_failed = no[i].setup_failed,
                      .someone_can_answer = !no[i].nobody, .streamed = no[i].streamed,
                      .unconfined = no[i].unconfined};
        if (gate_after_run(&g, &r) != GATE_REPLY)
            fail_msg("row %zu: no retry may be offered", i);
        gate_request_free(&g);
    }
}

/* ---- network hosts: one more origin of the same gate ----------------------- */

static gate_request net_request(const char *host, int port, policy_settings ps, gate_cache *allow, gate_cache *deny)
{
    gate_request g;
    gate_request_init(&g, GATE_NETWORK);
    g.session = 7;
    g.host = strdup(host);
    g.port = port;
    g.net_proto = RULE_NET_HTTPS;
    g.argv = strv("network-access", "https://x", NULL);
    g.cwd = strdup("/ws");
    g.workspace = strdup("/ws");
    g.policy = ps;
    g.cache = allow;
    g.deny_cache = deny;
    g.network = true;
    return g;
}

static void test_network(void **state)
{
    (void)state;
    char err[512];
    rules_t *nr = rules_new();
    assert_int_equal(rules_load_text(nr, "net.rules",
                                     "network_rule(host=\"api.example.com\", protocol=\"https\", decision=\"allow\")\n"
                                     "network_rule(host=\"*.cdn.example\", protocol=\"https\", decision=\"allow\")\n"
                                     "network_rule(host=\"evil.example\", protocol=\"https\", decision=\"deny\")\n"
                                     "network_rule(host=\"ask.example\", protocol=\"https\", decision=\"prompt\")\n",
                                     err, sizeof err),
                     0);
    policy_settings on_request = {APPROVAL_ON_REQUEST, false, false};
    policy_settings never = {APPROVAL_NEVER, false, false};
    gate_cache allow = {0}, deny = {0};

    /* Rules decide first: a deny refuses, an exact allow names the host (a
     * local service may be reached), a glob allow does not. */
    gate_request g = net_request("evil.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_REFUSE);
    assert_non_null(strstr(g.message, "network_rule denies evil.example"));
    gate_request_free(&g);
    g = net_request("api.example.com", 443, never, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_LAUNCH);
    assert_true(g.host_named);
    gate_request_free(&g);
    g = net_request("img.cdn.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_LAUNCH);
    assert_false(g.host_named);
    gate_request_free(&g);
    /* Unknown hosts ask, or are refused when the policy never asks. */
    g = net_request("new.example", 443, never, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_REFUSE);
    gate_request_free(&g);
    g = net_request("ask.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    assert_non_null(strstr(g.reason, "asks about ask.example"));
    gate_request_free(&g);

    /* a: this host, protocol and port for the session; not another port. */
    g = net_request("new.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    json_t *j = gate_request_json(&g);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "network");
    assert_string_equal(json_string_value(json_object_get(j, "host")), "new.example");
    assert_non_null(strstr(json_string_value(json_object_get(j, "network_rule_deny")), "decision=\"deny\""));
    json_decref(j);
    assert_int_equal(gate_answer(&g, ANSWER_SESSION, NULL), GATE_LAUNCH);
    assert_false(g.host_named);
    gate_request_free(&g);
    g = net_request("new.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_LAUNCH);
    assert_int_equal(g.state, GATE_CACHED);
    gate_request_free(&g);
    g = net_request("new.example", 8443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    /* d: denied, and for the rest of the session (the server persists a
     * deny rule as well). */
    assert_int_equal(gate_answer(&g, ANSWER_FORBID, NULL), GATE_DENY);
    assert_non_null(strstr(g.message, "from now on"));
    gate_request_free(&g);
    g = net_request("new.example", 8443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_REFUSE);
    assert_non_null(strstr(g.message, "denied for this session"));
    gate_request_free(&g);
    /* n, and corral deny: denied this once; the next one asks again. */
    g = net_request("other.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    assert_int_equal(gate_answer(&g, ANSWER_STOP, NULL), GATE_DENY);
    gate_request_free(&g);
    g = net_request("other.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    assert_int_equal(gate_answer(&g, ANSWER_DENY, NULL), GATE_DENY);
    gate_request_free(&g);
    g = net_request("other.example", 443, on_request, &allow, &deny);
    assert_int_equal(gate_judge(&g, nr, NULL), GATE_ASK);
    /* p: allowed, and the saved rule names the host. */
    assert_int_equal(gate_answer(&g, ANSWER_PERSIST, NULL), GATE_LAUNCH);
    assert_true(g.host_named);
    gate_request_free(&g);
    gate_cache_free(&allow);
    gate_cache_free(&deny);
    rules_free(nr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_escalation_keeps_session_deny_and_workspace),
        cmocka_unit_test(test_more_permissions),
        cmocka_unit_test(test_persist_filter),
        cmocka_unit_test(test_retry),
        cmocka_unit_test(test_network),
        cmocka_unit_test(test_waiter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
