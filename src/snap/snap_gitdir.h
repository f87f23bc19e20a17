/*
 * snap_gitdir.h - what a snapshot needs to know about a git repository
 * inside (or around) a workspace, read with plain system calls: never
 * through git or libgit2's repository opening, so none of its config,
 * hooks, filters or fsmonitor can take part.  Everything read here may
 * have been written by code in a sandbox: sizes are capped, no symlink is
 * followed in any component of what is opened, only regular files are
 * read (non-blocking), and bad content only means "unknown".  It runs in
 * the workspace's confined reader (snap_worker.c).
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_GITDIR_H
#define CORRAL_SNAP_GITDIR_H

#include <stdbool.h>
#include <stddef.h>

#define SNAP_HEX_OID 40
#define SNAP_MAX_HOOKS 64

typedef struct snap_hook {
    char name[128];
    unsigned mode;                  /* 0755 or 0644 */
    char sha[65];                   /* sha256 of the content (first 1 MiB) */
} snap_hook;

typedef struct snap_gitdir {
    bool found;                     /* a .git entry exists */
    bool valid;                     /* it is a repository with a HEAD */
    char head[SNAP_HEX_OID + 1];    /* HEAD's commit, "" when unborn or unknown */
    char config_sha[65];            /* sha256 of its config, "" without one */
    char hooks_path[512];           /* core.hooksPath as written, "" without one */
    snap_hook hooks[SNAP_MAX_HOOKS];/* hooks/ (without *.sample), then core.hooksPath's */
    int n_hooks;
} snap_gitdir;

/* Read DIR/.git (a directory, or a "gitdir: PATH" file).  Always fills
 * out (found false when there is none). */
void snap_gitdir_read(const char *dir, snap_gitdir *out);

/* The repository whose work tree holds ws: the directory that has the
 * .git (ws itself or the nearest parent with one), its git directory and
 * common directory (where objects and packs live; differs for worktrees),
 * and ws relative to the work tree ("" at its top).  false: none. */
typedef struct snap_enclosing {
    char top[4096], gitdir[4096], commondir[4096], prefix[4096];
} snap_enclosing;
bool snap_gitdir_enclosing(const char *ws, snap_enclosing *out);

/* The git directory of DIR/.git (the directory, or where a "gitdir:"
 * file points), into gitdir.  false: none, or not a directory. */
bool snap_gitdir_locate(const char *dir, char *gitdir, size_t len);

/* Read at most max bytes of path (not following a final symlink) into a
 * new NUL-terminated string; NULL when it cannot be read as a regular file. */
char *snap_read_small(const char *path, size_t max, size_t *len);
/* The same from an open descriptor (read from where it stands). */
char *snap_read_fd(int fd, size_t max, size_t *len);

/* The commit a ref name resolves to in gitdir/commondir (loose refs, then
 * packed-refs; symbolic refs followed a few levels).  false: unknown. */
bool snap_gitdir_resolve(const char *gitdir, const char *commondir, const char *ref, char out[SNAP_HEX_OID + 1]);

#endif
