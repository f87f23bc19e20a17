/*
 * snap_walk.h - the walk and the reads of a workspace for a snapshot, as
 * the confined reader does them (snap_worker.c, docs/snapshots.md "The
 * reader").  Every file here was written by a sandboxed process and may
 * be swapped while it is read, so:
 *
 *  - nothing is opened by a path that could cross a symlink: directories
 *    are entered with openat(O_NOFOLLOW | O_DIRECTORY) from the one before,
 *    and a file is reached with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 *    from the workspace's descriptor (or, without openat2, one no-follow
 *    openat per component);
 *  - only regular files are opened, non-blocking (a FIFO swapped in is
 *    never waited on), and a file's fstat must agree with the lstat the
 *    walk saw (device, inode, type, size) before its bytes are read and
 *    still agree (size, times) after: otherwise it is read again, and
 *    after a few tries left out as "changing while read";
 *  - a symlink is stored as its target's text, read with readlinkat and
 *    checked the same way; nothing follows it.
 *
 * The walk honours the ignore rules (snap_ignore.h) for what is not
 * tracked yet, skips the deny paths it is given, does not enter an excluded directory, and takes a directory
 * holding a .git as a nested repository (a gitlink) without entering it.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_WALK_H
#define CORRAL_SNAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "snap/snap_ignore.h"
#include "base/util.h"

typedef enum snap_walk_kind {
    SWK_FILE,    /* a regular file or a symlink: content to capture */
    SWK_GITLINK, /* a directory with a .git: a nested repository */
    SWK_IGNORED, /* excluded (a directory's path ends in '/') */
    SWK_INVALID, /* cannot be captured (why says why) */
} snap_walk_kind;

typedef struct snap_walk_entry {
    char *path;      /* workspace-relative */
    snap_walk_kind kind;
    struct stat st;  /* lstat, for files */
    const char *why; /* invalid: a static reason */
} snap_walk_entry;

typedef struct snap_walk_result {
    snap_walk_entry *v;
    size_t n, cap;
    long files;       /* SWK_FILE entries */
    bool too_many;    /* stopped at max_files */
} snap_walk_result;

/* Called every few hundred entries (a heartbeat for the server). */
typedef void (*snap_walk_progress_fn)(long seen, void *user);

typedef struct snap_walk_opts {
    snap_ignore *ignore;          /* rules so far; .gitignore files are added and removed while walking */
    char *const *deny;            /* workspace-relative paths left out whole */
    size_t n_deny;
    long max_files;               /* stop past this many files (0: no limit) */
    /* Is path in the latest snapshot (dir: anything below it)?  As in git,
     * ignore rules do not apply to what is tracked already: such a file
     * stays, and an ignored directory holding one is walked for those. */
    bool (*tracked)(const char *path, bool dir, void *user);
    snap_walk_progress_fn progress;
    void *user;
} snap_walk_opts;

/* Walk the workspace at rootfd (opened O_DIRECTORY | O_NOFOLLOW).  0, or
 * -1 with errno when the top itself cannot be read.  Entries are in no
 * particular order. */
int snap_walk(int rootfd, const snap_walk_opts *o, snap_walk_result *out);
void snap_walk_result_free(snap_walk_result *r);

/* Is rel (workspace-relative) one of deny or below one? */
bool snap_walk_denied(const char *rel, char *const *deny, size_t n_deny);

/* Open rel below rootfd without following a symlink in any component
 * (flags as for openat; O_NOFOLLOW and O_CLOEXEC are added).  -1 with
 * errno (ELOOP for a symlink on the way). */
int snap_open_beneath(int rootfd, const char *rel, int flags);

typedef enum snap_read_result {
    SNAP_READ_OK,       /* data holds the file's bytes or the link's target, st its stat */
    SNAP_READ_GONE,     /* no longer there */
    SNAP_READ_LARGE,    /* a regular file over max bytes: st only */
    SNAP_READ_INVALID,  /* not captured: *why says why */
} snap_read_result;

/* Read the regular file or symlink rel as described above; max: the size
 * cap (0: none).  data is reset first. */
snap_read_result snap_read_entry(int rootfd, const char *rel, size_t max, buf_t *data, struct stat *st,
                                 const char **why);

#endif
