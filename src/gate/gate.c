/*
 * gate.c - see gate.h.
 */
#include "config.h"

#include "gate/gate.h"
#include "sandbox/profile.h"
#include "protocol/proto.h"
#include "base/quote.h"
#include "policy/safety.h"
#include "policy/shsplit.h"
#include "base/util.h"
#include "base/netaddr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kinds[] = {"exec", "escalate", "command", "retry", "network"};

const char *gate_origin_kind(gate_origin o)
{
    return (unsigned)o < sizeof kinds / sizeof kinds[0] ? kinds[o] : "?";
}

void gate_request_init(gate_request *g, gate_origin origin)
{
    memset(g, 0, sizeof *g);
    g->origin = origin;
    g->base.net = -1;
    g->mcp_progress_s = -1;
    g->policy.approval = APPROVAL_ON_REQUEST;
    g->state = GATE_NEW;
}

void gate_request_free(gate_request *g)
{
    free(g->requester);
    free(g->session_name);
    free(g->failed_session_name);
    strv_free(g->argv);
    free(g->line);
    free(g->cwd);
    free(g->workspace);
    launch_sandbox_free(&g->base);
    strv_free(g->write);
    free(g->host);
    free(g->running);
    free(g->justification);
    strv_free(g->prefix_rule);
    free(g->reason);
    free(g->message);
    strv_free(g->persist);
    free(g->persist_refusal);
    memset(g, 0, sizeof *g);
}

/* Deny entries (the base sandbox's own, or the config's) keep a sandbox
 * even around an escalated command. */
static bool has_deny(const gate_request *g)
{
    return g->config_deny || (g->base.deny && g->base.deny[0]);
}

/* How a refusal or a denial starts, said the way the requester reads it. */
static const char *not_run(const gate_request *g)
{
    switch (g->origin) {
    case GATE_ESCALATE:
        return "corral escalate: not run";
    case GATE_HOOK:
        return "corral: this command line was not run";
    case GATE_RETRY:
        return "corral: the retry without the sandbox was not run";
    case GATE_NETWORK:
        return "corral: network access refused";
    default:
        return "this command did not run";
    }
}

static void set_text(char **field, char *text)
{
    free(*field);
    *field = text;
}

/* The rule "p" would save: the requester's suggestion (an agent's
 * prefix_rule), or for a typed line its one plain command; never one that
 * would allow whatever an interpreter runs (safety_rule_prefix_allowed),
 * whichever origin it comes from. */
static void derive_persist(gate_request *g)
{
    strv_free(g->persist);
    g->persist = NULL;
    char **from = NULL;
    sh_commands cmds = {0};
    const char *why_none = "the request suggests no rule";
    if (g->prefix_rule && g->prefix_rule[0]) {
        from = g->prefix_rule;
    } else if (g->origin == GATE_HOOK && g->line) {
        if (shsplit_plain(g->line, &cmds) == 0 && cmds.n == 1)
            from = cmds.cmds[0];
        else
            why_none = "a compound line cannot be saved as one prefix rule";
    }
    char why[300];
    if (!from)
        set_text(&g->persist_refusal, xstrdup(why_none));
    else if (!safety_rule_prefix_allowed(from, why, sizeof why))
        set_text(&g->persist_refusal, xstrdup(why));
    else
        g->persist = strv_copy(from);
    sh_commands_free(&cmds);
}

/* The host a network request names is exactly what would be dialled: an
 * IP address, or localhost (always this machine's loopback).  The person
 * answering sees the address, so an answer reaches it even when it is a
 * loopback or private one (docs/network.md); a name could resolve to one
 * after the answer, so for a name only a rule naming it does. */
static bool host_is_the_address(const char *host)
{
    struct sockaddr_storage ss;
    return strcasecmp(host, "localhost") == 0 || netaddr_literal(host, 0, &ss);
}

/* What the dialog says about where an allow leads, for hosts an answer
 * would otherwise seem to allow and not: a loopback or private address,
 * or a name that may resolve to one.  NULL: nothing to say. */
