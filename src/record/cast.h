/*
 * cast.h - asciicast v2 recording of a session's terminal output
 * (docs/formats.md): a JSON header line, then one JSON array per event:
 * [seconds, "o", text] for output, [seconds, "r", "COLSxROWS"] for a
 * resize, [seconds, "m", label] for the exit marker.  Plays with
 * `asciinema play` and `asciinema cat`.
 *
 * Included by src/record/ and src/server/.
 */
#ifndef CORRAL_CAST_H
#define CORRAL_CAST_H

#include <stddef.h>

#include "base/util.h"

typedef struct cast cast_t;

/* Create path (must not exist) and write the header.  NULL on error with a
 * message in err. */
cast_t *cast_open(const char *path, int cols, int rows, double timestamp, const char *command,
                  const char *title, const char *term, char *err, size_t errlen);
/* Output bytes at t seconds since the start; any split of UTF-8 is fine. */
void cast_output(cast_t *c, double t, const char *data, size_t len);
void cast_resize(cast_t *c, double t, int cols, int rows);
void cast_marker(cast_t *c, double t, const char *label);
/* Write buffered events to the file.  0 or -errno (the first write error is
 * remembered and reported again by cast_close). */
int cast_flush(cast_t *c);
/* Bytes waiting in memory. */
size_t cast_buffered(const cast_t *c);
/* Flush and close; 0 or -errno. */
int cast_close(cast_t *c);

/* Append s as the body of a JSON string (no quotes): '"', '\\' and control
 * characters escaped, invalid UTF-8 replaced by U+FFFD.  A trailing
 * incomplete sequence is escaped as invalid too: callers hold it back. */
void json_escape_utf8(buf_t *out, const char *s, size_t len);

#endif
