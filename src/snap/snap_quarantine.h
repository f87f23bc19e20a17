/*
 * snap_quarantine.h - at the end of a command, the repositories its
 * snapshots show new, or with a changed config, hooks or hooksPath, are
 * made inert (git_quarantine.h) before the command's record is written.
 * Runs on a snapshot worker, after the command's "after" snapshot.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_QUARANTINE_H
#define CORRAL_SNAP_QUARANTINE_H

#include <jansson.h>

#include "snap/git_quarantine.h"
#include "snap/snap_store.h"

/* Compare the nested repositories of snapshots before and after (commit
 * ids), quarantine what is new or changed under stamp.  0, or -1 with err
 * when the snapshots cannot be read. */
int snap_quarantine_after(snap_store *st, const char *before, const char *after, const char *stamp, gq_result *out,
                          char *err, size_t errlen);

/* Add what was quarantined to a command's changes record: "quarantined"
 * (with what each would have run) and a risk entry for each, its detail
 * the exact text. */
void snap_quarantine_record(json_t *changes, const gq_result *q);

#endif
