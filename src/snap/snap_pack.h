/*
 * snap_pack.h - the objects of a large snapshot written as one pack file,
 * hashed and compressed on threads of its own (docs/snapshots.md, "How a
 * snapshot stays cheap").
 *
 * A first snapshot of a workspace with no repository to seed from stores
 * every file.  As loose objects that is a file created, written and renamed
 * per object, and all of it on the one thread that also receives the
 * reader's bytes; here each object's id and compressed bytes are made on
 * worker threads, and the one thread that owns the store only appends them
 * to a pack in the order they were added and hands each id back (to the
 * index) in that same order, so what the store and the index hold does not
 * depend on the threads' timing.  The pack has no deltas (the store's
 * maintenance makes them later); its index (version 2) is written beside it
 * and both are renamed into objects/pack/ when the snapshot is complete.
 *
 * zlib is libgit2's own dependency, loaded beside it (snap_git.h): corral
 * links neither.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_PACK_H
#define CORRAL_SNAP_PACK_H

#include "snap/snap_git.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct snap_pack snap_pack;

/* Called on the adding thread for each object, in the order added, once it
 * is in the pack: item is what snap_pack_add was given.  0, or -1 to stop
 * (snap_pack_add or snap_pack_drain then fail). */
typedef int (*snap_pack_done_fn)(void *ctx, void *item, const git_oid *id);

/* A pack under objects_dir/pack (a temporary name until finished), with
 * threads workers (<= 0: one per CPU, at most 4).  NULL with err. */
snap_pack *snap_pack_begin(const char *objects_dir, int threads, snap_pack_done_fn done, void *ctx, char *err,
                           size_t errlen);

/* A blob of len bytes at data (malloc'd: the pack frees it).  Objects
 * finished by now are handed to done first; waits while too much is in
 * flight.  0, or -1 with err. */
int snap_pack_add(snap_pack *p, char *data, size_t len, void *item, char *err, size_t errlen);

/* Every object added so far written and handed to done.  0, or -1 with err. */
int snap_pack_drain(snap_pack *p, char *err, size_t errlen);

/* Drain, then the pack and its index completed and renamed into place
 * (nothing when it holds no object); p is freed either way.  0, or -1
 * with err. */
int snap_pack_finish(snap_pack *p, char *err, size_t errlen);

/* Stop the workers and remove the temporary files; p is freed.  Items
 * not handed to done are freed with free_item when it is given. */
void snap_pack_abort(snap_pack *p, void (*free_item)(void *item));

/* SHA-1 of len bytes (the pack's trailer; exposed for the tests). */
void snap_sha1(const void *data, size_t len, unsigned char out[20]);

#endif
