/*
 * snap_reader.h - a workspace's confined reader, the server's side
 * (docs/snapshots.md, "The reader").  The server never reads a workspace
 * for a snapshot itself: `corral __snapworker` (snap_worker.c) does, in a
 * sandbox that sees what the workspace's sessions see (the read-only
 * profile: the workspace read-only, the default deny list, every deny path
 * of the sessions there, the home hidden, no network), and sends what
 * changed over a socket.  A symlink it follows, raced in or not, leads
 * nowhere the agent could not read already.
 *
 * Lifecycle (the server's loop): snap_reader_launch starts one for a
 * workspace; it lives as long as the workspace's store is open.  The
 * conversation itself (snap_take.c) runs in the store's process, on the
 * socket the server passes it with each snapshot (snap_reader_adopt),
 * with a deadline on every message: a reader that says nothing for the stall
 * timeout is given up (snap_reader_fail), killed by the loop and started
 * afresh for the next snapshot.  The server's SIGCHLD handler hands its
 * exits to snap_reader_reaped; a program without one (the tests, the
 * benchmark driver) reaps in snap_reader_stop.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_READER_H
#define CORRAL_SNAP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct snap_reader snap_reader;

typedef struct snap_reader_spec {
    const char *ws;          /* canonical */
    char *const *deny;       /* the sessions' and the config's deny entries (as given: absolute or ~/...) */
    size_t n_deny;
} snap_reader_spec;

/* Start a reader (it sets itself up while the caller goes on).  NULL with
 * err when no sandbox can be made: snapshots are then not taken, never
 * taken unconfined. */
snap_reader *snap_reader_launch(const snap_reader_spec *spec, char *err, size_t errlen);

/* In the store's process (snap_storeproc.c): the reader the server
 * started, known by its socket (fd, taken), its deny paths (taken) and
 * whether its configuration was sent.  No process of its own here:
 * snap_reader_disown closes and frees it. */
snap_reader *snap_reader_adopt(int fd, char **deny, size_t n_deny, bool configured);
void snap_reader_disown(snap_reader *r);

/* End it: killed, and freed once reaped.  NULL is fine. */
void snap_reader_stop(snap_reader *r);

/* The server reaps every child in its SIGCHLD handler: true when pid was
 * a reader (released now).  Until snap_reader_external_reaper(true) is
 * called, snap_reader_stop waits for the process itself. */
bool snap_reader_reaped(pid_t pid, int status);
/* false again (the server stopping, its handler closed): readers already
 * stopped but not reaped are reaped now, later ones where they stop. */
void snap_reader_external_reaper(bool yes);

/* For the conversation (any thread): the socket, and the paths inside the
 * workspace the reader must leave out (relative, from the plan's masks). */
int snap_reader_fd(const snap_reader *r);
struct snap_wire_inbox *snap_reader_inbox(snap_reader *r);
char *const *snap_reader_deny(const snap_reader *r, size_t *n);

/* The conversation went wrong (a stall, a malformed message, the end of
 * the socket): why, for the loop to kill and replace it.  The first
 * reason is kept. */
void snap_reader_fail(snap_reader *r, const char *why);
bool snap_reader_failed(const snap_reader *r);
const char *snap_reader_why(const snap_reader *r);
/* Whether the configuration and stat cache were sent (snap_take.c). */
bool snap_reader_configured(const snap_reader *r);
void snap_reader_set_configured(snap_reader *r);

/* Its sandbox's own error (setup failed), when the init said one; NULL
 * otherwise.  Loop only. */
const char *snap_reader_setup_error(snap_reader *r);

/* How long a reader may stay silent during a snapshot before it is given
 * up ([snapshots] stall-timeout), in ms. */
void snap_reader_set_stall_ms(int ms);
int snap_reader_stall_ms(void);

/* Kill every reader now (the server is stopping: whatever they do, the
 * snapshot jobs waiting on them end at once). */
void snap_reader_kill_all(void);

#endif