static char *address_note(const gate_request *g)
{
    struct sockaddr_storage ss;
    if (strcasecmp(g->host, "localhost") == 0)
        return xstrdup("localhost is this machine (loopback): allowing lets the program reach the services running "
                       "on your machine");
    if (netaddr_literal(g->host, 0, &ss)) {
        const char *why = netaddr_special((struct sockaddr *)&ss);
        return why ? xasprintf("%s is %s: allowing lets the program reach it", g->host, why) : NULL;
    }
    return xasprintf("y and a reach %s at public addresses only; at a loopback or private one it needs a network_rule "
                     "naming it (p saves one)", g->host);
}

static gate_next refuse(gate_request *g, char *message)
{
    set_text(&g->message, message);
    g->state = GATE_REPLIED;
    return GATE_REFUSE;
}

static gate_next ask_or_cached(gate_request *g)
{
    char *key = gate_cache_key(g);
    bool cached = g->cache && gate_cache_has(g->cache, key);
    free(key);
    if (cached) {
        g->state = GATE_CACHED; /* launched as it is: an answer covers it */
        g->host_named = g->origin == GATE_NETWORK && host_is_the_address(g->host);
        return GATE_LAUNCH;
    }
    g->state = GATE_ASKED;
    return GATE_ASK;
}

/* A rule of rules names host exactly (no wildcard) and allows it. */
static bool host_named_by(const rules_t *rules, const char *host, rule_net_proto proto)
{
    for (size_t i = 0; rules && i < rules_network_count(rules); i++) {
        const rule_network *n = rules_network_get(rules, i);
        if (n->protocol == proto && n->decision == RULE_ALLOW && n->host[0] != '*' && rules_host_matches(n->host, host))
            return true;
    }
    return false;
}

/* A network request: the rules' deny, the session's deny set, the rules'
 * allow, the session's allow set, then a human (docs/network.md). */
static gate_next judge_network(gate_request *g, const rules_t *rules)
{
    const char *proto = rule_net_proto_name(g->net_proto);
    const char *just = NULL;
    rule_decision d = rules ? rules_network_decide(rules, g->host, g->net_proto, &just) : RULE_NONE;
    if (d == RULE_FORBIDDEN)
        return refuse(g, xasprintf("%s: a network_rule denies %s (%s)%s%s", not_run(g), g->host, proto,
                                   just ? ": " : "", just ? just : ""));
    char *key = gate_cache_key(g);
    bool denied = g->deny_cache && gate_cache_has(g->deny_cache, key);
    free(key);
    if (denied)
        return refuse(g, xasprintf("%s: %s (%s, port %d) was denied for this session", not_run(g), g->host, proto,
                                   g->port));
    if (d == RULE_ALLOW) {
        g->host_named = host_named_by(rules, g->host, g->net_proto);
        snprintf(g->verdict.reason, sizeof g->verdict.reason, "a network_rule allowing %s (%s)%s%s", g->host, proto,
                 just ? ": " : "", just ? just : "");
        g->state = GATE_WIDENED;
        return GATE_LAUNCH;
    }
    const char *why;
    char *cache_key = gate_cache_key(g);
    bool cached = g->cache && gate_cache_has(g->cache, cache_key);
    free(cache_key);
    if (cached) {
        g->state = GATE_CACHED; /* an answer for the session covers it */
        g->host_named = host_is_the_address(g->host);
        return GATE_LAUNCH;
    }
    if (!policy_can_ask(&g->policy, false, &why))
        return refuse(g, xasprintf("%s: %s is not allowed by a network_rule, and %s", not_run(g), g->host, why));
    set_text(&g->reason, d == RULE_PROMPT
                             ? xasprintf("a network_rule asks about %s%s%s", g->host, just ? ": " : "", just ? just : "")
                             : xasprintf("%s is not in your network rules", g->host));
    set_text(&g->persist_refusal, NULL);
    g->state = GATE_ASKED;
    return GATE_ASK;
}

