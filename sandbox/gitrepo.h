/*
 * gitrepo.h - what a repository's config files make the user's git run,
 * and keeping it out of the sandbox's reach (internal to the git
 * protection).
 *
 * git reads, for a repository: the system config, the global ones
 * (~/.gitconfig, $XDG_CONFIG_HOME/git/config), the repository's config
 * (in its common directory) and config.worktree, and every file these
 * include (include.path, includeIf.*.path, followed to any depth git
 * follows).  Each of them is kept read-only where the sandbox could write
 * it; what they name that runs code (core.hooksPath, init.templateDir, the
 * programs of core.fsmonitor, core.sshCommand, diff.external, filters,
 * aliases ...) is protected where it lies inside a writable root.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITREPO_H
#define CORRAL_SB_GITREPO_H

#include <stdbool.h>
#include <stddef.h>

#include "gitpaths.h"

typedef struct gp_repo {
    char *gitdir;        /* canonical */
    char *common;        /* its common directory (the gitdir unless a linked worktree's) */
    char *core_worktree; /* core.worktree, resolved against the gitdir; NULL if unset */
    size_t hash_len;     /* object names: 20 (SHA-1) or 32 (SHA-256) */
    bool worktree_config; /* extensions.worktreeConfig: config.worktree is read */
    gp_values v;         /* what its own config files name */
} gp_repo;

/* Read the system and global config files into g->globals (protecting
 * them and what they include where the sandbox could write them). */
void gp_read_global_config(gp *g);

/* The repository whose git directory is gitdir and common directory
 * common (both canonical), its config read and its included files
 * protected on first use.  NULL once g failed. */
gp_repo *gp_repo_config(gp *g, const char *gitdir, const char *common, gp_links policy);

/* Protect what the repository's config and the global config name to run,
 * relative paths taken from base (the top of a work tree, where git runs
 * hooks and commands; the git directory of a bare repository). */
void gp_protect_named(gp *g, const gp_repo *r, const char *base, gp_links policy);

void gp_repos_free(gp *g);

#endif
