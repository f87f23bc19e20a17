/*
 * snap_revert.h - undoing exactly one command's changes (docs/snapshots.md,
 * "Revert"): the files it created are removed, the ones it modified or
 * deleted are restored from the snapshot before it (content, mode, symlink
 * target), and nothing else in the workspace is touched.  A file that
 * changed again after the command (the snapshot "now" differs from the
 * command's "after") is a conflict, and then nothing at all is done.
 *
 * Everything is done relative to directory descriptors opened without
 * following symlinks, so a symlink planted in the workspace cannot send a
 * restored file anywhere else; each file is checked again just before it
 * is replaced or removed.  Runs on a snapshot worker.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_REVERT_H
#define CORRAL_SNAP_REVERT_H

#include <jansson.h>
#include <stdbool.h>

#include "snap/snap_store.h"

typedef enum snap_revert_action { REVERT_REMOVE, REVERT_RESTORE } snap_revert_action;

typedef struct snap_revert_item {
    snap_revert_action action;
    char *path;
    unsigned mode;       /* RESTORE: the mode to restore */
    git_oid id;          /* RESTORE: its content; REMOVE: what must be there now */
    unsigned now_mode;   /* what must be there now (0: nothing) */
    git_oid now_id;
    bool large;          /* REMOVE of a file over the size cap: size and time checked */
    uint64_t size;
    int64_t mtime_ns;
} snap_revert_item;

typedef struct snap_revert_note {
    char *path;
    char *reason;
} snap_revert_note;

typedef struct snap_revert_plan {
    snap_revert_item *items;
    size_t n_items;
    snap_revert_note *conflicts; /* any: nothing is done */
    size_t n_conflicts;
    snap_revert_note *skipped;   /* left as they are (nested repositories, uncaptured content) */
    size_t n_skipped;
    snap_revert_note *failed;    /* filled by apply */
    size_t n_failed;
    char before[SNAP_OID_HEX];   /* the snapshot every restored blob comes from */
} snap_revert_plan;

/* What undoing the change before->after means now (the snapshot now). */
int snap_revert_plan_make(snap_store *st, const char *before, const char *after, const char *now,
                          snap_revert_plan *out, char *err, size_t errlen);
/* Carry it out (only when it has no conflicts).  0, or -1 with err when the
 * workspace cannot be opened; single files that fail are in out->failed. */
int snap_revert_apply(snap_store *st, snap_revert_plan *plan, char *err, size_t errlen);
void snap_revert_plan_free(snap_revert_plan *p);
json_t *snap_revert_plan_json(const snap_revert_plan *p);

#endif
