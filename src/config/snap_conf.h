/*
 * snap_conf.h - the [snapshots] section of the config file (corral.conf(5),
 * docs/snapshots.md): whether workspaces are snapshotted around commands,
 * the caps that keep a snapshot and its store bounded, and the workspaces
 * a user opted in although they are $HOME, / or very large.
 *
 * Included by src/config/ and src/snap/.
 */
#ifndef CORRAL_SNAP_CONF_H
#define CORRAL_SNAP_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct snap_conf {
    bool enabled;             /* enabled = true */
    uint64_t max_file_size;   /* bytes; larger files are recorded by size only (0: no cap) */
    int max_new_files;        /* new files under one top-level directory in one snapshot */
    int max_files;            /* files after excludes; more needs an opt-in (allow) */
    uint64_t retention_ms;    /* a session's snapshots are kept this long after it ends */
    uint64_t max_store_size;  /* bytes a workspace's store may take before old sessions go */
    uint64_t stall_ms;        /* a snapshot whose reader says nothing this long is given up */
    uint64_t keep_open_ms;    /* a workspace's store and reader stay open this long after its last session (0: close at once) */
    uint64_t store_idle_ms;   /* a store's process ends after this long without a job (0: after each job) */
    char **allow;             /* opted-in workspaces (canonical paths as written) */
    size_t n_allow;
    char **exclude;           /* extra exclude patterns (gitignore syntax) */
    size_t n_exclude;
} snap_conf;

void snap_conf_defaults(snap_conf *c);
void snap_conf_free(snap_conf *c);
/* One key of [snapshots]: 0, or -1 with the message in err. */
int snap_conf_set(snap_conf *c, const char *key, const char *value, char *err, size_t errlen);
/* Deep copy (for the snapshot workers, which outlive a config reload). */
void snap_conf_copy(snap_conf *dst, const snap_conf *src);
/* Whether a and b are the same settings. */
bool snap_conf_equal(const snap_conf *a, const snap_conf *b);
/* Whether the user opted in workspace ws (a canonical path). */
bool snap_conf_allows(const snap_conf *c, const char *ws);

#endif
