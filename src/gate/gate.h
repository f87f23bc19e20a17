/*
 * gate.h - the one gate (docs/ARCHITECTURE.md, "The gate"): every way past a
 * sandbox is one request type through one state machine.
 *
 *   NEW -> judged -> CACHED ----------------------> WIDENED -> LAUNCHED
 *                 -> ASKED --(yes: y a p)---------^        \-> (retry) ASKED
 *                 -> (refused)        \--(no, timeout, gone)--> REPLIED
 *
 * Origins: an exec request's own flags (the CLI's corral exec, an agent's
 * exec_command), corral escalate and the shell hooks' checks from inside a
 * session, and the one retry without the sandbox after a sandbox denial.
 * Whatever the origin, the policy judges the same fields, the dialog shows
 * them, the session cache keys on them, and gate_widen turns them into the
 * sandbox that runs: the paths are the server's resolved ones (pathres.h),
 * and a request from inside a session keeps that session's workspace and
 * its own deny entries.
 *
 * Pure: no loop, no sockets, no server.  The caller (gate_server.c) acts
 * on what each step returns: queue the request for a human, launch it,
 * reply.  Unit tests drive every origin x policy x rule x answer.
 *
 * Included by src/gate/ and src/server/.
 */
#ifndef CORRAL_GATE_H
#define CORRAL_GATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "config/sbconf.h"
#include "gate/answer.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "policy/safety.h"

typedef enum gate_origin {
    GATE_EXEC,     /* an exec request's flags (corral exec, exec_command) */
    GATE_ESCALATE, /* corral escalate, from inside a session */
    GATE_HOOK,     /* a shell hook's check of a typed line, from inside a session */
    GATE_RETRY,    /* the one retry without the sandbox after a sandbox denial */
    GATE_NETWORK,  /* a sandboxed process connecting to a host through the proxy */
} gate_origin;

typedef enum gate_state {
    GATE_NEW,      /* filled in, not judged yet */
    GATE_CACHED,   /* an earlier "for this session" answer covers it */
    GATE_ASKED,    /* waiting for a human */
    GATE_WIDENED,  /* allowed or approved: gate_widen says how it runs */
    GATE_LAUNCHED, /* running (the caller said so with gate_launched) */
    GATE_REPLIED,  /* settled without running: refused, denied, withdrawn */
} gate_state;

/* What the caller does next. */
typedef enum gate_next {
    GATE_REFUSE, /* nothing runs: reply g->message (forbidden, or it could not be asked) */
    GATE_ASK,    /* queue it for a human (gate_request_json), then gate_answer */
    GATE_LAUNCH, /* run it as gate_widen says */
    GATE_DENY,   /* nothing runs: a human said no, or nobody answered in time; reply g->message */
    GATE_DROP,   /* the requester went away: nothing runs, nobody to tell */
    GATE_REPLY,  /* after a run: its own reply stands (no retry) */
} gate_next;

/* "For this session" answers of one requester (a connection or a
 * session): exact keys. */
typedef struct gate_cache {
    char **keys;
    size_t n, cap;
} gate_cache;

typedef struct gate_request {
    gate_origin origin;
    /* Who asks; where its "for this session" answers are kept. */
    char *requester;    /* client name: "user", "codex" ... */
    int session;        /* the session it comes from, or 0 */
    char *session_name; /* for the dialog, or NULL */
    /* GATE_RETRY: the run that failed in the sandbox, for the dialog (its
     * session has ended: nothing of the answer is kept with it). */
    int failed_session;
    char *failed_session_name;
    gate_cache *cache;  /* not owned; NULL: nothing is remembered */
    /* What would run, exactly: argv as given, the paths resolved. */
    char **argv;
    char *line;         /* GATE_HOOK: the typed line (argv is SHELL -c LINE) */
    char *cwd;          /* canonical */
    char *workspace;    /* canonical: the session's, never a request's claim */
    bool tty;
    launch_sandbox base;
    bool config_deny;   /* [sandbox] deny entries are configured */
    policy_settings policy;
    /* What it asks for on top of base. */
    sandbox_request sandbox;
    char **write;       /* extra write roots, canonical */
    bool network;
    /* GATE_NETWORK: where it connects (host normalised), and the session's
     * hosts denied "for this session" (d) beside its allowed ones (cache). */
    char *host;
    int port;
    rule_net_proto net_proto;
    gate_cache *deny_cache;  /* not owned */
    char *running;           /* the command running in the session, for the dialog, or NULL */
    /* GATE_EXEC (and its retry) through corral mcp: the client's call is
     * kept alive by progress every mcp_progress_s seconds (0: the client
     * asked for none); -1: not an MCP call. */
    int mcp_progress_s;
    /* The requester's own words (sanitized by the caller). */
    char *justification;
    char **prefix_rule; /* its suggestion for "always" */
    /* Worked out by the gate. */
    gate_state state;
    policy_result verdict;
    char *reason;          /* why it asks (the dialog's "why") */
    char *message;         /* for the requester when nothing runs */
    char **persist;        /* the rule "p" saves, or NULL */
    char *persist_refusal; /* why "p" cannot be offered */
    int failed_exit;       /* GATE_RETRY: the sandboxed run's exit code */
    safety_denial denial;  /* after a run: what the sandbox refused (kind DENIAL_NONE: nothing seen) */
    bool asked_human;      /* a human answered yes (not the cache or a rule) */
    bool host_named;       /* GATE_NETWORK, allowed: a rule names this exact host (a local service may be reached) */
    approval_answer answer;
} gate_request;

