/* Unit tests for the timeline reader (src/record/timeline.c, src/record/timeline_text.c)
 * and the line scanner under it (src/record/jsonscan.c): every event kind becomes
 * the right entry, with the joins (a command's start, end and record; an
 * approval's request and answer, also from approvals.jsonl when ids were
 * used again after a restart; an escalation's start and end); a torn last
 * line and invalid lines are skipped with one warning each, naming file
 * and line; each entry's JSON is valid and carries its fields; filters;
 * times as people write them; command markers; an events log cut short
 * gets its newline before the next event. */
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

#include "record/eventlog.h"
#include "record/jsonscan.h"
#include "record/timeline.h"
#include "base/util.h"

/* A session's log with every kind of event corral writes. */
static const char *const fixture =
    "{\"time\":\"2026-11-29T07:41:25.000Z\",\"event\":\"created\",\"session\":7,\"name\":\"bash\","
    "\"command\":[\"bash\"],\"cwd\":\"/ws\",\"client\":\"codex\",\"profile\":\"workspace-write\",\"kind\":\"user\","
    "\"tty\":true,\"cols\":80,\"rows\":24,\"pid\":99,\"workspace\":\"/ws\"}\n"
    "{\"time\":\"2026-11-29T07:41:25.100Z\",\"event\":\"sandbox_warning\",\"message\":\"a .git symlink\"}\n"
    "{\"time\":\"2026-11-29T07:41:26.000Z\",\"event\":\"command_started\",\"command\":1,\"line\":\"make test\","
    "\"cwd\":\"/ws/sub\"}\n"
    "{\"time\":\"2026-11-29T07:41:27.500Z\",\"event\":\"command_ended\",\"command\":1,\"exit_code\":2,"
    "\"duration_seconds\":1.5}\n"
    "{\"time\":\"2026-11-29T07:41:27.600Z\",\"event\":\"changes\",\"command\":1,\"line\":\"make test\","
    "\"workspace\":\"/ws\",\"started\":\"2026-11-29T07:41:25.990Z\",\"ended\":\"2026-11-29T07:41:27.500Z\","
    "\"exit_code\":2,\"before\":\"aa\",\"after\":\"bb\",\"attribution\":\"exclusive\",\"shared_with\":[],"
    "\"counts\":{\"added\":3,\"modified\":1,\"deleted\":2,\"renamed\":0,\"typechanged\":1},"
    "\"lines\":{\"added\":9,\"removed\":1},\"risk\":[{\"path\":\".envrc\",\"marks\":[\"envrc\"]}],"
    "\"not_captured\":[]}\n"
    "{\"time\":\"2026-11-29T07:41:28.000Z\",\"event\":\"approval_requested\",\"kind\":\"hook\",\"client\":\"user\","
    "\"argv\":[\"bash\",\"-c\",\"rm -rf build\"],\"cwd\":\"/ws\",\"command\":\"bash -c 'rm -rf build'\","
    "\"line\":\"rm -rf build\",\"id\":4,\"created\":1795938088.0,\"age_seconds\":0.0,\"approval\":4}\n"
    "{\"time\":\"2026-11-29T07:41:30.000Z\",\"event\":\"approval_decided\",\"answer\":\"session\",\"by\":\"tui\","
    "\"key\":\"a\",\"note\":\"ok once\",\"approval\":4}\n"
    "{\"time\":\"2026-11-29T07:41:31.000Z\",\"event\":\"command_started\",\"command\":2,\"line\":\"rm -rf build\","
    "\"cwd\":\"/ws\"}\n"
    "{\"time\":\"2026-11-29T07:41:33.000Z\",\"event\":\"network\",\"listener\":\"http\",\"host\":\"example.com\","
    "\"port\":443,\"protocol\":\"https\",\"decision\":\"allow\",\"bytes_to_server\":10,\"bytes_to_client\":2048,"
    "\"duration_ms\":1500}\n"
    "{\"time\":\"2026-11-29T07:41:34.000Z\",\"event\":\"network\",\"listener\":\"socks5\",\"host\":\"evil.test\","
    "\"port\":22,\"protocol\":\"socks5_tcp\",\"decision\":\"deny\",\"reason\":\"denied\",\"bytes_to_server\":0,"
    "\"bytes_to_client\":0,\"duration_ms\":0}\n"
    "{\"time\":\"2026-11-29T07:41:35.000Z\",\"event\":\"command_refused\",\"line\":\"sudo x\",\"reason\":\"forbidden\"}\n"
    "{\"time\":\"2026-11-29T07:41:36.000Z\",\"event\":\"escalated\",\"argv\":[\"apt\",\"update\"],\"cwd\":\"/ws\","
    "\"workspace\":\"/ws\",\"profile\":\"full\",\"approval\":5,\"pid\":123}\n"
    "{\"time\":\"2026-11-29T07:41:38.000Z\",\"event\":\"escalation_ended\",\"approval\":5,\"status\":768}\n"
    "{\"time\":\"2026-11-29T07:41:39.000Z\",\"event\":\"sandbox_denied\",\"line\":\"cannot open /etc/x\","
    "\"path\":\"/etc/x\",\"advice\":\"ask\"}\n"
    "{\"time\":\"2026-11-29T07:41:40.000Z\",\"event\":\"resized\",\"cols\":100,\"rows\":30}\n"
    "{\"time\":\"2026-11-29T07:41:41.000Z\",\"event\":\"future_thing\",\"x\":1}\n"
    "{\"time\":\"2026-11-29T07:41:42.000Z\",\"event\":\"killed\",\"reason\":\"user\"}\n"
    "{\"time\":\"2026-11-29T07:41:42.100Z\",\"event\":\"exited\",\"code\":137,\"signal\":\"SIGKILL\","
    "\"duration_seconds\":17.1}\n"
    "{\"time\":\"2026-11-29T07:41:42.100Z\",\"event\":\"command_ended\",\"command\":2,\"duration_seconds\":11.1}\n";

