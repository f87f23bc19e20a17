/*
 * cast.c - asciicast v2 writer.  Output events are escaped straight into a
 * memory buffer that is written out when it passes 64 KiB or when the owner
 * flushes (a timer in the server, and at exit), so a flood of output costs
 * one write per 64 KiB rather than one per PTY read.
 */
#include "config.h"

#include "record/cast.h"
#include "protocol/uexec.h"
#include "base/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAST_FLUSH_AT (64u * 1024u)

struct cast {
    int fd;
    int error;      /* first write error, as -errno */
    buf_t buf;
    char carry[4];  /* incomplete UTF-8 sequence held for the next event */
    size_t carry_len;
    double last_t;  /* timestamps never go backwards */
};

void json_escape_utf8(buf_t *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    buf_reserve(out, len + len / 8 + 8);
    while (i < len) {
        size_t run = i;
        while (run < len && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) {
            buf_append(out, u + i, run - i);
            i = run;
            continue;
        }
        unsigned c = u[i];
        if (c < 0x80) {
            char esc[7];
            switch (c) {
            case '"': buf_append(out, "\\\"", 2); break;
            case '\\': buf_append(out, "\\\\", 2); break;
            case '\n': buf_append(out, "\\n", 2); break;
            case '\r': buf_append(out, "\\r", 2); break;
            case '\t': buf_append(out, "\\t", 2); break;
            case '\b': buf_append(out, "\\b", 2); break;
            case '\f': buf_append(out, "\\f", 2); break;
            default:
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                buf_append(out, esc, 6);
            }
            i++;
            continue;
        }
        /* Non-ASCII: copy a whole valid run via the lossy decoder's rules. */
        size_t j = i;
        while (j < len && u[j] >= 0x80)
            j++;
        size_t fixed_len;
        char *fixed = uexec_lossy_utf8(s + i, j - i, &fixed_len);
        buf_append(out, fixed, fixed_len);
        free(fixed);
        i = j;
    }
}

cast_t *cast_open(const char *path, int cols, int rows, double timestamp, const char *command,
                  const char *title, const char *term, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    cast_t *c = xcalloc(1, sizeof *c);
    c->fd = fd;
    buf_init(&c->buf);
    size_t n;
    char *cmd = uexec_lossy_utf8(command, strlen(command), &n);
    char *ttl = uexec_lossy_utf8(title, strlen(title), &n);
    json_t *h = json_pack("{s:i, s:i, s:i, s:I, s:s, s:s, s:{s:s}}", "version", 2, "width", cols,
                          "height", rows, "timestamp", (json_int_t)timestamp, "command", cmd, "title",
                          ttl, "env", "TERM", term);
    free(cmd);
    free(ttl);
    char *line = h ? json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(h);
    if (!line) {
        snprintf(err, errlen, "cannot encode the cast header for %s", path);
        close(fd);
        unlink(path);
        free(c);
        return NULL;
    }
    buf_puts(&c->buf, line);
    buf_putc(&c->buf, '\n');
    free(line);
    if (cast_flush(c) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-c->error));
        cast_close(c);
        return NULL;
    }
    return c;
}

static double clamp_time(cast_t *c, double t)
{
    if (t < c->last_t)
        t = c->last_t;
    c->last_t = t;
    return t;
}

void cast_output(cast_t *c, double t, const char *data, size_t len)
{
    if (len == 0)
        return;
    if (c->carry_len) {
        /* Finish the character split across reads: take the continuation
         * bytes it still needs (stopping at anything else). */
        size_t need = utf8_lead_length((unsigned char)c->carry[0]);
        while (c->carry_len < need && len > 0 && ((unsigned char)*data & 0xc0) == 0x80) {
            c->carry[c->carry_len++] = *data++;
            len--;
        }
        if (c->carry_len < need && len == 0)
            return; /* still incomplete: wait for more */
    }
    buf_printf(&c->buf, "[%.6f, \"o\", \"", clamp_time(c, t));
    if (c->carry_len) {
        json_escape_utf8(&c->buf, c->carry, c->carry_len);
        c->carry_len = 0;
    }
    size_t complete = utf8_complete_prefix(data, len);
    json_escape_utf8(&c->buf, data, complete);
    buf_puts(&c->buf, "\"]\n");
    if (complete < len) {
        memcpy(c->carry, data + complete, len - complete);
        c->carry_len = len - complete;
    }
    if (c->buf.len >= CAST_FLUSH_AT)
        cast_flush(c);
}

void cast_resize(cast_t *c, double t, int cols, int rows)
{
    buf_printf(&c->buf, "[%.6f, \"r\", \"%dx%d\"]\n", clamp_time(c, t), cols, rows);
}

void cast_marker(cast_t *c, double t, const char *label)
{
    if (c->carry_len) {
        /* A partial character left at the end is shown as U+FFFD. */
        buf_printf(&c->buf, "[%.6f, \"o\", \"", clamp_time(c, t));
        json_escape_utf8(&c->buf, c->carry, c->carry_len);
        buf_puts(&c->buf, "\"]\n");
        c->carry_len = 0;
    }
    buf_printf(&c->buf, "[%.6f, \"m\", \"", clamp_time(c, t));
    json_escape_utf8(&c->buf, label, strlen(label));
    buf_puts(&c->buf, "\"]\n");
}

int cast_flush(cast_t *c)
{
    if (c->buf.len == 0)
        return c->error;
    if (c->error == 0) {
        int rc = write_all(c->fd, c->buf.data, c->buf.len);
        if (rc < 0)
            c->error = rc;
    }
    buf_reset(&c->buf);
    return c->error;
}

size_t cast_buffered(const cast_t *c)
{
    return c->buf.len;
}

int cast_close(cast_t *c)
{
    if (!c)
        return 0;
    cast_flush(c);
    /* No fsync: it would stall the server's loop for milliseconds at every
     * exit; the data is in the page cache and survives a server crash. */
    if (close(c->fd) < 0 && c->error == 0)
        c->error = -errno;
    int rc = c->error;
    buf_free(&c->buf);
    free(c);
    return rc;
}
