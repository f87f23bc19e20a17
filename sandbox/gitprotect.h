/*
 * gitprotect.h - keeping git repositories inside writable roots from being
 * turned against the user: everything that makes the user's own git run
 * code (hooks, config, a redirecting commondir; in submodule and worktree
 * gitdirs too) is read-only, and the directories that hold them are pinned
 * (made mount points) so they cannot be renamed away and replaced.
 *
 * `git add`, `git commit`, `git checkout -b` keep working: objects, refs,
 * the index and the lock files beside them stay writable.
 */
#ifndef CORRAL_SB_GITPROTECT_H
#define CORRAL_SB_GITPROTECT_H

#include <stdbool.h>
#include <stddef.h>

/* Where the decisions go (plan.c turns them into mounts). */
typedef struct sb_protect_sink {
    void *user;
    /* Bind dir onto itself read-write: a mount point cannot be renamed. */
    void (*pin)(void *user, const char *dir, const char *why);
    /* Make an existing path read-only. */
    void (*readonly)(void *user, const char *path, bool is_dir, const char *why);
    /* Make a missing path exist for the sandbox's lifetime and read-only:
     * an empty directory (content NULL) or a file with content. */
    void (*placeholder)(void *user, const char *path, const char *content, const char *why);
    /* Is path inside a writable root (so the sandbox could change it)? */
    bool (*writable)(void *user, const char *path);
} sb_protect_sink;

/* Protect the repository at root (whose .git may be missing, a directory,
 * a file naming the gitdir, or a symlink) and the nested repositories up to
 * three directories below it.  0, or -1 with err for what cannot be
 * enforced (a .git symlink). */
int sb_protect_repos(const char *root, const sb_protect_sink *sink, char *err, size_t errlen);

#endif
