/*
 * eventlog.h - a session's append-only event log, events.jsonl
 * (docs/formats.md): one JSON object per line with "time" (ISO-8601 UTC),
 * "event" and the event's fields.  Each line is written with one write(2)
 * so a crash never leaves half a line behind.
 *
 * Included by src/record/, src/server/ and src/gate/.
 */
#ifndef CORRAL_EVENTLOG_H
#define CORRAL_EVENTLOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct eventlog eventlog_t;

eventlog_t *eventlog_open(const char *path, char *err, size_t errlen);
/* Append {"time":..., "event":name, ...fields}; steals fields (may be
 * NULL).  durable: fsync before returning (for decisions that must survive
 * a crash).  0 or -errno. */
int eventlog_write(eventlog_t *el, const char *name, json_t *fields, bool durable);
void eventlog_close(eventlog_t *el);

#endif
