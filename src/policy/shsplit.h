/*
 * shsplit.h - what a shell script asks to run, for the exec policy
 * (as the Codex CLI splits and judges scripts).
 *
 * A command `bash|sh|zsh -c|-lc SCRIPT` is judged by the commands in its
 * script.  shsplit_plain() accepts only plain words and quoted strings
 * joined by && || ; | (and newlines): anything else (redirections,
 * expansions, substitutions, subshells, groups, control flow, background
 * jobs) makes the script "complex", to be judged as one unit.
 * shsplit_literal() is the tolerant reading used for danger: every command
 * made only of literal words, wherever it stands (inside if/for, pipes,
 * $(...)).
 *
 * Included by src/policy/ and src/gate/.
 */
#ifndef CORRAL_SHSPLIT_H
#define CORRAL_SHSPLIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sh_commands {
    char ***cmds; /* NULL-terminated argv arrays */
    size_t n;
} sh_commands;

/* argv is exactly [bash|sh|zsh (any directory), -c|-lc, SCRIPT]: the
 * script, else NULL. */
const char *shsplit_shell_script(char *const *argv);

/* The plain commands of script: 0, or 1 when it is complex (out empty). */
int shsplit_plain(const char *script, sh_commands *out);
/* Every literal command of script (never fails; may be empty). */
void shsplit_literal(const char *script, sh_commands *out);
void sh_commands_free(sh_commands *c);

#endif
