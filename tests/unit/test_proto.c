/* Unit tests for the protocol module: framing (splits, several messages per
 * read, CRLF, the 1 MiB cap), request validation with its exact error
 * messages, and base64. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "protocol/client.h"
#include "protocol/proto.h"
#include "protocol/remote.h"
#include "base/quote.h"
#include "base/util.h"

static void reader_splits_and_joins(void **state)
{
    (void)state;
    proto_reader r;
    proto_reader_init(&r, 100);
    const char *line;
    size_t len;
    proto_reader_feed(&r, "{\"a\":", 5);
    assert_int_equal(proto_reader_next(&r, &line, &len), 0);
    proto_reader_feed(&r, "1}\n{\"b\":2}\r\n{\"c\"", 16);
    assert_int_equal(proto_reader_next(&r, &line, &len), 1);
    assert_int_equal(len, 7);
    assert_memory_equal(line, "{\"a\":1}", 7);
    assert_int_equal(proto_reader_next(&r, &line, &len), 1);
    assert_memory_equal(line, "{\"b\":2}", len); /* the \r is dropped */
    assert_int_equal(len, 7);
    assert_int_equal(proto_reader_next(&r, &line, &len), 0);
    assert_int_equal(proto_reader_pending(&r), 4);
    proto_reader_free(&r);
}

static void reader_rejects_oversized_once_and_recovers(void **state)
{
    (void)state;
    proto_reader r;
    proto_reader_init(&r, 10);
    const char *line;
    size_t len;
    proto_reader_feed(&r, "0123456789ABCDEF", 16); /* over the cap, no newline yet */
    assert_int_equal(proto_reader_next(&r, &line, &len), -1);
    proto_reader_feed(&r, "more bytes of it", 16);
    assert_int_equal(proto_reader_next(&r, &line, &len), 0); /* reported once */
    proto_reader_feed(&r, "end\n{\"ok\":1}\n", 13);
    assert_int_equal(proto_reader_next(&r, &line, &len), 1);
    assert_memory_equal(line, "{\"ok\":1}", len);
    /* A complete over-long line in one read is rejected too. */
    proto_reader_feed(&r, "0123456789ABCDEF\nx\n", 19);
    assert_int_equal(proto_reader_next(&r, &line, &len), -1);
    assert_int_equal(proto_reader_next(&r, &line, &len), 1);
    assert_memory_equal(line, "x", len);
    proto_reader_free(&r);
}

static void expect_error(const char *msg, const char *code, const char *text)
{
    proto_err e;
    json_t *id = NULL;
    json_t *req = proto_parse_request(msg, strlen(msg), &id, &e);
    assert_null(req);
    assert_string_equal(e.code, code);
    assert_string_equal(e.message, text);
    json_decref(id);
}

static void parse_errors_are_precise(void **state)
{
    (void)state;
    expect_error("{\"cmd\":5}", PERR_BAD_REQUEST, "field 'cmd' must be a string");
    expect_error("{}", PERR_BAD_REQUEST, "field 'cmd' is required");
    expect_error("[1,2]", PERR_BAD_REQUEST, "a message must be a JSON object");
    expect_error("{\"id\":[1],\"cmd\":\"ls\"}", PERR_BAD_REQUEST, "field 'id' must be an integer or a string");
    expect_error("{\"cmd\":\"a\\u0000b\"}", PERR_BAD_JSON,
                 "invalid JSON at byte 17: \\u0000 is not allowed near '\"a\\u0000b\"'");
    proto_err e;
    json_t *id = NULL;
    assert_null(proto_parse_request("{\"cmd\":", 7, &id, &e));
    assert_string_equal(e.code, PERR_BAD_JSON);
    assert_non_null(strstr(e.message, "invalid JSON"));
    assert_null(proto_parse_request("\xff\xfe", 2, &id, &e));
    assert_string_equal(e.code, PERR_BAD_JSON);
}

