/*
 * cmdmark.h - a command's start and end in its session's files
 * (docs/formats.md): the events command_started and command_ended in
 * events.jsonl, and the asciicast markers "cmd N: LINE" and "cmd N end:
 * exit S" in output.cast, so that corral log, corral replay and any
 * asciicast player can find each command.  The commands and their
 * numbers are the snapshot module's (snap_server.c): the numbers corral
 * diff shows.
 *
 * Included by src/server/ and src/snap/.
 */
#ifndef CORRAL_CMDMARK_H
#define CORRAL_CMDMARK_H

#include <stdbool.h>

#include "server/session.h"

/* Command n of s started now, line as shown (the typed line, the argv
 * quoted), in directory cwd (NULL: the session's).  by: NULL for what the
 * session runs; for an action a client does on the session (a revert), the
 * client's name, written as the event's "by". */
void cmdmark_start(session_t *s, int n, const char *line, const char *cwd, const char *by);
/* It ended now, started (wall clock) seconds ago; its status when known. */
void cmdmark_end(session_t *s, int n, bool has_exit, int exit_code, double started);

#endif
