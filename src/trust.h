/*
 * trust.h - trusted workspaces (corral trust, docs/corral.rules.5): the
 * directories whose .corral/rules/ files the user has agreed to load.
 *
 * The list is $XDG_CONFIG_HOME/corral/trusted, one canonical absolute path
 * per line, no duplicates, rewritten whole (temporary file, fsync, rename)
 * under an advisory lock so concurrent `corral trust` calls lose nothing.
 * Trust is exact: a trusted directory's subdirectories are not trusted, so
 * rules an agent writes deeper in a workspace are never picked up.
 *
 * No server: the CLI, the server's rule cache and doctor share this.
 */
#ifndef CORRAL_TRUST_H
#define CORRAL_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/* $XDG_CONFIG_HOME/corral/trusted.  Caller frees. */
char *trust_file(void);

/* dir as an existing directory's canonical absolute path (symlinks
 * resolved).  NULL with "cannot trust DIR: why" in err. */
char *trust_canonical(const char *dir, char *err, size_t errlen);

/* The list in file order, NULL-terminated (empty when the file does not
 * exist); free with trust_list_free.  NULL with err when it cannot be read. */
char **trust_read(const char *file, char *err, size_t errlen);
void trust_list_free(char **list);
/* Whether canonical dir is on list. */
bool trust_listed(char *const *list, const char *dir);

/* Add canonical dir (*changed false when it was there already) or remove
 * it (*changed false when it was not there).  0, or -1 with err. */
int trust_add(const char *file, const char *dir, bool *changed, char *err, size_t errlen);
int trust_remove(const char *file, const char *dir, bool *changed, char *err, size_t errlen);

/* Whether the user trusts directory dir (canonicalised here); false when
 * it does not exist or the list cannot be read. */
bool trust_is_trusted(const char *dir);

#endif
