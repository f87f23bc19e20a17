/*
 * gitconfig.h - reading git's config files the way git reads them, so that
 * the sandbox knows what a repository's config makes the user's git run:
 * which files it includes, where its hooks are, which programs it starts.
 * Nothing is ever written.
 *
 * Included by sandbox/ and src/snap/.
 */
#ifndef CORRAL_SB_GITCONFIG_H
#define CORRAL_SB_GITCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Larger config files are refused (git reads them, we could not vouch for
 * what they include). */
#define SB_GITCONFIG_MAX_BYTES (4u << 20)

/* One variable: section and key in lower case, subsection as written (NULL
 * without one; the old "[section.sub]" form gives it in lower case, as git
 * does), value NULL for a key without "=" (a boolean true).  A non-zero
 * return stops the parse and is returned. */
typedef int (*sb_gitconfig_fn)(void *user, const char *section, const char *subsection, const char *key,
                               const char *value);

/* Parse config text (name is for messages).  0 when every variable was
 * passed on, fn's non-zero result when it stopped, -1 with err naming the
 * line when the text is malformed (git refuses such a file too). */
int sb_gitconfig_parse_text(const char *text, size_t len, const char *name, sb_gitconfig_fn fn, void *user,
                            char *err, size_t errlen);

/* Parse the file at path.  A missing file, or one that is not a regular
 * file (git reads nothing useful from a directory or a FIFO), sets *absent
 * and returns 0 without calling fn.  -1 with err when it cannot be read, is
 * larger than SB_GITCONFIG_MAX_BYTES, or is malformed. */
int sb_gitconfig_parse_file(const char *path, sb_gitconfig_fn fn, void *user, bool *absent, char *err,
                            size_t errlen);

/* git's boolean: true for "true", "yes", "on", a non-zero number (with a
 * unit or not: "1k"), or NULL (a key without a value); false otherwise. */
bool sb_gitconfig_bool(const char *value);

#endif