static timeline_t load(const char *text, const char *approvals)
{
    timeline_t tl;
    tl_load_mem(&tl, xstrdup(text), strlen(text), "events.jsonl", approvals ? xstrdup(approvals) : NULL,
                approvals ? strlen(approvals) : 0, "approvals.jsonl");
    return tl;
}

static const tl_entry *find(const timeline_t *tl, tl_kind kind, int nth)
{
    for (size_t i = 0; i < tl->n; i++)
        if (tl->entries[i].kind == kind && nth-- == 0)
            return &tl->entries[i];
    return NULL;
}

static json_t *entry_json(const tl_entry *e)
{
    assert_non_null(e);
    json_t *j = tl_entry_json(e);
    assert_non_null(j);
    return j;
}

static const char *s(json_t *j, const char *key)
{
    const char *v = json_string_value(json_object_get(j, key));
    return v ? v : "(none)";
}

static void every_kind(void **state)
{
    (void)state;
    timeline_t tl = load(fixture, NULL);
    assert_int_equal(tl.skipped, 0);
    assert_int_equal(tl.session, 7);
    assert_string_equal(tl.client, "codex");
    assert_string_equal(tl.workspace, "/ws");
    assert_true(tl.exited);
    assert_int_equal(tl.exit_code, 137);
    assert_string_equal(tl.signal, "SIGKILL");
    /* In time order. */
    for (size_t i = 1; i < tl.n; i++)
        assert_true(tl.entries[i - 1].time <= tl.entries[i].time);

    const tl_entry *e = find(&tl, TL_SESSION, 0);
    json_t *j = entry_json(e);
    assert_string_equal(s(j, "kind"), "session");
    assert_string_equal(s(j, "session_kind"), "user");
    assert_string_equal(s(j, "client"), "codex");
    json_decref(j);

    /* Command 1: start, end and record in one entry. */
    e = find(&tl, TL_COMMAND, 0);
    assert_non_null(e);
    assert_int_equal(e->number, 1);
    assert_true(e->has_exit);
    assert_int_equal(e->exit_code, 2);
    assert_true(e->has_counts);
    assert_int_equal(e->added, 3);
    assert_int_equal(e->modified, 2); /* a type change counts as modified, as corral diff shows it */
    assert_int_equal(e->deleted, 2);
    assert_true(e->risk);
    assert_true(e->end - e->time > 1.49 && e->end - e->time < 1.51);
    j = entry_json(e);
    assert_string_equal(s(j, "time"), "2026-11-29T07:41:26.000Z");
    assert_string_equal(s(j, "line"), "make test");
    assert_string_equal(s(j, "cwd"), "/ws/sub");
    assert_string_equal(s(j, "state"), "ended");
    assert_string_equal(s(j, "ended"), "2026-11-29T07:41:27.500Z");
    assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 2);
    assert_true(json_real_value(json_object_get(j, "duration_seconds")) == 1.5);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "added")), 3);
    assert_int_equal(json_array_size(json_object_get(j, "risk")), 1);
    assert_null(json_object_get(j, "started")); /* one start: "time" */
    assert_null(json_object_get(j, "event"));
    json_decref(j);
    char *text = tl_entry_text(&tl, e);
    assert_non_null(strstr(text, "#1"));
    assert_non_null(strstr(text, "exit 2"));
    assert_non_null(strstr(text, "+3 ~2 -2"));
    assert_non_null(strstr(text, "RISK"));
    assert_non_null(strstr(text, "make test"));
    assert_non_null(strstr(text, "(in /ws/sub)")); /* not the workspace: said */
    free(text);

    /* Command 2: ended with the session, status unknown, no record yet. */
    e = find(&tl, TL_COMMAND, 1);
    assert_int_equal(e->number, 2);
    assert_false(e->has_exit);
    assert_false(e->has_counts);
    text = tl_entry_text(&tl, e);
    assert_non_null(strstr(text, "exit ?"));
    free(text);

    /* The approval: request and answer. */
    e = find(&tl, TL_APPROVAL, 0);
    assert_int_equal(e->number, 4);
    assert_true(e->decided && e->approved);
    j = entry_json(e);
    assert_string_equal(s(j, "answer"), "session");
    assert_string_equal(s(j, "decision"), "approved");
    assert_string_equal(s(j, "scope"), "session");
    assert_string_equal(s(j, "by"), "tui");
    assert_string_equal(s(j, "key"), "a");
    assert_string_equal(s(j, "note"), "ok once");
    assert_string_equal(s(j, "decided"), "2026-11-29T07:41:30.000Z");
    json_t *req = json_object_get(j, "request");
    assert_string_equal(s(req, "kind"), "hook");
    assert_string_equal(s(req, "command"), "bash -c 'rm -rf build'");
    assert_null(json_object_get(req, "age_seconds")); /* the queue's fields are not the request */
    assert_true(json_real_value(json_object_get(j, "waited_seconds")) == 2.0);
    json_decref(j);

    /* Network: placed at its start, the end kept; a denied one. */
    e = find(&tl, TL_NETWORK, 0);
    assert_true(e->approved);
    assert_int_equal(e->host_len, strlen("example.com"));
    j = entry_json(e);
    assert_string_equal(s(j, "time"), "2026-11-29T07:41:31.500Z");
    assert_string_equal(s(j, "ended"), "2026-11-29T07:41:33.000Z");
    assert_int_equal(json_integer_value(json_object_get(j, "port")), 443);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes_to_client")), 2048);
    json_decref(j);
    text = tl_entry_text(&tl, e);
    assert_non_null(strstr(text, "example.com:443 https allow"));
    assert_non_null(strstr(text, "2.0 KiB"));
    free(text);
    assert_false(find(&tl, TL_NETWORK, 1)->approved);

    /* Escalation: start and end joined. */
    e = find(&tl, TL_ESCALATION, 0);
    assert_int_equal(e->number, 5);
    assert_true(e->has_exit);
    j = entry_json(e);
    assert_string_equal(s(j, "profile"), "full");
    assert_int_equal(json_integer_value(json_object_get(j, "status")), 768); /* the wait status */
    assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 3);
    assert_true(json_real_value(json_object_get(j, "duration_seconds")) == 2.0);
    json_decref(j);

    assert_non_null(find(&tl, TL_REFUSED, 0));
    assert_non_null(find(&tl, TL_DENIAL, 0));
    assert_non_null(find(&tl, TL_RESIZE, 0));
    assert_non_null(find(&tl, TL_WARNING, 0));
    assert_non_null(find(&tl, TL_OTHER, 0));
    assert_non_null(find(&tl, TL_EXIT, 1)); /* killed, exited */
    text = tl_entry_text(&tl, find(&tl, TL_RESIZE, 0));
    assert_string_equal(text, "100x30");
    free(text);
    text = tl_entry_text(&tl, find(&tl, TL_EXIT, 1));
    assert_non_null(strstr(text, "killed by SIGKILL"));
    free(text);

    tl_summary sum;
    tl_summarize(&tl, &sum);
    assert_int_equal(sum.commands, 2);
    assert_int_equal(sum.approvals, 1);
    assert_int_equal(sum.connections, 2);
    assert_int_equal(sum.hosts, 2);
    assert_int_equal(sum.added, 3);
    assert_int_equal(sum.risky, 1);
    tl_free(&tl);
}

