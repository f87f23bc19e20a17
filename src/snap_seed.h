/*
 * snap_seed.h - the first snapshot of a workspace inside a git work tree
 * starts from that repository: its pack files are hard-linked into the
 * store (the user's .git is only read; a hard link survives the user's own
 * gc), and the tree of its HEAD at the workspace's place is read into the
 * private index.  The refresh that follows hashes each file once to check
 * it, and stores only what differs from HEAD.  Without a repository, or on
 * another filesystem, nothing is seeded and every file is stored.
 */
#ifndef CORRAL_SNAP_SEED_H
#define CORRAL_SNAP_SEED_H

#include "snap_store.h"

/* 0 when the index was seeded; -1 when there was nothing to seed from. */
int snap_seed(snap_store *st);

#endif
