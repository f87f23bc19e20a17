/*
 * git_quarantine.h - making a git repository a command created (or whose
 * config, hooks or .git file it changed) inert before your own git meets
 * it (docs/sandbox.md, "Repositories a command makes").
 *
 * No mount can protect a repository that did not exist when the sandbox
 * was planned: `git init sub` in a sandbox gives sub/.git a config and
 * hooks of the sandbox's choosing, and your next `git status` there (or a
 * prompt that runs one) runs its core.fsmonitor.  So once the command has
 * ended, what would make your git run something is moved aside, inside the
 * repository's own git directory:
 *
 *  - its config (and config.worktree) when it names anything but the keys a
 *    repository needs to work (format, remotes, branches, user): the file
 *    goes to corral-quarantine/STAMP/config.quarantined and a config with
 *    only those keys takes its place (every hook path, program, alias,
 *    filter, include and fsmonitor gone);
 *  - its hooks/ directory when it holds a hook (not *.sample): moved to
 *    corral-quarantine/STAMP/hooks.quarantined, an empty hooks/ made;
 *  - its commondir file (it would send git to another directory's config
 *    and hooks);
 *  - a .git that is a file or a symlink: the git directory it leads to is
 *    made inert as above when it is inside the workspace (and reached with
 *    no further symlink); otherwise the pointer itself is renamed
 *    .git.corral-quarantined-STAMP.
 *
 * Each move is recorded with the SHA-256 of what was moved and the exact
 * text of what it would have run, so a reviewer sees it, and `corral
 * git-restore` can put it back once read, refusing anything that changed
 * since.  Everything is done relative to descriptors opened without
 * following symlinks; the repository's files are hostile input.
 *
 * Included by src/snap/ and src/cli/.
 */
#ifndef CORRAL_GIT_QUARANTINE_H
#define CORRAL_GIT_QUARANTINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gq_item {
    char *path;      /* workspace-relative: where it was */
    char *moved_to;  /* workspace-relative: where it is now */
    char *replaced;  /* what corral put in its place ("config": the reduced config's SHA-256), or NULL */
    char sha[65];    /* SHA-256 of the file, or of a directory's listing and files */
    char *runs;      /* what it would have run, one item a line (visible text) */
} gq_item;

typedef struct gq_result {
    gq_item *items;
    size_t n;
    char **errors;   /* what could not be made inert, and why */
    size_t n_errors;
} gq_result;

/* Make the repository at repo (workspace-relative directory holding a
 * .git; "" is never taken: the workspace's own repository is protected by
 * its sandboxes) inert.  stamp names the quarantine (letters, digits, '-').
 * Items and errors are added to out. */
void gq_repo(int wsfd, const char *repo, const char *stamp, gq_result *out);

/* Put items back, newest first, each only if it and what corral put in its
 * place are still what was recorded.  Returns the number restored; errors
 * (one line each) are added to out. */
size_t gq_restore(int wsfd, const gq_item *items, size_t n, gq_result *errors);

void gq_result_free(gq_result *r);
json_t *gq_items_json(const gq_result *r);
/* Items back from their JSON (a changes record's "quarantined"). */
int gq_items_from_json(json_t *a, gq_result *out);

/* The git state of a tree, for a command run without snapshots (corral
 * sandbox): every directory holding a .git, with a digest of what could
 * make git run something there (the .git's kind, a .git file's text, the
 * config, config.worktree, commondir and hooks).  Walked with descriptors,
 * no symlink followed, deny paths (relative) left out. */
typedef struct gq_state {
    char **paths;     /* sorted */
    char (*digests)[65];
    size_t n;
    bool incomplete;  /* too many directories: not every repository is known */
} gq_state;

void gq_scan(int rootfd, char *const *deny, size_t n_deny, gq_state *out);
void gq_state_free(gq_state *s);
/* Quarantine the repositories of after that before does not have, or has
 * with another digest. */
void gq_quarantine_changed(int rootfd, const gq_state *before, const gq_state *after, const char *stamp,
                           gq_result *out);

/* Is this configuration key one a repository may keep (section and key in
 * lower case, as the config parser gives them)? */
bool gq_key_allowed(const char *section, const char *key);

#endif