/* Every entry's JSON is one valid object with "kind" and "time". */
static void json_of_every_entry(void **state)
{
    (void)state;
    timeline_t tl = load(fixture, NULL);
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < tl.n; i++) {
        buf_reset(&b);
        tl_entry_write_json(&tl.entries[i], &b);
        json_error_t err;
        json_t *j = json_loadb(b.data, b.len, 0, &err);
        if (!j)
            fail_msg("entry %zu is not JSON: %s: %s", i, err.text, b.data);
        assert_string_equal(s(j, "kind"), tl_kind_name(tl.entries[i].kind));
        assert_true(tl_iso_time(s(j, "time")) > 0);
        json_decref(j);
    }
    buf_free(&b);
    tl_free(&tl);
}

/* The last line cut short by a crash: everything before it, one warning. */
static void torn_last_line(void **state)
{
    (void)state;
    char *text = xasprintf("%s%s", fixture, "{\"time\":\"2026-11-29T07:41:43.000Z\",\"event\":\"resi");
    timeline_t full = load(fixture, NULL);
    timeline_t tl = load(text, NULL);
    assert_int_equal(tl.n, full.n);
    assert_int_equal(tl.skipped, 1);
    assert_int_equal(tl.n_warnings, 1);
    assert_non_null(strstr(tl.warnings[0], "events.jsonl:20:"));
    assert_non_null(strstr(tl.warnings[0], "cut short"));
    tl_free(&tl);
    tl_free(&full);
    free(text);
}

