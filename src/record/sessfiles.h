/*
 * sessfiles.h - where a recorded session's files are, for those that read
 * them (corral log, the supervisor screen's review): a session's directory
 * in the state directory by its name (7; 7.1 for an older session the id was
 * drawn again for, docs/formats.md) or any directory or events.jsonl given
 * as a path; the sessions recorded there, newest first; and a quick look at
 * one (its start and its end) for a list.  Files only: no server, no event
 * loop, nothing printed.
 *
 * Included by src/record/, src/server/ (the records command), ui/ and
 * src/cli/.
 */
#ifndef CORRAL_SESSFILES_H
#define CORRAL_SESSFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "record/timeline.h"

/* Whether s names a session directory: ID or ID.N (digits). */
bool sessfiles_name_ok(const char *s);

typedef struct sessfiles {
    char *state;     /* the state directory */
    char *dir;       /* the session's directory */
    char *events;    /* its events.jsonl */
    char *approvals; /* approvals.jsonl beside the sessions (exec approvals' requests) */
    char *cast;      /* its recording, output.cast */
    bool by_name;    /* arg was a name in the state directory (not a path) */
} sessfiles;

/* The files of arg: a name (sessfiles_name_ok) in the state directory, or a
 * path (one with a '/'): a session's directory, or its events.jsonl (the
 * other files are then looked for beside it).  Nothing is checked. */
void sessfiles_for(const char *arg, sessfiles *out);
void sessfiles_free(sessfiles *f);

typedef struct sessfiles_rec {
    char name[32];  /* the directory's name: 7, 7.1 */
    double mtime;   /* when its events.jsonl was last written (seconds since the epoch) */
} sessfiles_rec;

/* The sessions recorded in the state directory (directories named as
 * sessfiles_name_ok with an events.jsonl), the most recently written
 * first; since > 0: only those written at or after it.  0 with *out
 * (malloc'd, NULL when none) and *n; -1 with err when the directory exists
 * but cannot be read (none at all is 0 sessions).  *root (may be NULL):
 * the directory listed, to free. */
int sessfiles_list(double since, sessfiles_rec **out, size_t *n, char **root, char *err, size_t errlen);

/* A quick look at a session for a list: its events.jsonl's first line
 * (the session's start: id, name, client, workspace) and its last 64 KiB
 * (its end) as a timeline, whatever the file's size.  Entries in between
 * are left out: for tl's header fields only.  0, or -1 (err) when events
 * cannot be read; free tl with tl_free in either case. */
int sessfiles_glance(const char *events, timeline_t *tl, char *err, size_t errlen);

#endif
