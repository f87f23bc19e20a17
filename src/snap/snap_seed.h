/*
 * snap_seed.h - the first snapshot of a workspace inside a git work tree
 * starts from that repository's packs: the workspace's reader opens the
 * pack files it can read (the .git is the sandbox's to write, so they are
 * hostile input like any file there) and passes their descriptors; their
 * bytes are copied into the store, and the first snapshot then stores only
 * the files whose content is not in them.
 *
 * Nothing the packs claim is believed without a check: every object the
 * snapshot takes from them is read back here and must hash to its id (the
 * store's strict hash verification).  One that does not makes the store
 * drop every pack it copied and never seed again (a marker file), and that
 * first snapshot is taken again without them.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_SEED_H
#define CORRAL_SNAP_SEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snap/snap_store.h"

/* At most this much of the user's packs is copied (more: no seeding). */
#define SNAP_SEED_MAX ((uint64_t)2 << 30)

/* Whether the next snapshot may seed: the store has none yet and was not
 * given up on. */
bool snap_seed_wanted(const snap_store *st);

/* Copy one pack (name "pack-HEX", its .idx and .pack descriptors) into the
 * store.  0, or -1 with err (nothing of it is left in the store). */
int snap_seed_pack(snap_store *st, const char *name, int idx_fd, int pack_fd, char *err, size_t errlen);

/* Is the object id in the store?  With seeded packs, it must also read
 * back whole: *bad says one does not. */
bool snap_seed_has(snap_store *st, git_odb *odb, const git_oid *id, bool *bad);

/* The snapshot that seeded is done: the packs stay as the store's own. */
void snap_seed_done(snap_store *st);

/* The store closes while a snapshot that seeded never finished (it
 * failed, or the server stopped during it): its packs were never checked,
 * so they are removed; the next snapshot seeds again. */
void snap_seed_unfinished(snap_store *st);

/* A seeded object failed its check: every copied pack is removed, the
 * store reopened without them and marked never to seed again. */
void snap_seed_abandon(snap_store *st);

#endif
