/*
 * safety.h - the exec policy's heuristics where no rule matched
 * (reference/codex.md 4.5-4.6): commands known to be safe (read-only, no
 * way to run another program or write a file through their arguments), and
 * commands known to be dangerous (a forced rm, also under sudo or anywhere
 * in a shell script).  git is never known-safe: `git status` can run
 * helpers a repository configures (core.fsmonitor).
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
 * (reference/codex.md 5, is_likely_sandbox_denied): not for exit 0; yes
 * when the output names a denial ("operation not permitted", "permission
 * denied", "read-only file system", "seccomp", "sandbox", "landlock",
 * "failed to write file", any case); else not for 2, 126, 127; yes for
 * 159 (SIGSYS).  *why receives the keyword found, or NULL. */
bool safety_likely_sandbox_denied(int exit_code, const char *output, size_t len, const char **why);

#endif
