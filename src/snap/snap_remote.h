/*
 * snap_remote.h - a workspace's snapshot store as the server uses it: in
 * the store's own process (`corral __snapstore`, snap_storeproc.h), so that
 * libgit2 and what it links are never loaded into the server.  The server
 * starts the process when a job needs the store and lets it go when the
 * store has had no job for [snapshots] store-idle, or closes.
 *
 * Every call but snap_remote_close runs on a snapshot worker thread (the
 * queue's job, snap_queue.c), one at a time for a store, and blocks until
 * the store answers; the store's progress is copied into the workspace's
 * as it comes.  A store whose process ended fails the call with a message
 * that says so, and the next job starts a new one.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_REMOTE_H
#define CORRAL_SNAP_REMOTE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/util.h"
#include "snap/snap_reader.h"
#include "snap/snap_take.h"

typedef struct snap_remote snap_remote;

/* Start the store's process and open workspace ws's store under snapdir
 * there; progress receives its progress.  NULL with err. */
snap_remote *snap_remote_open(const char *snapdir, const char *ws, const snap_conf *conf,
                              struct snap_progress *progress, char *err, size_t errlen);

/* Take a snapshot through reader (snap_take.h), then run ops on the store
 * (an array of {kind, params}, snap_ops.h; may be empty): *answers is a
 * new array of their answers, and text the bytes that came with them,
 * once the snapshot is taken (NULL when the store could not answer: why
 * is out->error).  A reader the store found failing is failed here too
 * (snap_reader_fail), for the loop to replace. */
int snap_remote_take(snap_remote *r, snap_reader *reader, bool force, bool allowed, bool uncapped, json_t *ops,
                     snap_taken *out, json_t **answers, buf_t *text);

/* Run ops without a snapshot: their answers (a new array), or NULL with
 * err when the store could not run them. */
json_t *snap_remote_run(snap_remote *r, json_t *ops, buf_t *text, char *err, size_t errlen);

/* Whether its process is gone (the next job needs a new one): a call
 * failed, or it ended since.  Worker, between calls. */
bool snap_remote_dead(snap_remote *r);

/* Tell the process to close the store and end, and free r (the loop, or
 * the worker that opened it; never while a call runs).  NULL is fine. */
void snap_remote_close(snap_remote *r);

/* Why snapshots are off when libgit2 could not be loaded in a store's
 * process, once one tried; NULL otherwise (any thread). */
const char *snap_remote_load_failure(void);

/* The server's SIGCHLD handler: true when pid was a store's process. */
bool snap_remote_reaped(pid_t pid, int status);

#endif
