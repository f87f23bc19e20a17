/*
 * safety.h - the exec policy's heuristics where no rule matched
 * (the Codex CLI's lists): commands known to be safe (read-only, no
 * way to run another program or write a file through their arguments), and
 * commands known to be dangerous (a forced rm, also under sudo or anywhere
 * in a shell script).  git is never known-safe: `git status` can run
 * helpers a repository configures (core.fsmonitor).
 *
 * Included by src/policy/ and src/gate/.
 */
#ifndef CORRAL_SAFETY_H
#define CORRAL_SAFETY_H

#include <stdbool.h>
#include <stddef.h>

/* argv is known to be safe; a `bash|sh|zsh -c|-lc SCRIPT` is when its
 * script is plain (shsplit.h) and every command in it is. */
bool safety_known_safe(char *const *argv);
/* argv is dangerous: rm with a force flag (before "--"), sudo of a
 * dangerous command, or a shell script with such a literal command
 * anywhere. */
bool safety_dangerous(char *const *argv);

/* A sandboxed command's failure looks like the sandbox stopped it
 * (the Codex CLI's is_likely_sandbox_denied): not for exit 0; yes
 * when the output names a denial ("operation not permitted", "permission
 * denied", "read-only file system", "seccomp", "sandbox", "landlock",
 * "failed to write file", any case); else not for 2, 126, 127; yes for
 * 159 (SIGSYS).  *why receives the keyword found, or NULL. */
bool safety_likely_sandbox_denied(int exit_code, const char *output, size_t len, const char **why);

/* What a sandboxed run's output shows the sandbox refused. */
typedef enum safety_denial_kind {
    DENIAL_NONE,
    DENIAL_READONLY, /* "read-only file system": the sandbox's read-only view */
    DENIAL_PATH,     /* EACCES/EPERM on a path outside the write roots the host allows */
    DENIAL_CALL,     /* "operation not permitted" with no path: a refused call */
    DENIAL_SIGSYS,   /* killed by SIGSYS */
} safety_denial_kind;

typedef struct safety_denial {
    safety_denial_kind kind;
    char path[4096];    /* the path refused (as the host sees it), when the line names one */
    bool inside_roots;  /* DENIAL_READONLY: the path is inside a write root (a protected one) */
    char line[240];     /* the output line that shows it */
} safety_denial;

/* The stricter test the gate uses before it offers a retry without the
 * sandbox, and before it explains a refusal: safety_likely_sandbox_denied,
 * and the output shows a failure the sandbox itself causes (a keyword alone
 * is not enough: "Permission denied (publickey)" is not the sandbox's
 * doing):
 *  - "read-only file system": the sandbox's read-only views (a host file
 *    system is not read-only where a command writes);
 *  - "operation not permitted" with no path on its line: a call the
 *    sandbox's filter refused (ptrace, mount, a socket under --net off);
 *  - "permission denied" or "operation not permitted" naming a path (as
 *    written, or relative to cwd) that lies outside every write root and
 *    that the user could write (or read) on the host;
 *  - exit 159 (SIGSYS).
 * *d receives what was found.  output need not be NUL-terminated. */
bool safety_sandbox_denial(int exit_code, const char *output, size_t len, const char *cwd,
                           char *const *write_roots, safety_denial *d);
/* Why d looks like the sandbox's doing, for a dialog. */
void safety_denial_text(const safety_denial *d, char *out, size_t outlen);
/* One line for whoever ran it: what the sandbox refused and how to ask for
 * it (--add-write DIR, --add-net, require_escalated, corral escalate). */
void safety_denial_advice(const safety_denial *d, char *out, size_t outlen);

/* A rule derived from a request ("p": always allow this prefix) must not
 * allow every program an interpreter, a shell or a wrapper would run:
 * false (with *why) for a prefix that starts with one (bash, python3,
 * node -e, env, sudo, xargs ...), and for an empty one. */
bool safety_rule_prefix_allowed(char *const *prefix, char *why, size_t whylen);

/* Risk hints for an approval dialog, worked out on the server so every
 * client agrees: "runs without the sandbox", "writes outside the
 * workspace", "touches .git", "sudo", "pipes into a shell", "network
 * access".  Fills out (static strings) and returns how many. */
size_t safety_risk_hints(char *const *argv, const char *workspace, char *const *write, bool escalated,
                         bool network, const char **out, size_t max);

#endif
