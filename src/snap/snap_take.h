/*
 * snap_take.h - taking one snapshot of a workspace (docs/snapshots.md,
 * "What a snapshot holds"), in the store's process (snap_storeproc.h):
 *
 *  1. nothing changed since the latest snapshot (the inotify dirty bit
 *     says so): that one again, at the cost of one read(2);
 *  2. otherwise one diff of the private index against the work tree,
 *     untracked files included and stat data refreshed (files only
 *     touched are re-hashed once, then cached again), whose deltas are
 *     applied to the index: removed, added, or left out with the reason
 *     kept (over the size cap, excluded, over the new-file cap, a name git
 *     cannot store); a directory with a .git is a gitlink to its HEAD;
 *  3. the tree is written, then (when it or the meta differ) a commit with
 *     the meta as its message and refs/snap/latest; the index last, once
 *     the objects it names are on disk.
 *
 * The first snapshot of a workspace inside a git work tree is seeded from
 * that repository: its packs hard-linked into the store, its HEAD tree read
 * into the index, so only changed files are hashed and stored.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_TAKE_H
#define CORRAL_SNAP_TAKE_H

#include "snap/snap_store.h"

typedef struct snap_taken {
    char commit[SNAP_OID_HEX]; /* the snapshot */
    char tree[SNAP_OID_HEX];   /* its tree: what says whether files changed */
    bool reused;               /* nothing changed: the latest again */
    bool seeded;               /* the first, seeded from the user's repository */
    long files;                /* files in it */
    long stored;               /* files it had to store (read and write) */
    double seconds;
    bool refused;              /* the workspace needs an opt-in (error says why) */
    char error[600];           /* "" on success */
} snap_taken;

/* Take a snapshot (force: walk the tree even when the dirty bit says
 * nothing changed).  allowed: the user opted this workspace in past the
 * file count cap.  0, or -1 with out->error. */
int snap_take(snap_store *st, bool force, bool allowed, snap_taken *out);

/* Read a snapshot's commit: its tree and parsed meta (out->... freed by
 * the caller with git_tree_free and snap_meta_free). */
struct snap_meta;
int snap_read(snap_store *st, const char *commit, git_tree **tree, struct snap_meta *meta, char *err, size_t errlen);
/* The same without the tree itself: its id only (NULL: not wanted).  A
 * snapshot's root tree can be large (a big workspace's top directory), and
 * reading it also checks its hash: what only compares trees or reads the
 * metadata does not load it. */
int snap_read_meta(snap_store *st, const char *commit, git_oid *tree_id, struct snap_meta *meta, char *err,
                   size_t errlen);

#endif
