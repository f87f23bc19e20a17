/*
 * fuzz_castread.c - libFuzzer target for the asciicast reader
 * (src/record/castread.c) that `corral replay`, the screen's replay and export
 * read recordings with.  A recording holds whatever a session printed:
 * hostile bytes.
 *
 * What a user would notice, checked beyond "no crash, no leak":
 *  - nothing the reader says reaches a terminal raw: every warning and
 *    error is valid UTF-8 without control characters (an ESC there would
 *    be the recording's own escape sequence acting on the user's terminal);
 *  - times are finite and never negative, sizes never negative, event
 *    offsets and line numbers move forward inside the recording;
 *  - a second pass that skips decoding output (the markers-and-length
 *    pass) sees the same events, and going back to an event's offset reads
 *    that event again (the replay's jumps).
 *
 * make check runs it over tests/fuzz/corpus/castread with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/castread.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* At most this many events are compared (an input of a few kilobytes has
 * fewer; the cap keeps one input a moment's work). */
#define MAX_EVENTS 512

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_castread: %s: %s\n", what, detail);
    abort();
}

/* Shown to a person as it is: valid UTF-8, no C0 or C1 control, no DEL. */
static void check_shown(const char *msg, const char *what)
{
    size_t len = strlen(msg);
    if (!len)
        broken("an empty message", what);
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t n = utf8_decode(msg + i, len - i, &cp);
        if (cp < 0)
            broken("a message that is not UTF-8", what);
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            broken("a message with a control character in it", what);
        i += n;
    }
}

static void on_warning(void *user, const char *msg)
{
    (void)user;
    check_shown(msg, "warning");
}

struct seen {
    double time;
    cast_kind kind;
    size_t offset;
    unsigned long line;
    long cols, rows;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024] = "";
    castread_t *r = castread_open_memory("fuzz.cast", (const char *)data, size, on_warning, NULL, err, sizeof err);
    if (!r) {
        check_shown(err, "open");
        return 0;
    }
    const cast_header *h = castread_header(r);
    if (h->version != 2 || h->width < 0 || h->height < 0 || !isfinite(h->timestamp) ||
        !isfinite(h->idle_time_limit))
        broken("a header with a value no recording can have", "");
    if (castread_size(r) != size)
        broken("a recording of another size", "");

    static struct seen ev1[MAX_EVENTS];
    size_t n = 0;
    size_t last_offset = 0;
    unsigned long last_line = 1;
    for (;;) {
        cast_event ev;
        err[0] = '\0';
        int rc = castread_next(r, &ev, true, err, sizeof err);
        if (rc < 0) {
            check_shown(err, "event");
            break;
        }
        if (rc == 0 || n == MAX_EVENTS)
            break;
        if (!isfinite(ev.time) || ev.time < 0)
            broken("an event time that is not a finite, non-negative number", "");
        if (ev.offset >= size || (n && ev.offset <= last_offset) || ev.line <= last_line)
            broken("an event that does not move forward in the recording", "");
        if (ev.kind == CAST_RESIZE && (ev.cols < 0 || ev.rows < 0))
            broken("a negative size", "");
        if (ev.kind != CAST_OTHER && (!ev.data || ev.data[ev.len] != '\0'))
            broken("event data that is missing or not terminated", "");
        ev1[n++] = (struct seen){ev.time, ev.kind, ev.offset, ev.line, ev.cols, ev.rows};
        last_offset = ev.offset;
        last_line = ev.line;
    }

    /* The pass that does not decode output sees the same events. */
    castread_rewind(r);
    for (size_t i = 0; i < n; i++) {
        cast_event ev;
        if (castread_next(r, &ev, false, err, sizeof err) != 1)
            broken("an event the second pass does not read", "");
        if (ev.time != ev1[i].time || ev.kind != ev1[i].kind || ev.offset != ev1[i].offset ||
            ev.line != ev1[i].line || ev.cols != ev1[i].cols || ev.rows != ev1[i].rows)
            broken("an event read differently by the second pass", "");
    }
    /* A jump back to an event reads it again: the middle one, then the first. */
    size_t picks[2] = {n / 2, 0};
    for (size_t k = 0; k < 2 && n; k++) {
        const struct seen *want = &ev1[picks[k]];
        castread_seek(r, want->offset, want->line);
        cast_event ev;
        if (castread_next(r, &ev, true, err, sizeof err) != 1 || ev.offset != want->offset ||
            ev.time != want->time || ev.kind != want->kind)
            broken("a jump to an event that reads another", "");
    }
    castread_close(r);
    return 0;
}