static void parse_keeps_the_id_of_a_bad_request(void **state)
{
    (void)state;
    proto_err e;
    json_t *id = NULL;
    const char *msg = "{\"id\":42,\"cmd\":false}";
    assert_null(proto_parse_request(msg, strlen(msg), &id, &e));
    assert_non_null(id);
    assert_int_equal(json_integer_value(id), 42);
    json_decref(id);
}

static void typed_fields(void **state)
{
    (void)state;
    proto_err e;
    json_t *o = json_loads("{\"n\":1000.0,\"s\":\"x\",\"b\":true,\"a\":[\"ls\",\"-l\"],\"bad\":\"7\",\"e\":[]}", 0, NULL);
    int64_t n;
    assert_int_equal(proto_get_int(o, "n", true, 0, 5000, &n, &e), 1);
    assert_int_equal(n, 1000);
    assert_int_equal(proto_get_int(o, "n", true, 0, 10, &n, &e), -1);
    assert_string_equal(e.message, "field 'n' must be between 0 and 10 (got 1000)");
    assert_int_equal(proto_get_int(o, "bad", true, 0, 10, &n, &e), -1);
    assert_string_equal(e.message, "field 'bad' must be a whole number");
    assert_int_equal(proto_get_int(o, "missing", false, 0, 10, &n, &e), 0);
    const char *s;
    assert_int_equal(proto_get_string(o, "b", false, &s, &e), -1);
    assert_string_equal(e.message, "field 'b' must be a string");
    bool b;
    assert_int_equal(proto_get_bool(o, "b", true, &b, &e), 1);
    assert_true(b);
    char **argv;
    assert_int_equal(proto_get_argv(o, "a", true, &argv, &e), 1);
    assert_string_equal(argv[0], "ls");
    assert_string_equal(argv[1], "-l");
    assert_null(argv[2]);
    strv_free(argv);
    assert_int_equal(proto_get_argv(o, "e", true, &argv, &e), -1);
    assert_string_equal(e.message, "field 'e' must be a non-empty array of strings");
    json_decref(o);
}

static void replies_are_single_lines(void **state)
{
    (void)state;
    size_t n;
    json_t *id = json_integer(3); /* proto_error takes a reference of its own */
    char *s = proto_dump(proto_error(id, PERR_BAD_REQUEST, "field 'cmd' must be a string"), &n);
    json_decref(id);
    assert_string_equal(s, "{\"id\":3,\"error\":{\"code\":\"bad_request\",\"message\":\"field 'cmd' must be a string\"}}\n");
    free(s);
}

static void base64_round_trip(void **state)
{
    (void)state;
    const char *cases[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        size_t n, m;
        char *e = base64_encode(cases[i], strlen(cases[i]), &n);
        assert_string_equal(e, enc[i]);
        char *d = base64_decode(e, n, &m);
        assert_int_equal(m, strlen(cases[i]));
        assert_memory_equal(d, cases[i], m);
        free(e);
        free(d);
    }
    size_t m;
    assert_null(base64_decode("Zm9", 3, &m));
    assert_null(base64_decode("Zm=v", 4, &m));
    assert_null(base64_decode("Z!9v", 4, &m));
}

/* corral -H: ssh://[user@]host[:port] parsed; what could reach ssh as an
 * option or split a word refused, naming it; the argv run. */
