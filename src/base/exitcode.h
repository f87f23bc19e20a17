/*
 * exitcode.h - corral's exit statuses, the ones corral(1) documents under
 * EXIT STATUS, defined once.  Included by the command-line verbs
 * (src/cli/) and by corral mcp (src/mcp/, which may not include src/cli/);
 * no other layer exits on its own account.
 */
#ifndef CORRAL_EXITCODE_H
#define CORRAL_EXITCODE_H

/* An error corral or the server reported (said on stderr). */
#define EXIT_ERR 1
/* A usage error: an unknown verb or option, a missing or bad argument. */
#define EXIT_USAGE 2

/* The verbs whose exit status is a command's own (exec --raw, sandbox,
 * escalate) keep the shell's statuses above 124 for what went wrong before
 * or around the command: */
/* corral itself failed (exec --raw, sandbox). */
#define EXIT_OWN_ERR 125
/* The command was not run: denied, refused or failed before it started,
 * like a shell's "cannot execute" (escalate, the shell hooks' check). */
#define EXIT_NOT_RUN 126

#endif
