/*
 * snap_store.h - one workspace's snapshot store (docs/snapshots.md): a bare
 * git repository that corral owns under $XDG_STATE_HOME/corral/snapshots/,
 * one per workspace real path, used through libgit2 in the store's own
 * process (snap_storeproc.h; the server never loads libgit2).  libgit2
 * never touches the workspace: its files are read by the workspace's
 * confined reader (snap_reader.h) and their bytes hashed into the store
 * here, so nothing is ever written into the workspace or into the user's
 * own .git, and no symlink in the workspace is followed with the user's
 * rights.  A private index is the stat cache that makes a snapshot of an
 * unchanged tree a walk of stat calls.  The store's info/attributes says
 * "* -text -filter -ident" (exact bytes when a patch is made).
 *
 * In the server's case every function here runs in that process, one
 * request at a time (the workspace's queue, snap_queue.c, sends them);
 * the CLI's verbs and the tests open a store in their own process.
 *
 * Included by src/snap/ and src/cli/.
 */
#ifndef CORRAL_SNAP_STORE_H
#define CORRAL_SNAP_STORE_H

#include "snap/snap_git.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/snap_conf.h"

#define SNAP_OID_HEX 41 /* 40 hex digits and the NUL */

/* Files to store above which a snapshot writes one pack (snap_pack.h):
 * below, a few loose objects cost less than a pack the store's
 * maintenance would have to merge. */
#define SNAP_PACK_MIN 512

typedef struct snap_store {
    char *ws;        /* the workspace: a canonical path */
    char *dir;       /* the store */
    git_repository *repo;
    git_index *index; /* the stat cache: the latest snapshot's tree */
    int lock_fd;
    snap_conf conf;
    char latest[SNAP_OID_HEX]; /* the latest snapshot commit ("" before the first) */
    char latest_tree[SNAP_OID_HEX];
    /* The workspace's reader for the next snapshot (the server's queue
     * sets it; a program of its own starts one: snap_store_start_reader). */
    struct snap_reader *reader;
    bool owns_reader;
    bool force_next;    /* corral wrote into the workspace itself (a revert): walk next time */
    bool uncapped_next; /* the next snapshot is of what was there before any command
                         * ran: no new-file cap (snap_queue.c sets it) */
    char **seeded;      /* packs copied from the workspace's repository for the first snapshot (snap_seed.h) */
    size_t n_seeded;
    uint64_t seeded_bytes;
    char **forget;      /* names the index refused: the reader reads them again */
    /* A snapshot storing at least pack_min files (and with no seeded
     * pack) hashes them on pack_threads threads (0: one per CPU) into one
     * pack (snap_pack.h); fewer are stored one by one as loose objects. */
    long pack_min;
    int pack_threads;
    size_t n_forget;
    /* Progress of the snapshot running now: the store's own, or (in the
     * server) its workspace entry's, which the loop reads. */
    struct snap_progress *progress;
    struct snap_progress {
        atomic_long done, total;
        atomic_int phase; /* snap_phase */
    } own_progress;
} snap_store;

typedef enum snap_phase { SNAP_IDLE, SNAP_SCANNING, SNAP_STORING, SNAP_MAINTAINING } snap_phase;

/* libgit2, once per process (snap_git.h): 0, or -1 with why in err. */
int snap_git_init(char *err, size_t errlen);
/* Why loading it failed, once a load was tried; NULL before that, or when
 * it worked (any thread; snap_git.c). */
const char *snap_git_load_failure(void);

/* The store for workspace ws (canonical) under snapdir (made if missing):
 * created on first use, locked against a second server.  conf is copied.
 * NULL with err on failure. */
snap_store *snap_store_open(const char *snapdir, const char *ws, const snap_conf *conf, char *err, size_t errlen);
void snap_store_close(snap_store *st);

/* For a program without the server's queue (the tests, the benchmark
 * driver): a reader of the store's own, with the default deny list.  0, or
 * -1 with err. */
int snap_store_start_reader(snap_store *st, char *err, size_t errlen);

/* The store directory for ws under snapdir (a hash of the path). */
char *snap_store_dir_for(const char *snapdir, const char *ws);

/* libgit2's last error, for a message. */
const char *snap_git_error(void);

/* The text of your git's global excludes file (core.excludesFile, or
 * $XDG_CONFIG_HOME/git/ignore), or NULL. */
char *snap_global_excludes(void);

/* The built-in excludes (gitignore syntax, one a line). */
extern const char snap_builtin_excludes[];

/* Disk use of a directory tree in bytes (4 KiB blocks as du counts). */
uint64_t snap_disk_usage(const char *dir);

#endif
