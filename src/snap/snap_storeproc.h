/*
 * snap_storeproc.h - `corral __snapstore`: a workspace's snapshot store in
 * a process of its own (docs/snapshots.md, "The store's process").  The
 * server starts one when a job needs the store (snap_remote.h) and it
 * alone loads libgit2 and writes the store; the server keeps only the
 * queue, the records and the reader.  It answers one request at a time
 * on descriptor SNAP_STORE_FD (snap_storewire.h) and ends when the server
 * says quit, closes the socket, or dies.
 *
 * Included by src/snap/ and src/cli/.
 */
#ifndef CORRAL_SNAP_STOREPROC_H
#define CORRAL_SNAP_STOREPROC_H

#define SNAP_STORE_FD 3

/* `corral __snapstore WORKSPACE` (the workspace only for ps: the server's
 * request to open names it). */
int snap_storeproc_main(int argc, char **argv);

#endif
