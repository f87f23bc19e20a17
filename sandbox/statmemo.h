/*
 * statmemo.h - lstat()'s answers kept for one plan compile.
 *
 * A compile asks about the same paths many times: every prefix of every
 * protected path for a writable symlink, the agent configuration and the
 * parts of .git once when they are found, again when they are made
 * read-only and again in the final checks; the git protection asks about
 * the same directories for every path under them.  One compile is one
 * moment of the host (what it decides is pinned later by file
 * descriptors, never by these names), so the first answer for a path
 * stands for the rest of that compile, failures (with their errno)
 * included.
 *
 * What may be kept: only lstat() (the last component not followed) of an
 * absolute path, keyed by the exact string (a trailing slash or "." makes
 * another key, as it makes another question for the kernel).  A relative
 * path is always asked of the host.  A memo belongs to one compile (one
 * thread): never shared, never kept after it.
 *
 * The compile creates, removes and renames nothing on the host: the
 * placeholders it plans are made by the launcher after it
 * (placeholders.c), the mount points by the init (mounts.c).  A step that
 * ever changes a path during the compile must call sb_statmemo_forget()
 * for it, or the memo answers with what was there before.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_STATMEMO_H
#define CORRAL_SB_STATMEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct sb_statmemo_entry;

/* Zeroed: empty.  Looked up by hash: a compile may ask about tens of
 * thousands of paths (a workspace of nested repositories). */
typedef struct sb_statmemo {
    struct sb_statmemo_entry *v;
    size_t n, cap;
    size_t *slots; /* 2 * cap: index + 1 into v, 0 empty */
} sb_statmemo;

/* lstat(path) as it answered the first time in this memo (m NULL, or a
 * relative path: asked of the host every time).  0, or -1 with errno. */
int sb_statmemo_lstat(sb_statmemo *m, const char *path, struct stat *st);

/* The next sb_statmemo_lstat(m, path) asks the host again. */
void sb_statmemo_forget(sb_statmemo *m, const char *path);

void sb_statmemo_free(sb_statmemo *m);

/* For tests only: every sb_statmemo_lstat() asked of the host, as if no
 * memo were kept (a compile must decide the same either way). */
void sb_statmemo_bypass(bool on);

#endif
