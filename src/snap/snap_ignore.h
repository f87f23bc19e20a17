/*
 * snap_ignore.h - git's ignore rules, read by the snapshot walker itself
 * (docs/snapshots.md, "What is left out"): the built-in excludes, the
 * [snapshots] exclude patterns and the workspace repository's
 * info/exclude, then each directory's .gitignore as the walk enters it.
 *
 * The snapshot never lets libgit2 read the work tree, so the rules are
 * matched here, with git's semantics: a pattern without a slash matches a
 * name at any depth below its file's directory, one with a slash is
 * anchored there, a trailing slash means directories only, "!" re-includes,
 * the last matching line of a file wins and a deeper .gitignore wins over
 * a shallower one, which wins over the exclude lists.  Wildcards follow
 * git's wildmatch ("*", "?", "[...]", "**" across directories).
 *
 * Every pattern here may come from a file a sandboxed process wrote: the
 * matcher is bounded (no backtracking blow-up on a hostile pattern) and a
 * file's size and line count are capped by the caller.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_IGNORE_H
#define CORRAL_SNAP_IGNORE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct snap_ignore snap_ignore;

/* An empty rule set. */
snap_ignore *snap_ignore_new(void);
void snap_ignore_free(snap_ignore *ig);

/* Add the lines of text (a .gitignore or an exclude list) whose patterns
 * are relative to directory base ("" for the workspace's top, else
 * "a/b" without a trailing slash).  Later calls take precedence over
 * earlier ones for paths both match, as a deeper .gitignore does over a
 * shallower one; so add the exclude lists first, then .gitignore files
 * from the top down. */
void snap_ignore_add(snap_ignore *ig, const char *base, const char *text, size_t len);

/* Forget every rule added since the mark (a directory the walk left). */
size_t snap_ignore_mark(const snap_ignore *ig);
void snap_ignore_pop(snap_ignore *ig, size_t mark);

/* Is path (workspace-relative, no trailing slash) ignored?  dir: it is a
 * directory.  Parents are not looked at: the walk does not enter an
 * ignored directory, as git does not. */
bool snap_ignore_match(const snap_ignore *ig, const char *path, bool dir);

/* git's wildmatch of pattern against text; pathname: "*" and "?" do not
 * match "/", and "**" between slashes matches any number of directories.
 * Exposed for its tests. */
bool snap_wildmatch(const char *pattern, const char *text, bool pathname);

#endif
