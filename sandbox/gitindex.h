/*
 * gitindex.h - the gitlinks (submodule entries, mode 160000) of a git index
 * file.  The user's `git status` looks into every populated gitlink and runs
 * git there, with that repository's config (its core.fsmonitor, say); a
 * sandbox can add a gitlink to the index, so each one names a repository
 * that must be protected, however deep it lies.
 *
 * The index is written by the sandbox: it is read with a bound check on
 * every field, never trusted to be well formed.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITINDEX_H
#define CORRAL_SB_GITINDEX_H

#include <stddef.h>

/* Largest index file read (git's own limit is the memory it has). */
#define SB_GITINDEX_MAX_BYTES (1ull << 31)

/* Called for every gitlink's path (relative to the work tree, checked:
 * no empty, ".", ".." or ".git" component, no leading or doubled '/').
 * A non-zero return stops the walk and is returned. */
typedef int (*sb_gitlink_fn)(void *user, const char *path);

/* Parse index text: versions 2, 3 and 4, object names of hash_len bytes
 * (20 for SHA-1, 32 for SHA-256).  shared_hex receives the object name (in
 * hex) of the shared index a split index links to, or "" (give it
 * 2 * hash_len + 1 bytes).  0, fn's non-zero result, or -1 with err when
 * the text is not an index this reader fully understands (then the caller
 * cannot know every gitlink). */
int sb_gitindex_parse(const unsigned char *data, size_t len, size_t hash_len, sb_gitlink_fn fn, void *user,
                      char *shared_hex, char *err, size_t errlen);

/* The gitlinks of the index file at path, and of the shared index it links
 * to (a split index: "sharedindex.<hex>" beside it).  A missing index file
 * has none: 0.  Otherwise as sb_gitindex_parse. */
int sb_gitindex_gitlinks(const char *path, size_t hash_len, sb_gitlink_fn fn, void *user, char *err,
                         size_t errlen);

#endif
