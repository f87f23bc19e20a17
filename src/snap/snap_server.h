/*
 * snap_server.h - workspace snapshots in the server (docs/snapshots.md):
 * the calls the rest of the server makes at command boundaries.  A
 * command's diff is the change between the snapshot taken just before it
 * started and the one just after it ended, in its session's workspace;
 * what happened there while another command was running too is marked
 * "shared with" it.
 *
 * Boundaries: an exec request (before: the command starts once the
 * snapshot is taken; after: when it ends); a line typed in an interactive
 * bash or zsh, through the shell hook (before: the hook's check is
 * answered once it is taken; after: the next prompt's mark); any other
 * session as one command from its start to its end.
 *
 * Included by src/snap/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_SNAP_SERVER_H
#define CORRAL_SNAP_SERVER_H

#include "protocol/chanmsg.h"
#include "server/server.h"

struct snap_cmd;
/* The "before" snapshot is taken (or taking it is given up after a few
 * seconds: the command runs, marked late): start the command.  stopping:
 * the server is stopping, do not start it. */
typedef void (*snap_go_fn)(void *user, struct snap_cmd *cmd, bool stopping);

/* Snapshots as a module: the queue and its maintenance timer from start to
 * shutdown; a session's first command (a session that is not an agent's
 * exec is one command from start to end), its end marks and its JSON
 * fields ("workspace", "changes", "snapshots"); the confined readers it
 * reaps. */
extern const server_module snap_module;
/* The protocol's commands, diff and revert (snap_proto.c). */
extern const server_module snap_commands_module;

/* An exec request is about to start in workspace: true when go will be
 * called once the snapshot before it is taken; false when the workspace is
 * not snapshotted (start it now; go is never called). */
bool snap_exec_before(server_t *srv, const char *workspace, char *const *argv, const char *profile,
                      char *const *deny, snap_go_fn go, void *user);
/* The exec's session started (s NULL: it could not start). */
void snap_exec_started(server_t *srv, session_t *s, struct snap_cmd *cmd);

/* The shell hook's check of a typed line (run in cwd) was answered "run":
 * the reply {"state":"run"} is sent on reply_fd (taken) once the snapshot
 * before the line is taken. */
void snap_hook_line(server_t *srv, int session, const char *line, const char *cwd, int reply_fd);
/* A mark from the shell hook ({"verb":"mark","what":"end","status":N},
 * decoded by chanmsg.c): the line ended.  Answered on reply_fd (taken). */
void snap_hook_mark(server_t *srv, session_t *s, const chan_msg *m, int reply_fd);

/* Maintenance of every snapshot store on disk now (the gc command,
 * retention): the snapshots of the gone sessions are dropped first; force:
 * repack even when little would be gained.  done(stores, NULL, user) once
 * every store is done (stores: [{"workspace", "bytes_before",
 * "bytes_after", "sessions_dropped", "repacked", "error"?}], borrowed), or
 * done(NULL, why, user) at once when snapshots are off. */
struct snap_gc_gone;
typedef void (*snap_gc_done_fn)(json_t *stores, const char *off, void *user);
void snap_gc_all(const struct snap_gc_gone *gone, size_t n_gone, bool force, snap_gc_done_fn done, void *user);

#endif
