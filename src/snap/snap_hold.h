/*
 * snap_hold.h - an agent's exec is reported finished only once its
 * command's record is written (docs/snapshots.md, "What a command is"):
 * by then the snapshot after it is taken and a repository it planted is
 * inert (git_quarantine.h), so a harness that runs git as soon as the
 * reply comes (agents' own turn diffs do) meets nothing it left.  A record
 * that takes longer than SNAP_HOLD_MS (the workspace's first snapshot
 * still running, say) does not hold the reply longer.  Loop only.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_HOLD_H
#define CORRAL_SNAP_HOLD_H

#include <stdbool.h>

struct session;
struct snap_cmd;

#define SNAP_HOLD_MS 5000

typedef void (*snap_hold_fn)(void *user);

/* Session s (an exec) has exited: when its command's record is still to
 * be written, done(user) is called once it is, or after SNAP_HOLD_MS, and
 * true is returned; false when there is nothing to wait for. */
bool snap_hold_reply(struct session *s, snap_hold_fn done, void *user);

/* The record of c was written (snap_server.c). */
void snap_hold_record_written(struct snap_cmd *c);

/* The server stops: every held reply goes now. */
void snap_hold_release_all(void);

#endif