/* A bad line anywhere: skipped, named, the rest read; many: counted. */
static void invalid_lines(void **state)
{
    (void)state;
    const char *text =
        "{\"time\":\"2026-11-29T07:41:25.000Z\",\"event\":\"resized\",\"cols\":1,\"rows\":2}\n"
        "not json at all\n"
        "\n"
        "[1,2]\n"
        "{\"event\":\"resized\"}\n"
        "{\"time\":\"yesterday\",\"event\":\"resized\"}\n"
        "{\"time\":\"2026-11-29T07:41:26.000Z\",\"event\":\"resized\",\"bad\":\"\\x\"}\n"
        "{\"time\":\"2026-11-29T07:41:26.000Z\",\"event\":\"resized\",\"s\":\"\xff\"}\n"
        "{\"time\":\"2026-11-29T07:41:27.000Z\",\"event\":\"resized\",\"cols\":3,\"rows\":4}\n";
    timeline_t tl = load(text, NULL);
    assert_int_equal(tl.n, 2);
    assert_int_equal(tl.skipped, 6);
    assert_int_equal(tl.n_warnings, TL_MAX_WARNINGS);
    assert_non_null(strstr(tl.warnings[0], "events.jsonl:2: not JSON"));
    assert_non_null(strstr(tl.warnings[1], "events.jsonl:4:"));
    tl_free(&tl);
}

/* An event with more fields than a line is read with: skipped, said. */
static void too_many_fields(void **state)
{
    (void)state;
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{\"time\":\"2026-11-29T07:41:25.000Z\",\"event\":\"future\"");
    for (int i = 0; i < 200; i++)
        buf_printf(&b, ",\"f%d\":%d", i, i);
    buf_puts(&b, "}\n{\"time\":\"2026-11-29T07:41:26.000Z\",\"event\":\"resized\",\"cols\":3,\"rows\":4}\n");
    timeline_t tl = load(b.data, NULL);
    assert_int_equal(tl.n, 1);
    assert_int_equal(tl.skipped, 1);
    assert_non_null(strstr(tl.warnings[0], "events.jsonl:1: an event of more than"));
    tl_free(&tl);
    buf_free(&b);
}

