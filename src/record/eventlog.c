/*
 * eventlog.c - events.jsonl writer: append-only, one write(2) per line
 * (O_APPEND, so two writers of one file never interleave within a line).
 */
#include "config.h"

#include "record/eventlog.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct eventlog {
    int fd;
};

eventlog_t *eventlog_open(const char *path, char *err, size_t errlen)
{
    /* Read too: to see how the file ends. */
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    /* A log whose last line was cut short (a crash while it was written)
     * gets its newline first: the next event is a line of its own, and
     * only the torn line is lost (readers skip it, with a warning). */
    struct stat st;
    char last;
    int rc = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
        rc = write_all(fd, "\n", 1);
    if (rc < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        close(fd);
        return NULL;
    }
    eventlog_t *el = xcalloc(1, sizeof *el);
    el->fd = fd;
    return el;
}

int eventlog_write(eventlog_t *el, const char *name, json_t *fields, bool durable)
{
    if (!el) {
        json_decref(fields);
        return -EBADF;
    }
    char when[32];
    iso_time(when, wall_sec());
    json_t *o = json_object();
    json_object_set_new(o, "time", json_string(when));
    json_object_set_new(o, "event", json_string(name));
    if (fields) {
        json_object_update(o, fields);
        json_decref(fields);
    }
    /* Twelve significant digits: 0.004, not 0.0040000000000000001. */
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    json_decref(o);
    if (!s)
        return -ENOMEM;
    size_t n = strlen(s);
    s = xrealloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = '\0';
    int rc = write_all(el->fd, s, n + 1);
    free(s);
    if (rc == 0 && durable && fsync(el->fd) < 0)
        rc = -errno;
    return rc;
}

void eventlog_close(eventlog_t *el)
{
    if (!el)
        return;
    close(el->fd);
    free(el);
}
