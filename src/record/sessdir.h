/*
 * sessdir.h - a session's directory on disk, read and removed from outside
 * the server's loop: $XDG_STATE_HOME/corral/sessions/NAME, where NAME is the
 * session's id, or ID.N for an older session that had the same id
 * (docs/formats.md).  What corral export and retention need of it: its
 * events.jsonl read line by line (a torn last line, from a crash in the
 * middle of a write, is skipped and counted, never fatal), the facts that
 * say when it ended and whether that is proven, its size, and its removal
 * without following a symbolic link anywhere.
 *
 * Included by src/record/, src/cli/ and ui/ (remoterec.c).
 */
#ifndef CORRAL_SESSDIR_H
#define CORRAL_SESSDIR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether name is a session directory's name: ID or ID.N (digits). */
bool sessdir_name_ok(const char *name);
/* $XDG_STATE_HOME/corral/sessions; caller frees. */
char *sessdir_root(void);

/* "2026-11-29T07:41:25.035Z" -> seconds since the epoch; -1 if it is not
 * such a time. */
double sessdir_parse_time(const char *iso);

typedef struct sessdir_read_stats {
    long lines;     /* complete lines read */
    long bad;       /* lines that are not a JSON object (skipped) */
    long first_bad; /* the number of the first of them (1-based), 0 if none */
    bool torn;      /* the file ends in the middle of a line (skipped) */
} sessdir_read_stats;

/* Called with each event of events.jsonl in order (event: its "event"
 * field, "" when it has none); a non-zero return stops the reading and is
 * returned. */
typedef int (*sessdir_event_fn)(json_t *ev, const char *event, void *user);

/* Read path, at most limit bytes (0: all of it), event by event; only:
 * NULL, or a NULL-terminated list of the event names wanted (other lines
 * are passed over without being parsed).  0 (or what fn returned), or -1
 * with err when the file cannot be read. */
int sessdir_read_events(const char *path, uint64_t limit, const char *const *only, sessdir_event_fn fn, void *user,
                        sessdir_read_stats *st, char *err, size_t errlen);

/* What retention knows of one session directory. */
typedef struct sessdir_probe {
    char name[32];
    dev_t dev;
    ino_t ino;
    int id;              /* from its created event, else from its name */
    double created;      /* the created event's time; 0 when there is none */
    long long cast_start; /* output.cast's header timestamp (whole seconds); -1 when unknown */
    long pid;            /* its init's pid (created event); 0 when unknown */
    bool exited;         /* events.jsonl records its end */
    long long events_bytes; /* the size of events.jsonl; -1 when there is none */
    bool events_read;    /* sessdir_probe_events has read it (id, created, pid, exited) */
    double last_change;  /* the newest modification time of its files (or the directory) */
    uint64_t bytes;      /* disk use of everything in it */
} sessdir_probe;

/* Probe root/name: its size, times and cast header (cheap: stat calls
 * and one line).  0, or -1 with err (not a directory, unreadable). */
int sessdir_probe_dir(const char *root, const char *name, sessdir_probe *p, char *err, size_t errlen);
/* Then what its events.jsonl says (id, created, pid, exited): read only
 * for a directory that may go (once). */
void sessdir_probe_events(const char *root, sessdir_probe *p);

/* Whether the session of p (its events read) has provably ended, for a caller that already
 * knows it is not one of its server's own sessions: its end is recorded;
 * or its init (pid) is gone or is another process now; or it has no events
 * at all and its directory is older than a minute (a session writes its
 * created event as it starts).  why: what proves it, or why
 * it cannot be proven. */
bool sessdir_proven_ended(const sessdir_probe *p, double now, char *why, size_t whylen);

/* Remove root/name and everything in it, through directory descriptors,
 * never following a symbolic link (one inside is removed as a link).
 * 0, or -1 with err (what is left stays). */
int sessdir_remove(const char *root, const char *name, char *err, size_t errlen);

/* Disk use of a file or a tree under at/name (not following links). */
uint64_t sessdir_du(int at, const char *name);

#endif
