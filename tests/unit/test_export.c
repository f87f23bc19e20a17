/* Unit tests for what corral export and retention read of a session's
 * directory (src/record/sessdir.c, src/record/export_summary.c): session directory names,
 * events.jsonl with a torn last line and a line that is not JSON, the
 * records of the shared approvals.jsonl that belong to a session when the
 * server restarted and numbered its approvals from 1 again, and SUMMARY.md
 * showing hostile command lines as inert text. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/export_summary.h"
#include "record/sessdir.h"
#include "base/util.h"

static char *write_temp(const char *text)
{
    char *path = xstrdup("/tmp/corral-test-export-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write_all(fd, text, strlen(text)), 0);
    close(fd);
    return path;
}

static void names(void **state)
{
    (void)state;
    assert_true(sessdir_name_ok("21579"));
    assert_true(sessdir_name_ok("21579.2"));
    assert_false(sessdir_name_ok(""));
    assert_false(sessdir_name_ok(".removing-21579"));
    assert_false(sessdir_name_ok("21579."));
    assert_false(sessdir_name_ok("../21579"));
    assert_false(sessdir_name_ok("1.2.3"));
    assert_false(sessdir_name_ok("12345678901"));
    assert_true(sessdir_parse_time("2026-11-29T07:41:25.035Z") > 1795938084.9);
    assert_true(sessdir_parse_time("2026-11-29T07:41:25.035Z") < 1795938085.1);
    assert_true(sessdir_parse_time("yesterday") < 0);
    assert_true(sessdir_parse_time("2026-11-29T07:41:25.035+01:00") < 0);
}

static int count_event(json_t *ev, const char *event, void *user)
{
    (void)ev;
    if (strcmp(event, "exited") == 0)
        ++*(int *)user;
    return 0;
}

static void torn_and_bad_lines(void **state)
{
    (void)state;
    char *path = write_temp("{\"time\":\"2026-01-01T00:00:00.000Z\",\"event\":\"created\"}\n"
                            "not json\n"
                            "{\"time\":\"2026-01-01T00:00:01.000Z\", \"event\": \"exited\", \"code\":0}\n"
                            "{\"time\":\"2026-01-01T00:00:02.000Z\",\"event\":\"exi");
    sessdir_read_stats st;
    char err[200];
    int exited = 0;
    assert_int_equal(sessdir_read_events(path, 0, NULL, count_event, &exited, &st, err, sizeof err), 0);
    assert_int_equal(exited, 1);
    assert_int_equal(st.lines, 3);
    assert_int_equal(st.bad, 1);
    assert_int_equal(st.first_bad, 2);
    assert_true(st.torn);
    /* Only the wanted events are parsed, with JSON's spaces around the colon. */
    static const char *const only[] = {"exited", NULL};
    exited = 0;
    assert_int_equal(sessdir_read_events(path, 0, only, count_event, &exited, &st, err, sizeof err), 0);
    assert_int_equal(exited, 1);
    assert_int_equal(st.bad, 0);
    unlink(path);
    free(path);
    assert_int_equal(sessdir_read_events("/nonexistent/events.jsonl", 0, NULL, count_event, &exited, &st, err,
                                         sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/events.jsonl"));
}

/* Approval 1 of an earlier server, the session's approval 1 (asked from
 * inside it), and approval 1 of a later server: only the session's two. */
static void approvals_of_the_session(void **state)
{
    (void)state;
    const char *shared =
        "{\"time\":\"2026-01-01T09:00:00.000Z\",\"event\":\"approval_requested\",\"approval\":1,\"session\":77}\n"
        "{\"time\":\"2026-01-01T09:00:01.000Z\",\"event\":\"approval_decided\",\"approval\":1,\"answer\":\"deny\"}\n"
        "{\"time\":\"2026-01-02T10:00:05.000Z\",\"event\":\"approval_requested\",\"approval\":1,\"session\":42}\n"
        "{\"time\":\"2026-01-02T10:00:06.000Z\",\"event\":\"approval_decided\",\"approval\":1,\"answer\":\"once\"}\n"
        "{\"time\":\"2026-01-03T11:00:00.000Z\",\"event\":\"approval_requested\",\"approval\":1,\"session\":42}\n"
        "{\"time\":\"2026-01-03T11:00:01.000Z\",\"event\":\"approval_decided\",\"approval\":1,\"answer\":\"session\"}\n"
        "{\"time\":\"2026-01-03T11:00:02.000Z\",\"event\":\"approval_requested\",\"approval\":2,\"session\":9}\n";
    char *events = write_temp(
        "{\"time\":\"2026-01-02T10:00:00.000Z\",\"event\":\"created\",\"session\":42,\"command\":[\"bash\"]}\n"
        "{\"time\":\"2026-01-02T10:00:05.000Z\",\"event\":\"approval_requested\",\"approval\":1,\"session\":42}\n"
        "{\"time\":\"2026-01-02T10:00:06.001Z\",\"event\":\"approval_decided\",\"approval\":1,\"answer\":\"once\"}\n"
        "{\"time\":\"2026-01-02T10:00:09.000Z\",\"event\":\"exited\",\"code\":0}\n");
    char *approvals = write_temp(shared);
    export_session es;
    char err[300];
    assert_int_equal(export_read(&es, "42", events, 0, err, sizeof err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(export_approvals(&es, approvals, out, err, sizeof err), 2);
    fclose(out);
    const char *third = strstr(shared, "{\"time\":\"2026-01-02T10:00:05");
    const char *fifth = strstr(shared, "{\"time\":\"2026-01-03");
    assert_int_equal(len, (size_t)(fifth - third));
    assert_memory_equal(text, third, len);
    free(text);
    /* No approvals.jsonl at all: nothing, and no error. */
    out = open_memstream(&text, &len);
    assert_int_equal(export_approvals(&es, "/nonexistent/approvals.jsonl", out, err, sizeof err), 0);
    fclose(out);
    free(text);
    export_session_free(&es);
    unlink(events);
    unlink(approvals);
    free(events);
    free(approvals);
}

/* A command line with what would break the table or act on a terminal. */
static void summary_is_inert(void **state)
{
    (void)state;
    char *events = write_temp(
        "{\"time\":\"2026-01-02T10:00:00.000Z\",\"event\":\"created\",\"session\":42,\"name\":\"n\","
        "\"command\":[\"bash\"],\"cwd\":\"/w\",\"client\":\"codex\",\"profile\":\"workspace-write\"}\n"
        "{\"time\":\"2026-01-02T10:00:03.000Z\",\"event\":\"changes\",\"command\":1,"
        "\"line\":\"echo `a` | tee x\\u001b]52;c;AAAA\\u0007\\nrm -rf ~\",\"workspace\":\"/w\",\"exit_code\":0,"
        "\"counts\":{\"added\":1,\"modified\":0,\"deleted\":0,\"renamed\":0,\"typechanged\":0},"
        "\"lines\":{\"added\":1,\"removed\":0},\"risk\":[{\"path\":\".envrc\",\"marks\":[\"envrc\"]}],"
        "\"not_captured\":[]}\n");
    export_session es;
    char err[300];
    assert_int_equal(export_read(&es, "42", events, 0, err, sizeof err), 0);
    assert_int_equal(es.n_cmds, 1);
    es.cmds[0].patched = true;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    export_summary_write(&es, out, 1800000000.0, 0);
    fclose(out);
    assert_null(memchr(text, '\033', len));
    assert_null(memchr(text, '\007', len));
    assert_non_null(strstr(text, "| 1 | ``echo `a` \\| tee x\\x1b]52;c;AAAA\\x07\\nrm -rf ~`` | 0 | +1 ~0 -0 |"));
    assert_non_null(strstr(text, "[cmd-1.patch](cmd-1.patch)"));
    assert_non_null(strstr(text, "`.envrc` [envrc]"));
    assert_non_null(strstr(text, "| agent | `codex` |"));
    assert_non_null(strstr(text, "not recorded"));
    free(text);
    export_session_free(&es);
    unlink(events);
    free(events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(torn_and_bad_lines),
        cmocka_unit_test(approvals_of_the_session),
        cmocka_unit_test(summary_is_inert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
