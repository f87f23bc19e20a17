/*
 * reccopy.h - another machine's records copied here: a private directory
 * to hold them, and one file copied chunk by chunk through that server's
 * records command (docs/protocol.md, "records").  corral -H log, replay
 * and export copy with it one request at a time (src/cli/cli_records.c);
 * the supervisor screen copies a session it shows from another machine
 * the same way, one chunk per reply, on its loop (ui/remoterec.c).
 *
 * What the other machine sends is hostile: a file is taken only up to the
 * size the server announced with its first chunk (a live session's file
 * grows meanwhile) and at most RECCOPY_MAX_FILE; a chunk for another
 * offset than the one asked for, or that is not base64, ends the copy;
 * every file is created new (O_EXCL, no symlink followed), mode 0600, in
 * the private directory (0700), and a copy that fails is removed, so
 * nothing half copied is read as the whole file.
 *
 * Included by src/record/, src/cli/ and ui/.
 */
#ifndef CORRAL_RECCOPY_H
#define CORRAL_RECCOPY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A larger file is refused: a recording of days of output stays well
 * below, and a server that sends more is not to be believed. */
#define RECCOPY_MAX_FILE (4ll << 30)

/* A new private directory, $TMPDIR/corral-records-PID-XXXXXX (mode 0700,
 * with corral/sessions/ inside, so that it can stand for a state
 * directory), after removing those of runs that are gone (killed before
 * they could remove theirs).  The path (caller frees), or NULL with err. */
char *reccopy_space_begin(char *err, size_t errlen);
/* Remove it and everything in it. */
void reccopy_space_end(const char *root);

typedef struct reccopy {
    int fd;
    char *path;
    char *session;      /* NULL: a file of the state directory (approvals.jsonl) */
    char *file;         /* events.jsonl, output.cast, approvals.jsonl */
    long long size;     /* as announced by the first chunk; -1 before it */
    long long offset;   /* copied so far */
} reccopy;

/* Start copying session's file (session NULL: the state directory's) into
 * path, created new.  0, or -1 with err. */
int reccopy_open(reccopy *c, const char *session, const char *file, const char *path, char *err, size_t errlen);
/* The request for the next chunk (caller sends it). */
json_t *reccopy_request(const reccopy *c);
/* Take the reply to it (an ok reply: error replies are the caller's to
 * read).  1: ask for the next chunk; 0: the file is whole; -1 with err
 * (a chunk that does not fit, or a write that failed). */
int reccopy_take(reccopy *c, json_t *reply, const char *from, char *err, size_t errlen);
/* Close it; unless kept, the file is removed. */
void reccopy_close(reccopy *c, bool keep);

#endif