/* An exec that needed approval: its request and answer are in
 * approvals.jsonl, where ids start again at each server start. */
static void approvals_joined_across_restarts(void **state)
{
    (void)state;
    const char *events =
        "{\"time\":\"2026-11-29T09:00:05.000Z\",\"event\":\"created\",\"session\":3,\"name\":\"rm\"}\n"
        "{\"time\":\"2026-11-29T09:00:05.001Z\",\"event\":\"approved\",\"approval\":1,\"answer\":\"once\"}\n";
    const char *approvals =
        /* an earlier server's request 1 */
        "{\"time\":\"2026-11-29T08:00:00.000Z\",\"event\":\"approval_requested\",\"kind\":\"exec\","
        "\"command\":\"old\",\"approval\":1}\n"
        "{\"time\":\"2026-11-29T08:00:01.000Z\",\"event\":\"approval_decided\",\"answer\":\"deny\",\"by\":\"x\","
        "\"approval\":1}\n"
        "{\"time\":\"2026-11-29T09:00:00.000Z\",\"event\":\"approval_requested\",\"kind\":\"exec\","
        "\"command\":\"rm -r build\",\"approval\":1}\n"
        "{\"time\":\"2026-11-29T09:00:05.000Z\",\"event\":\"approval_decided\",\"answer\":\"once\",\"by\":\"user\","
        "\"key\":\"y\",\"approval\":1}\n"
        "{\"time\":\"2026-11-29T09:00:04.000Z\",\"event\":\"approval_requested\",\"kind\":\"exec\","
        "\"command\":\"other\",\"approval\":11}\n"
        /* a later server's request 1 */
        "{\"time\":\"2026-11-29T10:00:00.000Z\",\"event\":\"approval_requested\",\"kind\":\"exec\","
        "\"command\":\"later\",\"approval\":1}\n";
    timeline_t tl = load(events, approvals);
    const tl_entry *e = find(&tl, TL_APPROVAL, 0);
    assert_non_null(e);
    assert_true(e->decided && e->approved);
    json_t *j = entry_json(e);
    assert_string_equal(s(json_object_get(j, "request"), "command"), "rm -r build");
    assert_string_equal(s(j, "by"), "user");
    assert_string_equal(s(j, "key"), "y");
    assert_string_equal(s(j, "time"), "2026-11-29T09:00:00.000Z");
    assert_true(json_is_true(json_object_get(j, "starts_session")));
    json_decref(j);
    /* The request came before the session: it comes first. */
    assert_int_equal(tl.entries[0].kind, TL_APPROVAL);
    tl_free(&tl);

    /* Without approvals.jsonl: what the session's log says. */
    tl = load(events, NULL);
    j = entry_json(find(&tl, TL_APPROVAL, 0));
    assert_string_equal(s(j, "answer"), "once");
    assert_null(json_object_get(j, "request"));
    json_decref(j);
    tl_free(&tl);
}

