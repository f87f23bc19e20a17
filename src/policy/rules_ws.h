/*
 * rules_ws.h - which exec-policy rules apply to a request, and a cache of
 * them (docs/corral.rules.5 "FILES"):
 *
 *   1. corral's built-in rules (consulted only where no other rule matches);
 *   2. the user's $XDG_CONFIG_HOME/corral/rules/NAME.rules, in name order;
 *   3. a workspace's WS/.corral/rules/NAME.rules, in name order, only when WS
 *      (the request's canonical working directory) is trusted and the files
 *      are still the ones the user trusted (trust.h: else none of them
 *      loads, and the error says what changed).
 *
 * A file with an error is left out, whole, and its FILE:LINE:COLUMN error
 * kept for clients to show.  The cache makes a request cost a few stat()s:
 * the user's rules, the trust list and each workspace's rules are reloaded
 * only when a file or its directory changed (time, size or inode).
 *
 * No server here: approvals.c holds one for the server; doctor uses the
 * listing functions.
 *
 * Included by src/policy/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_RULES_WS_H
#define CORRAL_RULES_WS_H

#include "policy/rules.h"

#include <stdbool.h>
#include <stdio.h>

/* corral's built-in rules and the name their messages use. */
extern const char rules_builtin_text[];
#define RULES_BUILTIN_NAME "(built-in rules)"

/* $XDG_CONFIG_HOME/corral/rules, and WS/.corral/rules.  Caller frees. */
char *rules_user_dir(void);
char *rules_workspace_dir(const char *ws);
/* The *.rules files of dir as paths, in name order, NULL-terminated (empty
 * when the directory does not exist).  Free with rules_dir_list_free. */
char **rules_dir_list(const char *dir);
void rules_dir_list_free(char **list);

typedef struct rules_ws rules_ws;

rules_ws *rules_ws_new(void);
void rules_ws_free(rules_ws *c);

/* corral's built-in rules (loaded on first use; a bug in them shows in
 * rules_ws_errors). */
const rules_t *rules_ws_builtin(rules_ws *c);

/* Load the user's rules now (after an amendment, say). */
void rules_ws_reload_user(rules_ws *c);
/* The user's rules as last loaded (owned by c; replaced by a reload). */
rules_t *rules_ws_user(rules_ws *c);

/* The rules for a request whose working directory is cwd: the user's, plus
 * the workspace's when it is trusted; reloads what changed first.  Owned
 * by c, valid until the next call.  *note (may be NULL) gets, once per
 * workspace, a message when an untrusted workspace has rules (ignored);
 * the caller frees it.  *errors_changed (may be NULL) tells whether the
 * error text (rules_ws_errors) changed. */
const rules_t *rules_ws_for(rules_ws *c, const char *cwd, char **note, bool *errors_changed);

/* Every error of the files left out: the user's, then the cached trusted
 * workspaces', one per line.  NULL when none; caller frees. */
char *rules_ws_errors(rules_ws *c);

/* For corral doctor: each rules file that would load for a request in cwd
 * (built-in, the user's, the workspace's when trusted), loaded in order,
 * with its error (FILE:LINE:COLUMN) if it fails; an untrusted workspace's
 * rules are named as ignored.  False when a file fails. */
bool rules_report(FILE *f, const char *cwd);

#endif
