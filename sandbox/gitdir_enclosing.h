/*
 * gitdir_enclosing.h - protecting the git directory a writable root lies
 * in.  gitprotect.c protects the repositories found below a writable root;
 * a root inside a git directory (`-w repo/.git`, `-w repo/.git/objects`, a
 * bare repository or one of its subdirectories) has its hooks and config
 * above or beside it, where that walk never looks.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITDIR_ENCLOSING_H
#define CORRAL_SB_GITDIR_ENCLOSING_H

#include "gitprotect.h"

/* Protect, through sink, every git directory that is path or one of its
 * ancestors: a directory named .git, or one git would take for a git
 * directory (HEAD naming a ref or an object, objects/ and refs/), as a bare
 * repository is.  Protected: hooks/ (an empty read-only placeholder where
 * missing and writable), config, config.worktree, commondir (a placeholder
 * saying "." where missing and writable; the common dir it names is
 * protected too), and the submodule gitdirs under modules/; the git
 * directory itself is pinned when writable.  Never fails: what is missing
 * has nothing to protect. */
void sb_protect_enclosing_gitdirs(const char *path, const sb_protect_sink *sink);

/* Is dir a git directory by git's own test (HEAD naming a ref or an
 * object, objects/ and refs/ directories)? */
bool sb_looks_like_gitdir(const char *dir);

#endif
