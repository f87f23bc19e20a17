/*
 * snap_worker.h - a workspace's confined reader, the process side
 * (snap_worker.c; the server's side is snap_reader.h).
 *
 * Included by src/snap/ and src/cli/.
 */
#ifndef CORRAL_SNAP_WORKER_H
#define CORRAL_SNAP_WORKER_H

#include <sys/stat.h>

#include "snap/snap_wire.h"

/* Where the reader finds its connection to the server: the descriptor a
 * sandboxed command gets as its session channel. */
#define SNAP_WORKER_FD 3

/* `corral __snapworker WORKSPACE`, run by the sandbox's init. */
int snap_worker_main(int argc, char **argv);

/* A file's stat as a snapshot keeps it (git's mode, times in ns). */
void snap_worker_stat(const struct stat *sb, snap_wire_stat *out);
/* Cut to what git's index holds (32 bits of size, inode, device and
 * seconds), so a stat and an index entry compare as equals. */
void snap_worker_norm(snap_wire_stat *s);

#endif
