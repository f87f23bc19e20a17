/*
 * snap_gc.h - keeping a workspace's snapshot store bounded (docs/snapshots.md,
 * "Store location and maintenance"): the snapshots of sessions that ended
 * more than [snapshots] retention ago are dropped, then the oldest ended
 * sessions' while the store is over [snapshots] max-store-size; every
 * object still reachable is repacked into one pack and everything else
 * (loose objects, older packs, a seed's linked packs, leftovers of an
 * interrupted pack) is removed.  A repack never starts without the free
 * space for a second copy of the store.  Runs on a snapshot worker.
 *
 * Which sessions a store holds, and when each ended, is kept in the
 * store's "sessions" file: "KEY START END" lines (END 0 while running).
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_GC_H
#define CORRAL_SNAP_GC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "snap/snap_store.h"

/* Keep a snapshot for a session: refs/snap/s/KEY/SEQ (SEQ: the session's
 * boundary number). */
int snap_gc_anchor(snap_store *st, const char *key, int seq, const char *commit, char *err, size_t errlen);
/* A session started (end 0) or ended in this store. */
void snap_gc_session(snap_store *st, const char *key, double start, double end);

typedef struct snap_gc_result {
    uint64_t bytes_before, bytes_after;
    int sessions_dropped;
    bool repacked;
    char error[512];
} snap_gc_result;

/* A session whose directory retention removed (retention.h): its id and
 * the second it started in ([start_lo, start_hi)), which pick out its key
 * ("ID-MS") in a store's sessions file. */
typedef struct snap_gc_gone {
    int id;
    double start_lo, start_hi;
} snap_gc_gone;

/* Drop the snapshots of the gone sessions this store holds (their refs and
 * their lines in the sessions file; the next repack frees the space).
 * Returns how many it held. */
int snap_gc_forget(snap_store *st, const snap_gc_gone *gone, size_t n_gone);

/* Maintenance now.  force: repack even when little would be gained (the
 * gc verb).  live: keys of sessions running now (never dropped, even when
 * their end is unknown after a crash). */
int snap_gc_run(snap_store *st, bool force, const char *const *live, size_t n_live, snap_gc_result *out);
/* Whether a repack is due (many loose objects, estimated from one fan-out
 * directory in 256 as git does, or many packs). */
bool snap_gc_due(snap_store *st);
/* Leftovers of an interrupted repack or snapshot, removed at start. */
void snap_gc_sweep(snap_store *st);

#endif
