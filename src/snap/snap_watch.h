/*
 * snap_watch.h - the dirty bit of a workspace (snapshot workers only): an
 * inotify watch on every directory a snapshot looks at (not excluded ones,
 * not inside nested repositories, whose git directories are watched for
 * HEAD, config and hooks only).  While it says nothing happened since the
 * last snapshot, the next boundary reuses that snapshot instead of walking
 * the tree.  Whatever it cannot vouch for (no inotify, too many
 * directories, a lost event) counts as dirty: a real snapshot then runs.
 *
 * The events are read when a snapshot job starts, not by the server's
 * loop: a write that happened before a command ended is in the queue by
 * the time the loop knows the command ended, so it cannot be missed.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_WATCH_H
#define CORRAL_SNAP_WATCH_H

#include <stdbool.h>
#include <stddef.h>

typedef bool (*snap_watch_skip_fn)(const char *relpath, void *user);

/* What happened to one name in a watched directory since the last clear:
 * a name made and removed again (a sandbox's empty mount points come and
 * go with it) leaves nothing behind. */
typedef struct snap_watch_name {
    int wd;
    char *name;
    bool born;    /* its first event made it */
    bool present; /* it is there after the last event */
    bool touched; /* written, or its metadata changed */
} snap_watch_name;

typedef struct snap_watch {
    int fd;            /* the inotify instance, -1 when not watching */
    bool dirty;        /* may have changed, whatever the names say (a lost event, no watching) */
    bool hard;         /* a change no name explains (a directory itself, a git directory) */
    snap_watch_name *names; /* since the last clear */
    size_t n_names, cap_names;
    size_t changed;    /* names whose events leave a change */
    bool rescan_all;   /* a lost event: every directory is looked at again */
    char **paths;      /* by watch descriptor: the directory, workspace-relative */
    unsigned char *kinds;
    size_t cap;
    char **fresh;      /* directories created since the last scan */
    size_t n_fresh;
    size_t n_watches, budget;
    char why[160];     /* why it does not watch ("" while it does) */
} snap_watch;

/* budget: how many directories it may watch before giving up. */
void snap_watch_init(snap_watch *w, size_t budget);
void snap_watch_free(snap_watch *w);
/* Read the events waiting; true when the workspace may have changed since
 * the last snap_watch_prepare. */
bool snap_watch_poll(snap_watch *w);
/* Before a real snapshot: watch what appeared (or everything the first
 * time, or after a lost event), then start a new dirty period.  skip says
 * which directories are excluded from snapshots. */
void snap_watch_prepare(snap_watch *w, const char *ws, snap_watch_skip_fn skip, void *user);

#endif
