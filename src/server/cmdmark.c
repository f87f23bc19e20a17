/*
 * cmdmark.c - see cmdmark.h.
 */
#include "config.h"

#include "server/cmdmark.h"

#include "record/eventlog.h"
#include "record/timeline.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Text from a session (a typed line, a path) as a JSON string: bytes that
 * are not UTF-8 become U+FFFD rather than losing the event. */
static json_t *text(const char *s)
{
    size_t n;
    char *fixed = uexec_lossy_utf8(s, strlen(s), &n);
    json_t *j = json_stringn(fixed, n);
    free(fixed);
    return j ? j : json_string("");
}

void cmdmark_start(session_t *s, int n, const char *line, const char *cwd, const char *by)
{
    if (!s || n <= 0)
        return;
    if (!line)
        line = "";
    free(s->running_line);
    s->running_line = xstrdup(line);
    s->running_n = n;
    char *label = tl_marker_start(n, line);
    session_marker(s, label);
    free(label);
    json_t *f = json_object();
    json_object_set_new(f, "command", json_integer(n));
    json_object_set_new(f, "line", text(line));
    json_object_set_new(f, "cwd", text(cwd ? cwd : s->cwd));
    if (by)
        json_object_set_new(f, "by", text(by));
    eventlog_write(s->events, "command_started", f, false);
}

void cmdmark_end(session_t *s, int n, bool has_exit, int exit_code, double started)
{
    if (!s || n <= 0)
        return;
    if (s->running_n == n) {
        free(s->running_line);
        s->running_line = NULL;
        s->running_n = 0;
    }
    char *label = tl_marker_end(n, has_exit, exit_code);
    session_marker(s, label);
    free(label);
    json_t *f = json_object();
    json_object_set_new(f, "command", json_integer(n));
    if (has_exit)
        json_object_set_new(f, "exit_code", json_integer(exit_code));
    double d = wall_sec() - started;
    json_object_set_new(f, "duration_seconds", json_real(d > 0 ? (double)(long long)(d * 1000 + 0.5) / 1000 : 0));
    eventlog_write(s->events, "command_ended", f, false);
}
