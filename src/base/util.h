/*
 * util.h - small helpers every module uses: allocation that never returns
 * NULL (corral aborts with a message instead of limping on), a growable byte
 * buffer, clocks and random numbers.
 *
 * Included by src/base/, src/config/, src/protocol/, src/vt/, src/policy/,
 * src/record/, src/net/, src/server/, src/snap/, src/gate/, src/mcp/, ui/ and
 * src/cli/.
 */
#ifndef CORRAL_UTIL_H
#define CORRAL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/utf8.h" /* the UTF-8 decoder and encoder, which many users of util.h want */

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A copy of a NULL-terminated string list (an argv; NULL stays NULL), and
 * freeing one (NULL is fine). */
char **strv_copy(char *const *v);
void strv_free(char **v);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable byte buffer; data is always NUL-terminated for convenience. */
typedef struct buf {
    char *data;
    size_t len;
    size_t cap;
} buf_t;

void buf_init(buf_t *b);
void buf_free(buf_t *b);
void buf_reserve(buf_t *b, size_t extra);
void buf_append(buf_t *b, const void *data, size_t len);
void buf_puts(buf_t *b, const char *s);
void buf_putc(buf_t *b, char c);
void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_consume(buf_t *b, size_t n); /* drop n bytes from the front */
void buf_reset(buf_t *b);             /* len = 0, keep memory */
char *buf_steal(buf_t *b);            /* hand over data, leave b empty */

/* Milliseconds on the monotonic clock. */
uint64_t now_ms(void);
/* Seconds on the monotonic clock, with sub-microsecond resolution. */
double now_sec(void);
/* Wall-clock seconds since the epoch. */
double wall_sec(void);
/* ISO-8601 UTC time with milliseconds, e.g. 2026-11-29T07:30:01.123Z. */
void iso_time(char out[32], double wall);

/* Uniform random integer in [lo, hi); from getrandom(2). */
uint32_t random_range(uint32_t lo, uint32_t hi);
void random_bytes(void *out, size_t n);

/* mkdir -p with the given mode for every directory it creates.  0 or -errno
 * (-ENOTDIR when path is there but not a directory). */
int mkdir_p(const char *path, unsigned mode);

/* The value of a hexadecimal digit (0-9, a-f, A-F), or -1. */
int hex_value(int c);

/* Write all of buf to fd, retrying on EINTR/partial writes. 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);
/* The same to a socket without SIGPIPE: a peer (a server, an ssh link, a
 * reader) that went away is an error to report (-EPIPE), not a signal that
 * ends the process. */
int send_all(int fd, const void *buf, size_t len);

/* Append what fd holds from here to its end to out (a NUL follows it,
 * not counted in out->len), retrying on EINTR.  0; -EFBIG when it holds
 * more than max bytes (out then holds the first max); -errno when a read
 * fails.  The one read-a-whole-file loop: what each caller wants of a
 * short or long file (refuse it, keep its start) stays with the caller. */
int read_all(int fd, size_t max, buf_t *out);

/* n bytes as people read them: "512 B", "1.5 KiB", "2.0 GiB" (compact:
 * "512B", "1.5K", "2.0G", for a status bar). */
void format_bytes(double n, bool compact, char *out, size_t len);

/* Replace control characters (C0, DEL, C1) and invalid UTF-8 in s with '?'
 * (one for each invalid subpart, see utf8_decode) so that text from
 * outside can be shown or logged safely.  Returns a new
 * string cut to at most max bytes (on a character boundary). */
char *sanitize_text(const char *s, size_t len, size_t max);

#endif
