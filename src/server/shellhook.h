/*
 * shellhook.h - shell integration (escalation path 3 of the policy):
 * interactive bash and zsh sessions load a hook that sends each command
 * line to the server (corral __hook-check, over the session channel)
 * before it runs.  The scripts live in src/shell/ and are compiled in;
 * the server writes them to its runtime directory, and sandboxes see them
 * read-only at SB_TOOLS_DIR/shell.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_SHELLHOOK_H
#define CORRAL_SHELLHOOK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct shellhook_file {
    const char *name;    /* relative to the hook directory */
    const char *content;
} shellhook_file;

/* The scripts (generated shell_scripts.c); ends with {NULL, NULL}. */
extern const shellhook_file shellhook_files[];

/* Write the scripts under dir (made if missing).  0, or -1 with err. */
int shellhook_install(const char *dir, char *err, size_t errlen);

/* How to start argv with the hook loaded from hookdir (the path as the
 * command sees it): for an interactive bash (argv is just the shell, or
 * the shell and -i), a new argv with --rcfile; for zsh, the same argv
 * and ZDOTDIR set in *env (NAME=VALUE strings, NULL-terminated, to free
 * with shellhook_free).  false: not a shell it knows, nothing to free. */
bool shellhook_apply(char *const *argv, const char *hookdir, char ***new_argv, char ***env);
void shellhook_free(char **new_argv, char **env);

#endif