gate_next gate_judge(gate_request *g, const rules_t *rules, const rules_t *defaults)
{
    if (g->origin == GATE_NETWORK)
        return judge_network(g, rules);
    policy_evaluate(rules, defaults, &g->policy, g->argv, g->sandbox, has_deny(g), &g->verdict);
    derive_persist(g);
    const policy_result *pr = &g->verdict;
    if (pr->verdict == VERDICT_FORBIDDEN)
        return refuse(g, xasprintf("%s: the exec policy forbids it: %s", not_run(g), pr->reason));
    if (pr->verdict == VERDICT_RUN && g->origin != GATE_ESCALATE) {
        g->state = GATE_WIDENED;
        return GATE_LAUNCH;
    }
    if (pr->verdict == VERDICT_RUN) {
        /* From inside a sandbox a request always goes to a human (docs/sandbox.md,
         * threat model), even when a rule allows the command: rules speak for
         * the agent's own requests, not for code running in the sandbox.
         * A policy that never asks refuses it instead. */
        const char *why;
        if (!policy_can_ask(&g->policy, true, &why))
            return refuse(g, xasprintf("%s: %s", not_run(g), why));
        set_text(&g->reason, xasprintf("asks to %s from inside session %d",
                                       g->sandbox == SANDBOX_ESCALATED ? "leave the sandbox"
                                                                       : "widen its sandbox",
                                       g->session));
    } else {
        set_text(&g->reason, xstrdup(pr->reason[0] ? pr->reason : "asks for approval"));
    }
    return ask_or_cached(g);
}

gate_next gate_answer(gate_request *g, approval_answer answer, const char *note)
{
    g->answer = answer;
    if (answer == ANSWER_ONCE || answer == ANSWER_SESSION || answer == ANSWER_PERSIST) {
        if (answer == ANSWER_SESSION && g->cache) {
            char *key = gate_cache_key(g);
            gate_cache_add(g->cache, key);
            free(key);
        }
        g->asked_human = true;
        /* "always" saves a rule naming this exact host; any allow of an
         * address the person saw reaches it. */
        g->host_named = g->origin == GATE_NETWORK && (answer == ANSWER_PERSIST || host_is_the_address(g->host));
        g->state = GATE_WIDENED;
        return GATE_LAUNCH;
    }
    g->state = GATE_REPLIED;
    if (answer == ANSWER_GONE)
        return GATE_DROP;
    if (g->origin == GATE_NETWORK && answer == ANSWER_FORBID && g->deny_cache) {
        /* d: denied for the session too (and persisted by the server). */
        char *key = gate_cache_key(g);
        gate_cache_add(g->deny_cache, key);
        free(key);
    }
    const char *what = answer == ANSWER_TIMEOUT ? "nobody approved it in time"
                       : answer == ANSWER_STOP  ? "the user denied it and asks you to stop and wait"
                       : answer == ANSWER_FORBID ? "the user denied it, from now on"
                                                : "the user denied it";
    bool has_note = note && *note;
    set_text(&g->message, xasprintf("%s: %s%s%s", not_run(g), what, has_note ? ". Note from the user: " : "",
                                    has_note ? note : ""));
    /* A retry declined: the failed run's own reply stands, and carries this. */
    return g->origin == GATE_RETRY ? GATE_REPLY : GATE_DENY;
}

/* Append copies of b to the list *a. */
static void strv_extend(char ***a, char *const *b)
{
    size_t na = 0, nb = 0;
    while (*a && (*a)[na])
        na++;
    while (b && b[nb])
        nb++;
    if (!nb)
        return;
    *a = xrealloc(*a, (na + nb + 1) * sizeof **a);
    for (size_t i = 0; i < nb; i++)
        (*a)[na + i] = xstrdup(b[i]);
    (*a)[na + nb] = NULL;
}

void gate_widen(const gate_request *g, gate_launch *out)
{
    static char *const everything[] = {"/", NULL};
    memset(out, 0, sizeof *out);
    launch_spec *s = &out->spec;
    s->argv = g->argv;
    s->cwd = g->cwd;
    s->workspace = g->workspace;
    s->tty = g->tty;
    s->agent = true;
    s->policy = &g->policy;
    s->profile = g->base.profile;
    s->write = strv_copy(g->base.write);
    s->read = strv_copy(g->base.read);
    s->deny = strv_copy(g->base.deny);
    s->net = g->base.net;
    s->allow_home_workspace = g->base.allow_home;
    if (g->sandbox == SANDBOX_ESCALATED) {
        if (has_deny(g)) {
            strv_extend(&s->write, everything);
            s->net = SB_NET_FULL;
            out->keeps_sandbox = true;
            s->allow_home_workspace = true; /* "/" is writable: what a human approved */
        } else {
            s->profile = "full";
        }
    } else if (g->sandbox == SANDBOX_MORE_PERMISSIONS) {
        strv_extend(&s->write, g->write);
        s->resolved_write = g->write; /* resolved when the request came: bound from exactly there */
        if (g->network)
            s->net = SB_NET_FULL;
    }
}

