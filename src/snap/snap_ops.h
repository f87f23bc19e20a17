/*
 * snap_ops.h - the work the server's snapshot jobs do on a workspace's
 * store, run where the store is open: in the store's own process
 * (snap_storeproc.c), never in the server, which does not load libgit2.
 * Each kind takes its parameters as a JSON object and answers with one;
 * the server's side of each is the job that sends it (snap_server.c,
 * snap_proto.c), through snap_remote.h.
 *
 *   boundary  anchor a command's snapshot for its session, its changes
 *             and the repositories it made inert; maintenance at a
 *             session's end
 *   anchor    keep a snapshot for a session that did not exist when it
 *             was taken
 *   maintain  retention and repack, when due
 *   diff      a patch, name-status, stat or file list of two snapshots
 *             (the text comes back as bytes beside the answer)
 *   revert    the plan to undo a command, carried out unless a dry run
 *   gc        drop gone sessions' snapshots and repack, now
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_OPS_H
#define CORRAL_SNAP_OPS_H

#include <jansson.h>

#include "base/util.h"
#include "snap/snap_store.h"

/* Run kind on st with params.  The answer is a new object; NULL with err
 * only for an unknown kind or malformed parameters.  text: the bytes a
 * diff answers with (left empty by the others). */
json_t *snap_op_run(snap_store *st, const char *kind, json_t *params, buf_t *text, char *err, size_t errlen);

#endif