/* A fresh request of origin (every list empty, net -1, policy on-request). */
void gate_request_init(gate_request *g, gate_origin origin);
void gate_request_free(gate_request *g);

/* Judge g with rules (the user's and a trusted workspace's, may be NULL)
 * and defaults (corral's built-in rules, may be NULL): GATE_REFUSE,
 * GATE_ASK or GATE_LAUNCH (the latter also from the cache). */
gate_next gate_judge(gate_request *g, const rules_t *rules, const rules_t *defaults);

/* The human's answer to GATE_ASK (note: theirs, for the requester, may be
 * NULL): GATE_LAUNCH (a "session" answer is remembered in g->cache),
 * GATE_DENY or GATE_DROP; for a GATE_RETRY a "no" is GATE_REPLY (the first
 * run's reply stands) with g->message saying which answer it was and the
 * note. */
gate_next gate_answer(gate_request *g, approval_answer answer, const char *note);

/* How g runs once allowed: the profile and the entries on top of it. */
typedef struct gate_launch {
    /* What runs: the request's command, directory and terminal, its
     * sandbox widened (write, read and deny owned here, the rest borrowed
     * from the request); allow_home_workspace when the user said so for
     * the session, or a human approved "everywhere".  The port adds the
     * session's name and size and hands it to the server. */
    launch_spec spec;
    bool keeps_sandbox;  /* escalated, but deny entries keep a sandbox (writable everywhere else) */
} gate_launch;
/* The one place a request is widened: base, plus what was asked and
 * allowed.  Escalated: no sandbox, unless deny entries (the session's
 * own or the config's) keep one with everything else writable and the
 * network on.  Works in any state (the server tries the plan before it
 * asks a human, so a request that cannot run never reaches the dialog). */
void gate_widen(const gate_request *g, gate_launch *out);
void gate_launch_free(gate_launch *l);
/* The caller started it. */
void gate_launched(gate_request *g);

/* What a finished sandboxed exec looked like, for the denial retry. */
typedef struct gate_run {
    int exit_code;
    const char *output;       /* what the requester would get */
    size_t len;
    bool setup_failed;        /* the sandbox never started the command */
    bool streamed;            /* output went to the requester as it came */
    bool unconfined;          /* it ran without a sandbox */
    char *const *write_roots; /* where its sandbox let it write */
    bool someone_can_answer;  /* a screen is attached, or a timeout answers */
} gate_run;
/* After a launched GATE_EXEC: GATE_ASK for the one retry without the
 * sandbox (g becomes GATE_RETRY, escalated), GATE_LAUNCH (the retry was
 * answered "for this session" before), or GATE_REPLY.  Either way
 * g->denial says what the sandbox refused, if anything (for the advice
 * the requester gets). */
gate_next gate_after_run(gate_request *g, const gate_run *run);

/* The exact key of g in the session cache: argv, cwd, tty, what it asks
 * for (resolved), the origin's kind and the session; for a network request
 * its host (lower case), protocol and port. */
char *gate_cache_key(const gate_request *g);
bool gate_cache_has(const gate_cache *c, const char *key);
void gate_cache_add(gate_cache *c, const char *key);
void gate_cache_free(gate_cache *c);

/* "exec", "escalate", "command", "retry", "network". */
const char *gate_origin_kind(gate_origin o);

/* g as the queue shows it to clients (docs/protocol.md, "approval"):
 * kind, client, argv, cwd, workspace, tty, session, permissions, why,
 * the rule "p" would save, risk hints.  The queue adds id and times. */
json_t *gate_request_json(const gate_request *g);

#endif