void gate_launch_free(gate_launch *l)
{
    strv_free(l->spec.write);
    strv_free(l->spec.read);
    strv_free(l->spec.deny);
    memset(l, 0, sizeof *l);
}

void gate_launched(gate_request *g)
{
    g->state = GATE_LAUNCHED;
}

gate_next gate_after_run(gate_request *g, const gate_run *run)
{
    memset(&g->denial, 0, sizeof g->denial);
    if (g->origin != GATE_EXEC || g->state != GATE_LAUNCHED || g->sandbox == SANDBOX_ESCALATED)
        return GATE_REPLY;
    /* Never for a run the sandbox did not start (a setup failure is not a
     * denial), nor when nobody could answer: the requester would wait for
     * good.  What the sandbox refused is worked out in any case, for the
     * advice the requester gets. */
    if (run->unconfined || run->streamed || run->setup_failed)
        return GATE_REPLY;
    if (!safety_sandbox_denial(run->exit_code, run->output, run->len, g->cwd, run->write_roots, &g->denial))
        return GATE_REPLY;
    if (!run->someone_can_answer || !policy_can_ask(&g->policy, true, NULL))
        return GATE_REPLY;
    g->origin = GATE_RETRY;
    g->sandbox = SANDBOX_ESCALATED;
    g->failed_exit = run->exit_code;
    strv_free(g->persist);
    g->persist = NULL;
    set_text(&g->persist_refusal, xstrdup("a retry is answered for this run only"));
    char why[5000];
    safety_denial_text(&g->denial, why, sizeof why);
    set_text(&g->reason, xasprintf("it failed in the sandbox (exit %d) and looks like the sandbox stopped it (%s): "
                                   "run it once more without the sandbox?",
                                   run->exit_code, why));
    return ask_or_cached(g);
}

/* ---- the session cache ------------------------------------------------------ */

char *gate_cache_key(const gate_request *g)
{
    if (g->origin == GATE_NETWORK) {
        json_t *k = json_pack("{s:s, s:i, s:s, s:s, s:i}", "kind", "network", "session", g->session, "host",
                              g->host ? g->host : "", "protocol", rule_net_proto_name(g->net_proto), "port", g->port);
        char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(k);
        return s;
    }
    /* JSON makes the parts unambiguous (no separator can be forged). */
    json_t *k = json_pack("{s:s, s:i, s:o, s:s?, s:b, s:i, s:o, s:b}", "kind", gate_origin_kind(g->origin),
                          "session", g->session, "argv", proto_argv_json(g->argv), "cwd", g->cwd, "tty", g->tty,
                          "sandbox", (int)g->sandbox, "write", proto_argv_json(g->write), "network", g->network);
    char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    return s;
}

bool gate_cache_has(const gate_cache *c, const char *key)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0)
            return true;
    return false;
}

void gate_cache_add(gate_cache *c, const char *key)
{
    if (gate_cache_has(c, key))
        return;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->keys = xrealloc(c->keys, c->cap * sizeof *c->keys);
    }
    c->keys[c->n++] = xstrdup(key);
}

void gate_cache_free(gate_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->keys[i]);
    free(c->keys);
    memset(c, 0, sizeof *c);
}

/* ---- what clients show ------------------------------------------------------- */

/* Who waits for the answer, and how its wait ends: every screen shows it
 * beside the request's age.  A request whose requester went away is
 * withdrawn at once, so what is shown is always still waiting; what corral
 * cannot see is a client that gives up on its call without saying so,
 * which progress prevents where the client asked for it. */
