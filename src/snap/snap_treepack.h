/*
 * snap_treepack.h - the trees of a large snapshot written as one pack.
 *
 * A snapshot's tree is one git tree object per directory.  Written the
 * usual way each is a loose object: a file created, written and renamed,
 * which for a first snapshot is thousands of files (one per directory of
 * the workspace), on the one thread that also finishes the snapshot, after
 * every file's bytes are in.  Here they are written to memory first (a
 * libgit2 mempack, behind an object database of its own that reads the
 * store's objects as an alternate, so every blob a tree names is still
 * checked to exist) and then into the store as one pack with its index.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_TREEPACK_H
#define CORRAL_SNAP_TREEPACK_H

#include <stddef.h>

#include "snap/snap_git.h"
#include "snap/snap_store.h"

/* The trees of st's index into one new pack of the store; *tree is the
 * root's id.  0; -1 with err when nothing was written (the caller may
 * write them as loose objects instead); -2 with err when it failed after
 * the index took the trees' ids (its tree cache then names trees the
 * store may not have, and a plain write_tree would trust it: the snapshot
 * must fail, and the index be read back). */
int snap_treepack_write(snap_store *st, git_oid *tree, char *err, size_t errlen);

#endif
