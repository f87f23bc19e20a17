/*
 * snap_seed.h - the first snapshot of a workspace inside a git work tree
 * starts from that repository: its pack files are hard-linked into the
 * store (the user's .git is only read; a hard link survives the user's own
 * gc), and the user's own index at the workspace's place (else its HEAD's
 * tree) is read into the private index.  The refresh that follows trusts
 * the stat data git recorded there, as git status does (an entry git would
 * re-check is hashed), hashes what changed since, and stores only what is
 * not in the user's packs.  Without a repository, or on another
 * filesystem, nothing is seeded and every file is stored.
 *
 * The user's index may have been written by code in a sandbox: what it
 * claims about a file is only believed while the file's stat data match,
 * and only for the first snapshot; objects read back must hash to their
 * ids (the store's strict hash verification).
 */
#ifndef CORRAL_SNAP_SEED_H
#define CORRAL_SNAP_SEED_H

#include "snap_store.h"

/* 0 when the index was seeded; -1 when there was nothing to seed from. */
int snap_seed(snap_store *st);

#endif
