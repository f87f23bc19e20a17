/*
 * rules.h - the exec-policy rules language (Codex CLI's Starlark subset,
 * docs/corral.rules.5) and matching.
 *
 * A rules file is a sequence of calls of three builtins:
 *   prefix_rule(pattern=[...], decision="allow"|"prompt"|"forbidden",
 *               justification="...", match=[...], not_match=[...])
 *   host_executable(name="git", paths=["/usr/bin/git"])
 *   network_rule(host="example.com", protocol="https", decision="allow")
 * Loading is all-or-nothing per file; every error names FILE:LINE:COLUMN.
 * A loaded policy is every rule of every file, in load order.
 *
 * No curses, no server: the CLI, the server and the tests share this.
 *
 * Included by src/policy/, src/net/, src/server/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_RULES_H
#define CORRAL_RULES_H

#include <stdbool.h>
#include <stddef.h>

/* Ordered by severity: the strictest wins. */
typedef enum rule_decision { RULE_NONE = 0, RULE_ALLOW, RULE_PROMPT, RULE_FORBIDDEN } rule_decision;

typedef struct rules rules_t; /* a loaded policy: prefix rules, host executables, network rules */

rules_t *rules_new(void);
void rules_free(rules_t *r);

/* What one file may hold.  Real files are far below these; the bounds keep
 * a hostile or broken file from costing the server more than a moment:
 * loading is linear in the file's size, whatever it holds. */
#define RULES_MAX_FILE_BYTES (1024 * 1024)
#define RULES_MAX_NESTING 16             /* lists inside lists */
#define RULES_MAX_ARGS 16                /* arguments of one call */
#define RULES_MAX_ALTERNATIVES 1024      /* of one pattern element */
#define RULES_MAX_EXAMPLES 256           /* match plus not_match of one rule */
#define RULES_MAX_PATHS 1024             /* of one host_executable */
#define RULES_MAX_HOST_EXECUTABLES 1024  /* host_executable calls of one file */
#define RULES_MAX_TOKENS 200000          /* pattern strings of one file, once each
                                            alternative program has its own rule */

/* Parse and add one file's text (name is used in messages).  0, or -1 with
 * "NAME:LINE:COLUMN: what was wrong" in err and r unchanged. */
int rules_load_text(rules_t *r, const char *name, const char *text, char *err, size_t errlen);
/* The same for text of len bytes (a NUL byte in it is an error). */
int rules_load_buffer(rules_t *r, const char *name, const char *text, size_t len, char *err, size_t errlen);
/* The same for a file on disk (all-or-nothing).  Only a regular file of at
 * most RULES_MAX_FILE_BYTES is read (never a FIFO or a device, which could
 * block or never end); anything else is an error "PATH: why". */
int rules_load_file(rules_t *r, const char *path, char *err, size_t errlen);
/* Read a rules file the way rules_load_file does (symlinks followed unless
 * nofollow): its bytes in *text (NUL-terminated, free it) and *len, or -1
 * with "PATH: why" in err. */
int rules_read_file(const char *path, bool nofollow, char **text, size_t *len, char *err, size_t errlen);

/* One matched prefix rule.  prefix: the command tokens that matched (for a
 * resolved host executable the first is the basename); justification and
 * its length (it may hold a NUL) point into the policy; resolved_program is
 * the normalised absolute program that fell back to its basename's rules. */
typedef struct rule_match {
    char **prefix;
    size_t n;
    rule_decision decision;
    const char *justification; /* or NULL */
    size_t justification_len;
    const char *resolved_program; /* or NULL */
} rule_match;

/* Every match for argv (NULL-terminated) in rule order; returns the count,
 * *out allocated (free with rules_matches_free; NULL when 0).  With
 * resolve_host_executables, an absolute argv[0] without exact matches falls
 * back to the rules of its basename, restricted by host_executable(). */
size_t rules_match(const rules_t *r, char *const *argv, bool resolve_host_executables, rule_match **out);
void rules_matches_free(rule_match *m, size_t n);
/* The strictest decision of m (forbidden > prompt > allow); RULE_NONE if n == 0. */
rule_decision rules_decide(const rule_match *m, size_t n);

/* What `codex execpolicy check` prints for argv, byte for byte, with the
 * final '\n' (compact, or serde_json's pretty format).  Free it. */
char *rules_check_json(const rules_t *r, char *const *argv, bool resolve, bool pretty);
/* "allow", "prompt", "forbidden" ("none" for RULE_NONE). */
const char *rule_decision_name(rule_decision d);

/* Append `prefix_rule(pattern=["tok", ...], decision="allow")` to path
 * (creating its directories) under an flock, unless that exact line is
 * already there; tokens JSON-quoted as Codex does.  0, or -1 with err. */
int rules_append_prefix_rule(const char *path, char *const *tokens, size_t n, char *err, size_t errlen);

/* ---- network rules --------------------------------------------------------------- */

typedef enum rule_net_proto { RULE_NET_HTTP, RULE_NET_HTTPS, RULE_NET_SOCKS5_TCP, RULE_NET_SOCKS5_UDP } rule_net_proto;

typedef struct rule_network {
    char *host; /* normalised: lower case, no trailing dot, no port, no []; may start with *. or **. */
    rule_net_proto protocol;
    rule_decision decision;
    char *justification; /* or NULL */
} rule_network;

/* "http", "https" (also "https_connect", "http-connect"), "socks5_tcp",
 * "socks5_udp": 0, or -1 for anything else. */
int rule_net_proto_parse(const char *s, rule_net_proto *out);
const char *rule_net_proto_name(rule_net_proto p); /* canonical: http, https, socks5_tcp, socks5_udp */

/* A host normalised as network_rule does (trimmed, port and IPv6 brackets
 * stripped, trailing dots trimmed, ASCII lower case); NULL with err when it
 * is empty, has a scheme, path, query, fragment, whitespace or a wildcard. */
char *rules_normalize_host(const char *raw, char *err, size_t errlen);

/* The same for a network_rule's host, which may also be corral's
 * "*.example.com" (subdomains) or "**.example.com" (the domain and its
 * subdomains). */
char *rules_normalize_host_pattern(const char *raw, char *err, size_t errlen);
/* A normalised host against a rule's host (exact, or one of the globs). */
bool rules_host_matches(const char *pattern, const char *host);

size_t rules_network_count(const rules_t *r);
const rule_network *rules_network_get(const rules_t *r, size_t i);
/* The strictest decision of the network rules for host (normalised here)
 * and protocol, RULE_NONE when none names them; *justification (if not
 * NULL) gets the first justification among the rules of that decision. */
rule_decision rules_network_decide(const rules_t *r, const char *host, rule_net_proto proto,
                                   const char **justification);

/* Append `network_rule(host="h", protocol="p", decision="allow"|"deny"
 * [, justification="..."])` the same way (decision: RULE_ALLOW writes
 * "allow", RULE_FORBIDDEN "deny", RULE_PROMPT "prompt"). */
int rules_append_network_rule(const char *path, const char *host, rule_net_proto proto, rule_decision decision,
                              const char *justification, char *err, size_t errlen);

/* Counts, for callers that show what was loaded. */
size_t rules_prefix_count(const rules_t *r);
size_t rules_host_executable_count(const rules_t *r);

#endif
