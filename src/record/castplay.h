/*
 * castplay.h - a recording played into corral's terminal model, step by
 * step: what `corral replay` draws, and what the supervisor screen's replay
 * is meant to draw in a pane.  No terminal I/O and no clock: the caller
 * says how far to play (in play time, below) and draws the model
 * (castplay_vt) itself.  What the recording prints goes to the model only,
 * whose answers to queries are dropped.
 *
 * Play time is the recording's time with every pause between two events
 * cut to the idle limit (asciinema's idle_time_limit), so a recording that
 * waited an hour for a human plays on after a moment.
 *
 * Commands are marked in the recording by "m" events (docs/formats.md):
 * "cmd N: COMMAND LINE" where command N starts and "cmd N end: exit S"
 * where it ends.  castplay_index lists them; castplay_seek jumps to one by
 * building the screen it had there (feeding everything before it at once).
 *
 * Included by src/record/, ui/ and src/cli/.
 */
#ifndef CORRAL_CASTPLAY_H
#define CORRAL_CASTPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "record/castread.h"
#include "vt/vt.h"

typedef struct castplay castplay_t;

typedef struct castplay_opts {
    double idle_limit; /* longest pause in play time; 0 keeps every pause */
    int scrollback;    /* history lines the model keeps (the server's [session] scrollback) */
} castplay_opts;

typedef struct castplay_marker {
    double time;        /* play time */
    size_t offset;      /* where its line is in the recording */
    unsigned long line;
    int command;        /* N of "cmd N: ..." or "cmd N end: ...", else 0 */
    bool end;           /* "cmd N end: exit S" */
    const char *label;  /* as recorded: sanitize before showing */
} castplay_marker;

/* A player over r (which it owns from now on, also on failure), the model
 * sized from the header (sizes beyond the model's limits, 2000 x 1000, are
 * cut to them with a warning).  NULL on error (err). */
castplay_t *castplay_new(castread_t *r, const castplay_opts *opts, char *err, size_t errlen);
void castplay_free(castplay_t *p);

castread_t *castplay_reader(const castplay_t *p);

/* The model.  A seek back replaces it: ask again after castplay_seek. */
vt_t *castplay_vt(const castplay_t *p);

/* Read the whole recording once for its markers and its length (output is
 * not decoded, nothing is fed): castplay_markers and castplay_duration
 * need it.  0, or -1 (err) for a line that is not an event. */
int castplay_index(castplay_t *p, char *err, size_t errlen);
const castplay_marker *castplay_markers(const castplay_t *p, size_t *n);
/* Play time of the last event (after castplay_index). */
double castplay_duration(const castplay_t *p);
/* The marker where command n starts, or -1. */
int castplay_find_command(const castplay_t *p, int n);
/* How many commands are marked (start markers). */
size_t castplay_command_count(const castplay_t *p);

/* Feed the events up to play time t, at most about max_bytes of output
 * (0: no limit) so that a caller stays responsive through a flood.  1 when
 * events remain, 0 when the recording has ended, -1 (err) for a line that
 * is not an event. */
int castplay_advance(castplay_t *p, double t, size_t max_bytes, char *err, size_t errlen);
/* Play time reached: that of the last event fed (0 at the start). */
double castplay_time(const castplay_t *p);
/* Play time of the next event; false at the end. */
bool castplay_next_time(castplay_t *p, double *t);
/* Markers passed so far (index into castplay_markers of the first one not
 * yet fed; after castplay_index). */
size_t castplay_markers_passed(const castplay_t *p);
/* The command whose start marker was passed last (0: none yet). */
int castplay_current_command(const castplay_t *p);

/* n and p of a replay (corral replay's and the screen's): the marker that
 * a jump forward goes to, the next command's start; or back, the start of
 * the command playing at play time now, or of the one before it when now
 * is within grace seconds of that start ((size_t)-1 when there is no such
 * command: the recording's start).  false when forward finds no command
 * after this one (there is nothing to jump to).  After castplay_index; the
 * caller seeks to *target. */
bool castplay_jump_target(const castplay_t *p, bool forward, double now, double grace, size_t *target);

/* Go to marker i (its event fed, nothing after it): forward by feeding
 * what lies between, back by starting a fresh model and feeding everything
 * before it at once.  i == (size_t)-1 goes back to the start.  0 or -1
 * (err). */
int castplay_seek(castplay_t *p, size_t i, char *err, size_t errlen);

/* Feed everything that is left, as fast as possible: the screen as the
 * recording ends.  From the start it may leave out output that cannot
 * show on the final screen (castskip.h says when).  0 or -1 (err). */
int castplay_finish(castplay_t *p, char *err, size_t errlen);
/* Where in the recording the last castplay_finish started feeding (0: it
 * fed everything). */
size_t castplay_skipped(const castplay_t *p);

/* Whether the model was resized (or replaced) since the last call. */
bool castplay_take_resized(castplay_t *p);

/* The limits of the model (vt_new's). */
#define CASTPLAY_MAX_COLS 2000
#define CASTPLAY_MAX_ROWS 1000

#endif
