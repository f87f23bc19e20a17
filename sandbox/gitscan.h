/*
 * gitscan.h - finding the git repositories inside a directory tree, fast
 * (getdents64 and the entry types it gives; a stat only where a file system
 * gives none) and without following symlinks.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITSCAN_H
#define CORRAL_SB_GITSCAN_H

#include <stddef.h>

/* The scan ran out of directories it may look at: what lies further was
 * not seen. */
#define SB_GITSCAN_BUDGET (-2)

typedef struct sb_gitscan_cb {
    void *user;
    /* dir (not the root) has an entry ".git": the work tree of a
     * repository.  A non-zero return stops the scan and is returned. */
    int (*worktree)(void *user, const char *dir);
    /* dir has HEAD, objects and refs: a git directory of its own (a bare
     * repository, or a gitdir kept outside its work tree).  The scan does
     * not go into it.  A non-zero return stops the scan. */
    int (*gitdir)(void *user, const char *dir);
} sb_gitscan_cb;

/* Look at root and the directories below it, down to max_depth levels
 * (root's entries are level 1; -1: no limit).  Never goes into ".git", into
 * a git directory, or into root's entries named in skip_top (NULL-terminated
 * or NULL).  Each directory opened costs one of *budget.
 *
 * Returns 0, a callback's non-zero result, SB_GITSCAN_BUDGET when *budget
 * ran out with directories left to look at, or -1 with err when a directory
 * that could hold a repository cannot be read (one the user could make
 * readable again: what the sandbox can hide there, the scan must see). */
int sb_gitscan(const char *root, int max_depth, size_t *budget, const char *const *skip_top,
               const sb_gitscan_cb *cb, char *err, size_t errlen);

#endif