static void filters(void **state)
{
    (void)state;
    timeline_t tl = load(fixture, NULL);
    unsigned mask = 0;
    char err[512];
    assert_int_equal(tl_parse_kinds("command,network", &mask, err, sizeof err), 0);
    assert_int_equal(tl_parse_kinds("approvals", &mask, err, sizeof err), 0);
    assert_int_equal(tl_parse_kinds("command,bogus", &mask, err, sizeof err), -1);
    assert_non_null(strstr(err, "'bogus'"));
    assert_non_null(strstr(err, "escalation"));
    tl_filter f = {.kinds = mask};
    size_t n = 0;
    for (size_t i = 0; i < tl.n; i++)
        n += tl_match(&tl.entries[i], &f);
    assert_int_equal(n, 5); /* two commands, two connections, one approval */

    f = (tl_filter){.grep = "EXAMPLE.COM", .ignore_case = true};
    n = 0;
    for (size_t i = 0; i < tl.n; i++)
        n += tl_match(&tl.entries[i], &f);
    assert_int_equal(n, 1);
    f.ignore_case = false;
    assert_false(tl_match(find(&tl, TL_NETWORK, 0), &f));
    /* The line as shown counts too: "exit 2" is no field of the log. */
    f = (tl_filter){.grep = "exit 2"};
    assert_true(tl_match(find(&tl, TL_COMMAND, 0), &f));

    f = (tl_filter){.since = tl_iso_time("2026-11-29T07:41:39.000Z")};
    n = 0;
    for (size_t i = 0; i < tl.n; i++)
        n += tl_match(&tl.entries[i], &f);
    assert_int_equal(n, 5); /* denial, resize, other, killed, exited: what began since */
    tl_free(&tl);
}

static void times(void **state)
{
    (void)state;
    char err[512];
    double t, now = 1800000000.0;
    assert_int_equal(tl_parse_time("10m", now, &t, err, sizeof err), 0);
    assert_true(t == now - 600);
    assert_int_equal(tl_parse_time("2h", now, &t, err, sizeof err), 0);
    assert_true(t == now - 7200);
    assert_int_equal(tl_parse_time("3d", now, &t, err, sizeof err), 0);
    assert_true(t == now - 3 * 86400);
    assert_int_equal(tl_parse_time("1w", now, &t, err, sizeof err), 0);
    assert_int_equal(tl_parse_time("2026-11-29T07:41:25Z", now, &t, err, sizeof err), 0);
    assert_true(t == 1795938085.0);
    assert_int_equal(tl_parse_time("2026-11-29T09:41:25+02:00", now, &t, err, sizeof err), 0);
    assert_true(t == 1795938085.0);
    assert_int_equal(tl_parse_time("2026-11-29 07:41:25.5Z", now, &t, err, sizeof err), 0);
    assert_true(t == 1795938085.5);
    assert_int_equal(tl_parse_time("2026-11-29", now, &t, err, sizeof err), 0); /* local midnight */
    assert_int_equal(tl_parse_time("2026-11-29T07:41", now, &t, err, sizeof err), 0);
    static const char *const bad[] = {"yesterday", "10", "10x", "-5m", "2026-13-01", "2026-11-29T25:00",
                                      "2026-11-29T07:41:25Zjunk", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (tl_parse_time(bad[i], now, &t, err, sizeof err) == 0)
            fail_msg("'%s' was taken as a time", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "'%s'", bad[i]);
        assert_non_null(strstr(err, want));
        assert_non_null(strstr(err, "ISO 8601"));
        assert_non_null(strstr(err, "10m"));
    }
    assert_true(tl_iso_time("2026-11-29T07:41:25.035Z") == 1795938085.035);
    assert_true(tl_iso_time("nope") < 0);
}

static void markers(void **state)
{
    (void)state;
    char *m = tl_marker_start(3, "make \x1b[31mtest\nnow");
    assert_string_equal(m, "cmd 3: make \\x1b[31mtest\\nnow");
    int n, st;
    bool end;
    assert_true(tl_marker_parse(m, &n, &end, &st));
    assert_int_equal(n, 3);
    assert_false(end);
    free(m);
    m = tl_marker_end(12, true, 130);
    assert_string_equal(m, "cmd 12 end: exit 130");
    assert_true(tl_marker_parse(m, &n, &end, &st));
    assert_true(end && n == 12 && st == 130);
    free(m);
    m = tl_marker_end(1, false, 0);
    assert_string_equal(m, "cmd 1 end: exit ?");
    assert_true(tl_marker_parse(m, &n, &end, &st));
    assert_true(end && st == -1);
    free(m);
    assert_false(tl_marker_parse("exited with code 0", &n, &end, &st));
    assert_false(tl_marker_parse("cmd x: y", &n, &end, &st));
    /* A very long line is cut, and the cut is said. */
    char *line = xmalloc(5001);
    memset(line, 'a', 5000);
    line[5000] = '\0';
    m = tl_marker_start(1, line);
    assert_true(strlen(m) < 1100);
    assert_non_null(strstr(m, "[cut: 4000 more bytes]"));
    free(m);
    free(line);
}

