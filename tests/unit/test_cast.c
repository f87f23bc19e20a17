/* Unit tests for the asciicast v2 writer and the events log: every line is
 * valid JSON of the right shape, UTF-8 split across reads comes out whole,
 * invalid bytes become U+FFFD, resize and exit marker events are written. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/cast.h"
#include "record/eventlog.h"

static char dir[] = "/tmp/corral-test-cast-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* Read path and return its lines parsed as JSON (NULL-terminated). */
static json_t **read_lines(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    json_t **out = calloc(1000, sizeof *out);
    char line[65536];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t err;
        out[n] = json_loads(line, 0, &err);
        if (!out[n])
            fail_msg("line %zu is not JSON: %s (%s)", n + 1, err.text, line);
        n++;
    }
    fclose(f);
    *count = n;
    return out;
}

static void free_lines(json_t **l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(l[i]);
    free(l);
}

static void cast_header_and_events(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/a.cast", dir);
    cast_t *c = cast_open(path, 80, 24, 1700000000.5, "bash -l", "build", "xterm-256color", err, sizeof err);
    assert_non_null(c);
    cast_output(c, 0.1, "hello \"world\"\r\n", 15);
    cast_resize(c, 0.2, 100, 30);
    /* "é" split across two reads, then an invalid byte, then ESC. */
    cast_output(c, 0.3, "caf\xc3", 4);
    cast_output(c, 0.4, "\xa9 \xff\x1b[0m", 7);
    cast_marker(c, 0.5, "exited with code 0");
    assert_int_equal(cast_close(c), 0);

    size_t n;
    json_t **l = read_lines(path, &n);
    assert_int_equal(n, 6);
    assert_int_equal(json_integer_value(json_object_get(l[0], "version")), 2);
    assert_int_equal(json_integer_value(json_object_get(l[0], "width")), 80);
    assert_int_equal(json_integer_value(json_object_get(l[0], "height")), 24);
    assert_int_equal(json_integer_value(json_object_get(l[0], "timestamp")), 1700000000);
    assert_string_equal(json_string_value(json_object_get(l[0], "command")), "bash -l");
    assert_string_equal(json_string_value(json_object_get(l[0], "title")), "build");
    assert_string_equal(json_string_value(json_array_get(l[1], 1)), "o");
    assert_string_equal(json_string_value(json_array_get(l[1], 2)), "hello \"world\"\r\n");
    assert_string_equal(json_string_value(json_array_get(l[2], 1)), "r");
    assert_string_equal(json_string_value(json_array_get(l[2], 2)), "100x30");
    assert_string_equal(json_string_value(json_array_get(l[3], 2)), "caf");
    assert_string_equal(json_string_value(json_array_get(l[4], 2)), "\xc3\xa9 \xef\xbf\xbd\x1b[0m");
    assert_string_equal(json_string_value(json_array_get(l[5], 1)), "m");
    assert_string_equal(json_string_value(json_array_get(l[5], 2)), "exited with code 0");
    /* Times are increasing seconds. */
    for (size_t i = 2; i < n; i++)
        assert_true(json_real_value(json_array_get(l[i], 0)) >= json_real_value(json_array_get(l[i - 1], 0)));
    free_lines(l, n);
}

static void cast_refuses_to_overwrite(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/b.cast", dir);
    cast_t *c = cast_open(path, 80, 24, 0, "x", "x", "dumb", err, sizeof err);
    assert_non_null(c);
    cast_close(c);
    assert_null(cast_open(path, 80, 24, 0, "x", "x", "dumb", err, sizeof err));
    assert_non_null(strstr(err, path));
}

static void cast_large_output_flushes(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/c.cast", dir);
    cast_t *c = cast_open(path, 80, 24, 0, "seq", "seq", "dumb", err, sizeof err);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 100; i++)
        cast_output(c, i * 0.001, chunk, sizeof chunk);
    /* Over 64 KiB was written out without an explicit flush. */
    assert_true(cast_buffered(c) < 100 * sizeof chunk);
    assert_int_equal(cast_close(c), 0);
    size_t n;
    json_t **l = read_lines(path, &n);
    assert_int_equal(n, 101);
    free_lines(l, n);
}

static void events_log_lines(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    eventlog_t *el = eventlog_open(path, err, sizeof err);
    assert_non_null(el);
    assert_int_equal(eventlog_write(el, "created", json_pack("{s:i}", "session", 1234), false), 0);
    assert_int_equal(eventlog_write(el, "exited", json_pack("{s:i}", "code", 3), true), 0);
    eventlog_close(el);
    size_t n;
    json_t **l = read_lines(path, &n);
    assert_int_equal(n, 2);
    assert_string_equal(json_string_value(json_object_get(l[0], "event")), "created");
    assert_int_equal(json_integer_value(json_object_get(l[0], "session")), 1234);
    assert_non_null(json_string_value(json_object_get(l[1], "time")));
    assert_int_equal(json_integer_value(json_object_get(l[1], "code")), 3);
    free_lines(l, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cast_header_and_events),
        cmocka_unit_test(cast_refuses_to_overwrite),
        cmocka_unit_test(cast_large_output_flushes),
        cmocka_unit_test(events_log_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