static void remote_hosts(void **state)
{
    (void)state;
    remote_host h;
    char err[512];
    assert_int_equal(remote_parse("ssh://me@box.example:2222", &h, err, sizeof err), 0);
    assert_string_equal(h.user, "me");
    assert_string_equal(h.host, "box.example");
    assert_int_equal(h.port, 2222);
    char **v = remote_argv(&h);
    char *line = quote_argv_display(v);
    assert_string_equal(line, "ssh -p 2222 -l me -T -- box.example corral serve-stdio");
    free(line);
    strv_free(v);
    h.ssh_command = xstrdup("ssh -F cfg");
    h.remote_command = xstrdup("/opt/corral");
    v = remote_argv(&h);
    assert_string_equal(v[0], "sh");
    assert_string_equal(v[1], "-c");
    assert_string_equal(v[2], "ssh -F cfg \"$@\"");
    assert_string_equal(v[3], "ssh -F cfg");
    line = quote_argv_display(v + 4);
    assert_string_equal(line, "-p 2222 -l me -T -- box.example /opt/corral serve-stdio");
    free(line);
    strv_free(v);
    remote_host_free(&h);

    assert_int_equal(remote_parse("ssh://box/", &h, err, sizeof err), 0);
    assert_null(h.user);
    assert_int_equal(h.port, 0);
    assert_string_equal(h.host, "box");
    remote_host_free(&h);
    assert_int_equal(remote_parse("ssh://[::1]:22", &h, err, sizeof err), 0);
    assert_string_equal(h.host, "::1");
    assert_int_equal(h.port, 22);
    remote_host_free(&h);

    static const struct {
        const char *spec, *named;
    } bad[] = {
        {"ssh://-oProxyCommand=x", "'-oProxyCommand=x'"}, {"ssh://-lroot@box", "user '-lroot'"},
        {"ssh://me@-p22", "host '-p22'"},                 {"ssh://bo x", "host 'bo x'"},
        {"ssh://box\tx", "host 'box\\tx'"},               {"ssh://me;id@box", "user 'me;id'"},
        {"ssh://box:0", "port '0'"},                      {"ssh://box:65536", "port '65536'"},
        {"ssh://box:22x", "port '22x'"},                  {"ssh://", "host ''"},
        {"box", "host 'box' is not ssh://"},              {"ssh://@box", "user ''"},
        {"ssh://box*", "host 'box*'"},                    {"ssh://a%h", "host 'a%h'"},
        {"ssh://u$x@box", "user 'u$x'"},                  {"ssh://box/x", "host 'box/x'"},
        {"ssh://[::1;id]", "host '::1;id'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(remote_parse(bad[i].spec, &h, err, sizeof err), -1);
        if (!strstr(err, bad[i].named))
            fail_msg("%s: %s", bad[i].spec, err);
    }
}

/* An error reply's message is printed by every verb: what a server (one on
 * another machine, -H) puts in it reaches the terminal with its control
 * characters made visible, its lines kept. */
static void error_messages_are_made_visible(void **state)
{
    (void)state;
    char buf[256];
    json_t *r = json_pack("{s:{s:s}}", "error", "message", "bad\x1b]0;owned\x07 thing\nsecond \x1b[2J line");
    assert_string_equal(client_error_message(r, buf, sizeof buf), "bad\\x1b]0;owned\\x07 thing\nsecond \\x1b[2J line");
    json_decref(r);
    r = json_pack("{s:{s:i}}", "error", "message", 3);
    assert_string_equal(client_error_message(r, buf, sizeof buf), "the server reported an error");
    json_decref(r);
    r = json_pack("{s:b}", "ok", 1);
    assert_null(client_error_message(r, buf, sizeof buf));
    json_decref(r);
    char tiny[8];
    r = json_pack("{s:{s:s}}", "error", "message", "a long message\nwith lines");
    assert_string_equal(client_error_message(r, tiny, sizeof tiny), "a long ");
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_splits_and_joins),
        cmocka_unit_test(reader_rejects_oversized_once_and_recovers),
        cmocka_unit_test(parse_errors_are_precise),
        cmocka_unit_test(parse_keeps_the_id_of_a_bad_request),
        cmocka_unit_test(typed_fields),
        cmocka_unit_test(replies_are_single_lines),
        cmocka_unit_test(base64_round_trip),
        cmocka_unit_test(remote_hosts),
        cmocka_unit_test(error_messages_are_made_visible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