/* The scanner accepts what jansson accepts and refuses what it refuses. */
static void scanner_agrees_with_jansson(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "{}", " { \"a\" : 1 } ", "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\\ud83d\\ude00\"}",
        "{\"a\":-0.5e+3}", "{\"a\":true,\"b\":false}", "{\"a\":\"caf\xc3\xa9\"}",
        "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\u0000\"}", "{\"a\":\"\t\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":1,}", "{\"a\" 1}", "{a:1}",
        "{\"a\":1} x", "[1]", "{\"a\":tru}", "{\"a\":\"\\q\"}", "{\"a\":\"x", "",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_error_t jerr;
        json_t *j = json_loads(cases[i], 0, &jerr);
        js_member m[8];
        char err[128];
        int n = js_scan_object(cases[i], strlen(cases[i]), m, 8, err, sizeof err);
        bool jansson_ok = j && json_is_object(j);
        if (jansson_ok != (n >= 0))
            fail_msg("case %zu (%s): jansson %s, the scanner %s", i, cases[i], jansson_ok ? "accepts" : "refuses",
                     n >= 0 ? "accepts" : err);
        if (jansson_ok)
            assert_int_equal((size_t)n, json_object_size(j));
        json_decref(j);
    }
    js_member m[4];
    char err[64];
    const char *text = "{\"s\":\"a\\\"b\\u00e9\",\"n\":-12,\"o\":{\"x\":[1]}}";
    assert_int_equal(js_scan_object(text, strlen(text), m, 4, err, sizeof err), 3);
    char *str = js_string(js_find(m, 3, "s"), NULL);
    assert_string_equal(str, "a\"b\xc3\xa9");
    free(str);
    long long v;
    assert_true(js_int(js_find(m, 3, "n"), &v) && v == -12);
    assert_int_equal(js_find(m, 3, "o")->val.n, strlen("{\"x\":[1]}"));
    /* Valid JSON numbers no caller can use are not read as one: an
     * integer past long long is not LLONG_MAX, 1e999 is not infinity. */
    const char *big = "{\"i\":99999999999999999999,\"r\":1e999,\"ok\":9223372036854775807}";
    assert_int_equal(js_scan_object(big, strlen(big), m, 4, err, sizeof err), 3);
    assert_false(js_int(js_find(m, 3, "i"), &v));
    double d;
    assert_false(js_number(js_find(m, 3, "r"), &d));
    assert_true(js_int(js_find(m, 3, "ok"), &v) && v == 9223372036854775807LL);
}

/* An events log whose last line was cut short by a crash: the next
 * event starts a line of its own. */
static void eventlog_after_a_torn_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/corral-test-timeline-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = xasprintf("%s/events.jsonl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"time\":\"2026-11-29T07:41:25.000Z\",\"event\":\"resized\",\"cols\":1,\"rows\":2}\n{\"time\":\"20", f);
    fclose(f);
    char err[256];
    eventlog_t *el = eventlog_open(path, err, sizeof err);
    assert_non_null(el);
    assert_int_equal(eventlog_write(el, "resized", json_pack("{s:i, s:i}", "cols", 3, "rows", 4), false), 0);
    eventlog_close(el);
    timeline_t tl;
    assert_int_equal(tl_load(&tl, path, NULL, err, sizeof err), 0);
    assert_int_equal(tl.n, 2);
    assert_int_equal(tl.skipped, 1);
    assert_non_null(strstr(tl.warnings[0], ":2: not JSON"));
    tl_free(&tl);
    unlink(path);
    rmdir(dir);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind),
        cmocka_unit_test(json_of_every_entry),
        cmocka_unit_test(torn_last_line),
        cmocka_unit_test(invalid_lines),
        cmocka_unit_test(too_many_fields),
        cmocka_unit_test(approvals_joined_across_restarts),
        cmocka_unit_test(filters),
        cmocka_unit_test(times),
        cmocka_unit_test(markers),
        cmocka_unit_test(scanner_agrees_with_jansson),
        cmocka_unit_test(eventlog_after_a_torn_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
