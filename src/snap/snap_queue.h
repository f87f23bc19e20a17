/*
 * snap_queue.h - the server's side of snapshot stores (the loop): one
 * workspace entry per real path, with one queue of jobs that run one at a
 * time on the libuv thread pool (never on the loop).  A job that takes a
 * boundary snapshot is merged with the boundary snapshots queued right
 * behind it: one snapshot serves them all.  At most two jobs run at once in
 * the whole server, so that the pool keeps threads for libuv's own work.
 *
 * While a job snapshots, its progress (files scanned, stored) is sent to
 * subscribed clients (the supervisor screen's status bar) as "snapshot"
 * events.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_QUEUE_H
#define CORRAL_SNAP_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "base/list.h"
#include "config/snap_conf.h"
#include "snap/snap_store.h"
#include "snap/snap_take.h"

struct server;

typedef enum snap_ws_state {
    WS_NEW,      /* no snapshot yet */
    WS_READY,    /* snapshots are taken */
    WS_REFUSED,  /* needs an opt-in ($HOME, /, too many files) */
    WS_FAILED,   /* the store cannot be used (message says why) */
} snap_ws_state;

typedef struct snap_ws {
    link_t node;
    char *path;              /* canonical */
    struct snap_remote *remote; /* its store, in a process of its own: started by a job, on the
                                 * worker; ended after [snapshots] store-idle without one */
    char *store_dir;         /* where that store is (its size is measured here) */
    uv_timer_t *store_idle;  /* that wait (made on first use) */
    /* Its confined reader (snap_reader.h): started on the loop before a
     * snapshot job needs it, replaced when it failed or when a session
     * with deny paths it does not have comes. */
    struct snap_reader *reader;
    char reader_error[600];  /* why none could be started */
    char **deny;             /* every deny entry of the sessions here (the reader's too) */
    size_t n_deny;
    bool deny_changed;
    snap_ws_state state;
    char message[800];       /* why refused or failed */
    link_t queue;            /* snap_job.node */
    struct snap_job *running;
    uv_work_t work;
    link_t active;           /* snap_cmd.active_node: commands running here now */
    char latest[SNAP_OID_HEX];
    char applied[SNAP_OID_HEX]; /* the tree of the snapshot the active set was last applied at */
    uint64_t store_bytes;
    double store_bytes_at;   /* wall time it was measured (0: never) */
    double started_at;       /* monotonic start of the running job */
    struct snap_progress progress; /* the store's, copied in by the worker as its process sends it */
    int refs;                /* sessions using it */
    bool idle;               /* its last session went: close the store when the queue is empty */
    bool lingering;          /* and [snapshots] keep-open has not run out since */
    uv_timer_t *linger;      /* that grace period (made on first use) */
} snap_ws;

typedef struct snap_job snap_job;
typedef void (*snap_job_fn)(snap_job *j);

/* A job's work on the store (snap_ops.h), done by the workspace's store
 * process in the same request as the job's snapshot (one round trip a
 * job).  On the worker: params gives the op's parameters once the jobs
 * before it are done (NULL: nothing to do; what only the snapshot knows,
 * the store's process adds as "taken"); answer gets the op's answer and
 * the bytes that came with it (a diff's text), or a NULL answer and why
 * the store could not run it.  A snapshot job whose snapshot failed runs
 * no op: its after sees rc < 0. */
typedef struct snap_op {
    const char *kind;
    json_t *(*params)(snap_job *j);
    void (*answer)(snap_job *j, json_t *a, const char *text, size_t text_len, const char *err);
} snap_op;

struct snap_job {
    link_t node;
    snap_ws *ws;
    bool snapshot;      /* take a boundary snapshot first (merged with the next ones) */
    bool force;         /* walk even when the dirty bit says nothing changed */
    const snap_op *op;  /* its work on the store, or NULL */
    snap_job_fn after;  /* on the loop, always called once (cancelled: the server stops) */
    void *data;
    snap_taken taken;   /* the snapshot, when snapshot */
    int rc;             /* 0, or -1 with err */
    char err[700];
    bool cancelled;
    bool boundary;      /* a command's boundary: still taken while the server stops */
    bool measure;       /* measure the store's size after it */
    bool may_create;    /* a command (or a session without command marks) may have
                         * made files since the last snapshot: the new-file cap
                         * applies (a boundary that ends one says so; the rest is
                         * decided when it starts) */
    uint64_t bytes;     /* (worker) the store's size, when measured */
    bool measured;
    long starts_cmd, ends_cmd; /* the command whose boundary it is (merging never
                                  puts a command's end with its own start) */
    snap_job *merged;   /* boundary snapshots served by this one's */
};

/* Start and stop (the server's loop; snapdir: where stores live). */
void snap_queue_start(uv_loop_t *loop, struct server *srv, const char *snapdir, const snap_conf *conf);
/* Stopping: queued jobs are cancelled (their after() runs now) but the
 * boundaries of workspaces that have a first snapshot (quick, and what the
 * commands' records need); running ones finish; then the stores close. */
void snap_queue_shutdown(void);
bool snap_queue_stopping(void);

/* The entry for workspace path (made on first use; refused ones say why). */
snap_ws *snap_ws_get(const char *path);
/* No session uses ws any more: its store and its reader (with the
 * reader's inotify watch and stat cache) stay open for [snapshots]
 * keep-open, so that an agent's next one-shot command finds them warm,
 * then close once its queue is empty, to be opened again when a session
 * comes back. */
void snap_ws_idle(snap_ws *ws);
/* A session here denies these paths (absolute or ~/...): the reader
 * must not see them either. */
void snap_ws_add_deny(snap_ws *ws, char *const *deny, size_t n);
/* Every entry (for gc and listing). */
link_t *snap_ws_all(void);

/* A new job for ws (zeroed); queue it with snap_job_submit. */
snap_job *snap_job_new(snap_ws *ws, bool snapshot, const snap_op *op, snap_job_fn after, void *data);
void snap_job_submit(snap_job *j);

/* "scanning", "storing", "maintaining" or "idle" and the counts, for
 * lists and events. */
const char *snap_ws_phase(const snap_ws *ws, long *done, long *total);
/* {"state", "message"?, "phase", "done", "total", "store_bytes"} */
struct json_t;
struct json_t *snap_ws_json(const snap_ws *ws);
/* The configuration the stores were opened with. */
const snap_conf *snap_queue_conf(void);
const char *snap_queue_dir(void);

#endif
