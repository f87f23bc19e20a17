/*
 * gitprotect.h - keeping git repositories inside writable roots from being
 * turned against the user: everything that makes the user's own git run
 * code later, outside the sandbox, is read-only or cannot be created, and
 * the directories that hold it are pinned (made mount points) so they
 * cannot be renamed away and replaced.
 *
 * That is, for every repository git would use in or below a writable root
 * (the root's own, the one enclosing it, nested ones, bare ones, the
 * submodules and linked worktrees of each, and every repository a gitlink
 * in an index names): hooks, config and config.worktree, commondir,
 * worktrees/, modules/, every config file git reads for it (the global
 * ones and everything they include), and what those files name to run
 * (core.hooksPath, init.templateDir, the programs of core.fsmonitor,
 * core.sshCommand, diff.external, filters, aliases ...).
 *
 * `git add`, `git commit`, `git checkout -b` keep working: objects, refs,
 * the index and the lock files beside them stay writable.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITPROTECT_H
#define CORRAL_SB_GITPROTECT_H

#include <stdbool.h>
#include <stddef.h>

/* How many directories the search for nested repositories may look at
 * below one writable root, unless the sink or CORRAL_GIT_SCAN_DIRS says
 * otherwise.  When it runs out the plan fails (never silently less
 * protection). */
#define SB_GIT_SCAN_DIRS_DEFAULT 100000

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
    /* Optional (NULL: cannot): bind the symlink link onto itself, so that
     * the sandbox cannot re-point, rename or remove it. */
    void (*pin_link)(void *user, const char *link, const char *why);
    /* Optional: tell the user about something protected as well as it can
     * be but not fully (NULL: printed on stderr). */
    void (*warn)(void *user, const char *message);
    /* Directories the nested-repository search may look at below one root;
     * 0: SB_GIT_SCAN_DIRS_DEFAULT.  CORRAL_GIT_SCAN_DIRS in the environment
     * wins over both. */
    size_t scan_dirs;
    /* Optional: the compile's lstat memo (statmemo.h), shared with the
     * caller's own looks at the same paths; NULL: each run keeps one. */
    struct sb_statmemo *stats;
} sb_protect_sink;

/* Protect the repositories at, around and below root (root's .git may be
 * missing, a directory, a file naming the gitdir, or a symlink).  0, or -1
 * with err for what cannot be enforced, naming the path and the fix. */
int sb_protect_repos(const char *root, const sb_protect_sink *sink, char *err, size_t errlen);

#endif
