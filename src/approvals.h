/*
 * approvals.h - the queue of requests waiting for a human (DESIGN section
 * 6): every path that needs approval submits here; every attached client
 * hears of each request, the first answer wins, and the others are told it
 * is done.  Each request and each decision is appended to approvals.jsonl
 * (and the session's events.jsonl when there is one) and fsync'd before the
 * decision takes effect.  Answers "for this session" go to a cache keyed by
 * the exact request.  Server-internal.
 */
#ifndef CORRAL_APPROVALS_H
#define CORRAL_APPROVALS_H

#include "policy.h"
#include "server_int.h"

typedef enum approval_answer {
    ANSWER_ONCE,    /* y: this time */
    ANSWER_SESSION, /* a: this exact request, for the rest of the session */
    ANSWER_PERSIST, /* p: a prefix rule in default.rules */
    ANSWER_DENY,    /* d / e: deny (with a note for the agent) */
    ANSWER_STOP,    /* n / Esc: deny and stop (the requester's process ends) */
    ANSWER_TIMEOUT, /* nobody answered in [approvals] timeout: deny */
    ANSWER_GONE,    /* the requester went away */
} approval_answer;

typedef struct approval approval_t;
typedef void (*approval_fn)(server_t *srv, approval_t *a, approval_answer answer, const char *note, void *user);

struct approval {
    link_t node; /* in server->approvals while pending */
    int id;
    int session;        /* the session it concerns, 0 when none exists yet */
    char *session_name; /* or NULL */
    char *client;       /* who asks: "codex", "user" ... */
    char *kind;         /* "exec", "escalate", "command", "retry" */
    char **argv;        /* exactly as it will run */
    char *cwd;
    bool tty;
    sandbox_request sandbox;
    char **write;       /* extra write roots asked for */
    bool network;
    char *justification; /* the agent's reason, or NULL */
    char *reason;        /* why the policy asks */
    char *rule;          /* the rule that asked, or NULL */
    char **prefix_rule;  /* suggested for "always" (p), or NULL */
    char *cache_key;
    link_t *cache;       /* where a session answer is kept (a connection's or a session's list) */
    double created;      /* wall clock */
    uv_timer_t timer;    /* [approvals] timeout */
    approval_fn fn;
    void *user;
    server_t *srv;
};

/* A new request with argv copied; fill the other fields, then submit. */
approval_t *approval_new(server_t *srv, char *const *argv, const char *cwd, const char *client);
/* Queue it and tell every subscribed client; it takes ownership.  fn is
 * called once with the answer. */
void approval_submit(server_t *srv, approval_t *a);
/* Answer pending request id.  0, or -1 with a message (no such request). */
int approval_answer_id(server_t *srv, int id, approval_answer answer, const char *note, const char *by, char *err,
                       size_t errlen);
/* The same, logging the key that chose it (a screen's "y", "Enter"...). */
int approval_answer_key(server_t *srv, int id, approval_answer answer, const char *note, const char *by,
                        const char *key, char *err, size_t errlen);
/* The requester of a is gone: drop it, telling clients it is done. */
void approval_withdraw(server_t *srv, approval_t *a);

/* The exact key of a request, for the session cache. */
char *approval_key(char *const *argv, const char *cwd, bool tty, sandbox_request sb, char *const *write,
                   bool network, const char *env);
bool approval_cached(link_t *cache, const char *key);
void approval_cache_free(link_t *cache);

json_t *approval_json(const approval_t *a);
/* Some request about session id waits for an answer. */
bool approvals_pending_for_session(server_t *srv, int id);
/* Every pending request, oldest first. */
json_t *approvals_json(server_t *srv);
const char *approval_answer_name(approval_answer a);
/* "once", "session", "persist", "deny", "stop": 0 or -1. */
int approval_answer_parse(const char *s, approval_answer *out);

/* Load the rules (built-in defaults, then $XDG_CONFIG_HOME/corral/rules/
 * *.rules in name order) into srv->rules; a file with an error is skipped
 * and its error kept in srv->rules_error (shown by clients). */
void approvals_load_rules(server_t *srv);
/* The rules for a request run in cwd: the user's, plus the workspace's
 * .corral/rules when the user trusts it (rules_ws.h); what changed on disk
 * is reloaded first, and srv->rules_error follows.  An untrusted workspace
 * with rules is noted in the server log, once. */
const rules_t *approvals_rules_for(server_t *srv, const char *cwd);
void approvals_shutdown(server_t *srv);

#endif