static char *waiter_text(const gate_request *g)
{
    switch (g->origin) {
    case GATE_EXEC:
    case GATE_RETRY:
        if (g->mcp_progress_s > 0)
            return xasprintf("its MCP call is open, kept alive by progress every %d s", g->mcp_progress_s);
        if (g->mcp_progress_s == 0)
            return xstrdup("its MCP call is open, without progress (the client asked for none): the client's own "
                           "timeout may end it without telling corral");
        return xstrdup("its client waits (closing it withdraws the request)");
    case GATE_ESCALATE:
        return xstrdup("corral escalate waits in the session (ending it withdraws the request)");
    case GATE_HOOK:
        return xstrdup("the session's shell holds the typed line (Ctrl-C there withdraws the request)");
    case GATE_NETWORK:
        return xstrdup("the proxy holds the program's connection (ending the program withdraws the request)");
    }
    return xstrdup("?");
}

json_t *gate_request_json(const gate_request *g)
{
    static const char *const sandbox_names[] = {"default", "escalated", "more"};
    json_t *o = json_pack("{s:s, s:s, s:o, s:s?, s:s?, s:b}", "kind", gate_origin_kind(g->origin), "client",
                          g->requester ? g->requester : "user", "argv", proto_argv_json(g->argv), "cwd", g->cwd,
                          "workspace", g->workspace, "tty", g->tty);
    /* The one quoting every client shows (a word with a quote stays one
     * word, invisible characters are made visible, nothing is cut). */
    char *command = quote_argv_display(g->argv);
    json_object_set_new(o, "command", json_string(command));
    free(command);
    if (g->session)
        json_object_set_new(o, "session", json_integer(g->session));
    if (g->session_name)
        json_object_set_new(o, "session_name", json_string(g->session_name));
    if (g->failed_session) {
        json_object_set_new(o, "failed_session", json_integer(g->failed_session));
        json_object_set_new(o, "failed_session_name", json_string(g->failed_session_name ? g->failed_session_name : ""));
    }
    if (g->line)
        json_object_set_new(o, "line", json_string(g->line));
    char *waiter = waiter_text(g);
    json_object_set_new(o, "waiter", json_string(waiter));
    free(waiter);
    if (g->origin == GATE_NETWORK) {
        json_object_set_new(o, "host", json_string(g->host));
        json_object_set_new(o, "port", json_integer(g->port));
        json_object_set_new(o, "protocol", json_string(rule_net_proto_name(g->net_proto)));
        if (g->running)
            json_object_set_new(o, "running", json_string(g->running));
        char *note = address_note(g);
        if (note)
            json_object_set_new(o, "address", json_string(note));
        free(note);
        /* What each answer makes: a (this host for the session), p (a
         * network_rule allow), d (a network_rule deny, and for the session). */
        char *allow = xasprintf("network_rule(host=\"%s\", protocol=\"%s\", decision=\"allow\")", g->host,
                                rule_net_proto_name(g->net_proto));
        char *deny = xasprintf("network_rule(host=\"%s\", protocol=\"%s\", decision=\"deny\")", g->host,
                               rule_net_proto_name(g->net_proto));
        json_object_set_new(o, "network_rule_allow", json_string(allow));
        json_object_set_new(o, "network_rule_deny", json_string(deny));
        free(allow);
        free(deny);
    }
    gate_launch l;
    gate_widen(g, &l);
    json_object_set_new(o, "permissions",
                        json_pack("{s:s, s:o, s:b, s:s, s:b}", "sandbox", sandbox_names[g->sandbox], "write",
                                  proto_argv_json(g->write), "network", g->network, "profile",
                                  l.spec.profile ? l.spec.profile : "default", "keeps_sandbox", l.keeps_sandbox));
    gate_launch_free(&l);
    if (g->justification)
        json_object_set_new(o, "justification", json_string(g->justification));
    if (g->reason)
        json_object_set_new(o, "reason", json_string(g->reason));
    if (g->verdict.rule[0])
        json_object_set_new(o, "rule", json_string(g->verdict.rule));
    if (g->persist)
        json_object_set_new(o, "prefix_rule", proto_argv_json(g->persist));
    else if (g->persist_refusal)
        json_object_set_new(o, "prefix_rule_refused", json_string(g->persist_refusal));
    const char *hints[8];
    size_t n = safety_risk_hints(g->argv, g->workspace, g->write, g->sandbox == SANDBOX_ESCALATED, g->network, hints,
                                 8);
    json_t *risks = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(risks, json_string(hints[i]));
    json_object_set_new(o, "risks", risks);
    return o;
}
