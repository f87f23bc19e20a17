/*
 * castread.h - reading an asciicast v2 recording (docs/formats.md): the
 * header, then one event per line, [time, code, data].  No terminal I/O:
 * `corral replay` and the supervisor screen's replay both read through it.
 *
 * A recording is hostile input (anything a session printed is in it): the
 * reader only decodes it, and nothing it returns is meant for a real
 * terminal (castplay.h feeds it to a terminal model).  A torn last line (a
 * crash or a cut mid-write, or a live session's recording caught
 * mid-flush) is skipped with a warning; any other line that is not an event
 * is an error naming the file and the line.  What a warning or an error
 * quotes of the recording (an event's data, a parser's "near '...'", a
 * name in an export) is made visible and cut short (quote.h); a printer
 * still quotes the whole message, which holds the path as it was given.
 *
 * Included by src/record/, ui/ and src/cli/.
 */
#ifndef CORRAL_CASTREAD_H
#define CORRAL_CASTREAD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct castread castread_t;

typedef struct cast_header {
    int version;            /* 2 */
    long width, height;     /* as recorded (castplay clamps them to the model's limits) */
    double timestamp;       /* seconds since the epoch, 0 when absent */
    double idle_time_limit; /* asciinema's header field, 0 when absent */
    const char *title;      /* NULL when absent; as recorded: sanitize before showing */
    const char *command;
} cast_header;

typedef enum cast_kind {
    CAST_OUTPUT, /* "o": bytes for the terminal */
    CAST_RESIZE, /* "r": "COLSxROWS" (cols and rows are 0 when it is not one) */
    CAST_MARKER, /* "m": a label */
    CAST_INPUT,  /* "i": what was typed */
    CAST_OTHER,  /* any other code: skipped by players */
} cast_kind;

typedef struct cast_event {
    double time;       /* seconds since the start, as recorded (never negative) */
    cast_kind kind;
    const char *data;  /* the decoded string (any bytes, NUL-terminated too); valid
                        * until the next castread call; NULL for CAST_OTHER and for
                        * an output event read with want_output false */
    size_t len;
    long cols, rows;   /* CAST_RESIZE */
    size_t offset;     /* where the event's line starts in the recording */
    unsigned long line; /* its line number (the header is line 1) */
} cast_event;

/* Where warnings go: the file and line are in msg already. */
typedef void (*castread_warn_fn)(void *user, const char *msg);

/* Open a recording: a .cast file, or an export (a name ending in .tar.gz
 * or .tgz) holding output.cast at its top level or one directory down,
 * which is read with tar(1) (spawned with an argument vector, never a
 * shell).  Reads and checks the header.  NULL on error with a message
 * naming the file in err.  warn may be NULL (warnings dropped). */
castread_t *castread_open(const char *path, castread_warn_fn warn, void *user, char *err, size_t errlen);

/* The same over bytes in memory, which are copied; name is what messages
 * call them. */
castread_t *castread_open_memory(const char *name, const char *data, size_t len, castread_warn_fn warn,
                                 void *user, char *err, size_t errlen);

void castread_close(castread_t *r);

const cast_header *castread_header(const castread_t *r);
const char *castread_name(const castread_t *r);
/* Size of the recording in bytes. */
size_t castread_size(const castread_t *r);

/* The next event: 1, or 0 at the end of the recording, or -1 for a line
 * that is not an event (err says FILE:LINE: what is wrong).  With
 * want_output false the data of output events is checked but not decoded
 * (for a pass that only looks for markers and the length). */
int castread_next(castread_t *r, cast_event *ev, bool want_output, char *err, size_t errlen);

/* Where the next event starts, and going back there (or to any offset a
 * cast_event gave, with its line number) to read it again. */
size_t castread_tell(const castread_t *r);
/* The number of the line read last (1: the header). */
unsigned long castread_line(const castread_t *r);
void castread_seek(castread_t *r, size_t offset, unsigned long line);
/* Back to the first event. */
void castread_rewind(castread_t *r);

/* A warning about the line at offset, through the warn function: each line
 * is warned about once, however often the recording is read again. */
void castread_warn(castread_t *r, size_t offset, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Decode a JSON string body (after its opening quote) at s[0..len): the
 * bytes go to out (NULL: only checked), *used gets how many input bytes it
 * took including the closing quote.  0, or -1 when it is not a valid
 * string ending before len.  Lone surrogates become U+FFFD.  (Exposed for
 * the unit tests.) */
struct buf;
int castread_json_string(const char *s, size_t len, struct buf *out, size_t *used);

#endif
