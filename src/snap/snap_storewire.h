/*
 * snap_storewire.h - the messages between the server and a workspace's
 * store process (snap_remote.h, snap_storeproc.c), on snap_wire.h's
 * frames.  Each message is a JSON object; one larger than a frame goes in
 * SSW_MORE frames before its last, and bytes beside it (a diff's text) in
 * SSW_TEXT frames before the JSON.  While a request runs, the store sends
 * SSW_PROGRESS frames (files done, total, phase), at least every few
 * seconds: also its heartbeat.
 *
 * Both ends are the same corral binary of the same user; the store's
 * process is as trusted as the server.  What it reads from the workspace
 * comes from the confined reader (snap_take.c checks it).
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_STOREWIRE_H
#define CORRAL_SNAP_STOREWIRE_H

#include <jansson.h>
#include <stdint.h>

#include "base/util.h"
#include "config/snap_conf.h"
#include "snap/snap_wire.h"

enum {
    /* Server -> store. */
    SSW_OPEN = 'O', /* {dir, ws, conf} */
    SSW_TAKE = 'T', /* {force, allowed, uncapped, configured, deny}, with the reader's socket */
    SSW_RUN = 'R',  /* {kind, params} (snap_ops.h) */
    SSW_QUIT = 'Q', /* close the store, answer, end */
    /* Store -> server. */
    SSW_PROGRESS = 'P', /* u64 done, u64 total, u8 phase */
    SSW_ANSWER = 'A',
    /* Either way: parts of the message whose last frame follows. */
    SSW_MORE = 'j',
    SSW_TEXT = 'x',
};

/* Send message j (not taken) as type, text (if any, and not empty) before
 * it and pass_fd (>= 0) with its last frame.  0 or -errno. */
int ssw_send(int fd, int type, json_t *j, const buf_t *text, int pass_fd);

typedef void (*ssw_progress_fn)(void *user, uint64_t done, uint64_t total, int phase);

/* Receive the next message, progress frames on the way given to progress
 * (may be NULL), each frame within timeout_ms (-1: no limit).  1 with *type and *j (new) and, when text is not NULL,
 * its bytes appended to text; 0 when the peer closed; -EPROTO for a
 * malformed message, or another -errno. */
int ssw_recv(snap_wire_inbox *ib, int timeout_ms, int *type, json_t **j, buf_t *text, ssw_progress_fn progress,
             void *user);

/* A string of any bytes as JSON (a path, a message naming one: a session
 * may have named a file with bytes that are not UTF-8, which a JSON string
 * cannot hold): itself when it is valid UTF-8, else {"b64": ...}. */
json_t *ssw_str(const char *s);
/* Back: a new copy, or NULL when v is neither form (or holds a NUL). */
char *ssw_str_dup(json_t *v);
/* The same into a buffer, "" for anything else. */
void ssw_str_copy(json_t *v, char *out, size_t size);

/* A list of such strings as a JSON array. */
json_t *ssw_strings(char *const *v, size_t n);

/* [snapshots] as JSON, and back (0, or -1 for a malformed object). */
json_t *ssw_conf_json(const snap_conf *c);
int ssw_conf_from_json(json_t *o, snap_conf *c);

#endif
