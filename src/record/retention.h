/*
 * retention.h - how long ended sessions' directories are kept
 * ([session] retention and max-total-size, corral.conf(5)): a directory of
 * a session that provably ended goes once it has not changed for longer
 * than the retention, then the oldest ones while all of them together take
 * more than the cap.  A session of the server (running, or still in its
 * list) is never removed, nor one whose end cannot be proven (sessdir.h).
 *
 * The scan and the removal run on a worker thread (they read and unlink
 * files); staging, between them, runs where the sessions are created (the
 * server's loop): each directory to remove is renamed aside to
 * .removing-NAME after checking that NAME is still the same directory and
 * belongs to no session of the server, so that a session created meanwhile
 * under a reused id is never the one removed.
 *
 * Included by src/record/ and src/snap/.
 */
#ifndef CORRAL_RETENTION_H
#define CORRAL_RETENTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/sessdir.h"

/* A directory a session of the server uses. */
typedef struct retention_live {
    dev_t dev;
    ino_t ino;
    int id;
    bool running;
} retention_live;

typedef enum retention_verdict {
    RET_KEEP,
    RET_AGE,  /* ended longer ago than the retention */
    RET_SIZE, /* the oldest while over the cap */
} retention_verdict;

typedef struct retention_entry {
    sessdir_probe probe;
    retention_verdict verdict;
    bool live;         /* a session of the server uses it */
    bool ended;        /* provably ended (once proof is set): it may go */
    char why[200];     /* kept: why */
    char proof[200];   /* what proves it ended (or why that cannot be proven) */
    bool staged;       /* renamed aside, to be removed */
    bool removed;
    char staged_name[48];
    char error[400];   /* staging or removal failed */
} retention_entry;

typedef struct retention_plan {
    char *root;
    uint64_t retention_ms, max_total;
    double now;
    retention_entry *v;
    size_t n;
    char **leftovers;  /* .removing-* of an interrupted run */
    size_t n_leftovers;
    uint64_t bytes_before;
    bool dry_run;
    char error[400];   /* the scan itself failed */
} retention_plan;

/* Worker: scan root and decide.  live: the server's sessions' directories. */
void retention_scan(retention_plan *p, const char *root, uint64_t retention_ms, uint64_t max_total,
                    const retention_live *live, size_t n_live, double now, bool dry_run);
/* Loop: rename each directory to remove aside, after checking again that
 * it is the one scanned and not in live now. */
void retention_stage(retention_plan *p, const retention_live *live, size_t n_live);
/* Worker: remove what was staged, and leftovers. */
void retention_remove(retention_plan *p);
/* What was removed and kept, for the protocol's gc reply (docs/protocol.md). */
json_t *retention_json(const retention_plan *p);
void retention_plan_free(retention_plan *p);

/* The live sessions' directories of the server; dirs: their paths. */
retention_live *retention_live_of(char *const *dirs, const int *ids, const bool *running, size_t n, size_t *n_out);

#endif
