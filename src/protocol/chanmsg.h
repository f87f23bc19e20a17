/*
 * chanmsg.h - one message of a session's channel (sesschan.h), decoded.
 *
 * Every byte a sandboxed process sends over its channel is hostile.  The
 * shape of a message (that it is UTF-8 JSON, an object with a known verb
 * and a cwd, and the fields its verb needs, of the right types and sizes)
 * is checked here, once, without I/O or server state, so that it can be
 * unit-tested and fuzzed (tests/fuzz/fuzz_chanmsg.c).  What a well-formed
 * message asks is judged elsewhere: sesschan.c (the listeners, and who may
 * ask), escalation.c (the paths resolved against the session's writable
 * roots, the gate), snap_server.c (a line's end).
 *
 * Included by src/protocol/, src/server/, src/snap/ and src/gate/.
 */
#ifndef CORRAL_CHANMSG_H
#define CORRAL_CHANMSG_H

#include <stdbool.h>
#include <stddef.h>

/* The largest message the channel takes (a bigger one is dropped). */
#define CHAN_MSG_MAX (64 * 1024)
/* An escalation's arguments, at most. */
#define CHAN_ARGV_MAX 1024
/* A reason, at most, in bytes once made visible. */
#define CHAN_REASON_MAX 1000

typedef enum { CHAN_ESCALATE, CHAN_CHECK, CHAN_MARK, CHAN_LISTENERS } chan_verb;

typedef struct chan_msg {
    chan_verb verb;
    char *cwd; /* every verb: as sent (escalation.c resolves it) */
    /* escalate */
    char **argv;  /* NULL-terminated, 1 to CHAN_ARGV_MAX words, the first not empty */
    char **write; /* NULL, or NULL-terminated and non-empty, as sent */
    bool network;
    char *reason; /* NULL, or made visible (sanitize_text): no control characters, at most CHAN_REASON_MAX bytes */
    /* check */
    const char *shell; /* "bash", "zsh", or "sh" for anything else */
    char *line;        /* check, and mark's start: as sent (any length the message holds, any characters) */
    /* mark: "start" (an agent's bash, path.bash: line is its command) or
     * "end" (a typed line, or with command the agent command of that
     * number) */
    bool start;
    long long status;  /* end: the exit status as sent, -1 when absent */
    long long command; /* end: the number its start was given, -1 when absent */
} chan_msg;

/* Decode data[0..len) into *m.  0 on success (free m with chan_msg_free);
 * -1 with m left empty and err set to one line of valid UTF-8 (the reply
 * the requester gets).  Never reads outside data, never keeps it. */
int chan_msg_parse(const char *data, size_t len, chan_msg *m, char *err, size_t errlen);
void chan_msg_free(chan_msg *m);

#endif
