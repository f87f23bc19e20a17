/* Unit tests for the session channel's messages (chanmsg.h): each verb
 * decoded, and everything a sandboxed process could send wrong refused
 * with one line that says what. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/chanmsg.h"
#include "base/util.h"

static int parse(const char *text, chan_msg *m, char *err, size_t errlen)
{
    return chan_msg_parse(text, strlen(text), m, err, errlen);
}

/* text must be refused with an error that contains want. */
static void refused(const char *text, size_t len, const char *want)
{
    chan_msg m;
    char err[512];
    if (chan_msg_parse(text, len, &m, err, sizeof err) == 0)
        fail_msg("accepted: %.*s", (int)len, text);
    if (!strstr(err, want))
        fail_msg("error '%s' does not say '%s'", err, want);
    assert_null(strchr(err, '\n'));
    assert_null(m.cwd);
    assert_null(m.argv);
}

static void refused_text(const char *text, const char *want)
{
    refused(text, strlen(text), want);
}

static void escalate_is_decoded(void **state)
{
    (void)state;
    chan_msg m;
    char err[512];
    assert_int_equal(parse("{\"verb\":\"escalate\",\"argv\":[\"make\",\"install\"],\"cwd\":\"/home/me/proj\","
                           "\"write\":[\"/opt/tool\"],\"network\":true,\"reason\":\"install the tool\"}",
                           &m, err, sizeof err),
                     0);
    assert_int_equal(m.verb, CHAN_ESCALATE);
    assert_string_equal(m.cwd, "/home/me/proj");
    assert_string_equal(m.argv[0], "make");
    assert_string_equal(m.argv[1], "install");
    assert_null(m.argv[2]);
    assert_string_equal(m.write[0], "/opt/tool");
    assert_null(m.write[1]);
    assert_true(m.network);
    assert_string_equal(m.reason, "install the tool");
    chan_msg_free(&m);

    /* The optional fields absent (or null). */
    assert_int_equal(parse("{\"verb\":\"escalate\",\"argv\":[\"true\"],\"cwd\":\"/\",\"write\":null}", &m, err,
                           sizeof err),
                     0);
    assert_null(m.write);
    assert_false(m.network);
    assert_null(m.reason);
    chan_msg_free(&m);
    /* An empty reason is none. */
    assert_int_equal(parse("{\"verb\":\"escalate\",\"argv\":[\"true\"],\"cwd\":\"/\",\"reason\":\"\"}", &m, err,
                           sizeof err),
                     0);
    assert_null(m.reason);
    chan_msg_free(&m);
}

static void check_mark_and_listeners_are_decoded(void **state)
{
    (void)state;
    chan_msg m;
    char err[512];
    assert_int_equal(parse("{\"verb\":\"check\",\"shell\":\"zsh\",\"line\":\"git push\",\"cwd\":\"/w\"}", &m, err,
                           sizeof err),
                     0);
    assert_int_equal(m.verb, CHAN_CHECK);
    assert_string_equal(m.shell, "zsh");
    assert_string_equal(m.line, "git push");
    assert_string_equal(m.cwd, "/w");
    chan_msg_free(&m);

    assert_int_equal(parse("{\"verb\":\"mark\",\"what\":\"end\",\"status\":3,\"cwd\":\"/w\"}", &m, err, sizeof err),
                     0);
    assert_int_equal(m.verb, CHAN_MARK);
    assert_int_equal(m.status, 3);
    chan_msg_free(&m);
    assert_int_equal(parse("{\"verb\":\"mark\",\"what\":\"end\",\"cwd\":\"/w\"}", &m, err, sizeof err), 0);
    assert_int_equal(m.status, -1); /* absent */
    assert_int_equal(m.command, -1);
    assert_false(m.start);
    chan_msg_free(&m);
    /* An agent's bash (path.bash): its command's start, and its end by number. */
    assert_int_equal(parse("{\"verb\":\"mark\",\"what\":\"start\",\"line\":\"echo hi\\n\\u001b[2J\",\"cwd\":\"/w\"}", &m,
                           err, sizeof err),
                     0);
    assert_true(m.start);
    assert_string_equal(m.line, "echo hi\n\033[2J"); /* as sent: the server cuts it; every reader shows it visibly */
    chan_msg_free(&m);
    assert_int_equal(parse("{\"verb\":\"mark\",\"what\":\"end\",\"status\":0,\"command\":4,\"cwd\":\"/w\"}", &m, err,
                           sizeof err),
                     0);
    assert_false(m.start);
    assert_int_equal(m.command, 4);
    assert_int_equal(m.status, 0);
    chan_msg_free(&m);

    /* The listeners need nothing else (their fds are the transport's). */
    assert_int_equal(parse("{\"verb\":\"listeners\",\"cwd\":\"/\"}", &m, err, sizeof err), 0);
    assert_int_equal(m.verb, CHAN_LISTENERS);
    assert_string_equal(m.cwd, "/");
    chan_msg_free(&m);
}

static void verb_and_cwd_are_required(void **state)
{
    (void)state;
    refused_text("{\"verb\":\"escalate\"}", "malformed request: it needs 'verb' and 'cwd'");
    refused_text("{\"cwd\":\"/\"}", "malformed request: it needs 'verb' and 'cwd'");
    refused_text("{\"verb\":5,\"cwd\":\"/\"}", "malformed request: it needs 'verb' and 'cwd'");
    refused_text("{\"verb\":\"check\",\"cwd\":[\"/\"]}", "malformed request: it needs 'verb' and 'cwd'");
    refused_text("{\"verb\":\"approve\",\"id\":7,\"cwd\":\"/\"}", "unknown verb (escalate, check, mark)");
}

static void only_a_json_object_is_a_message(void **state)
{
    (void)state;
    refused_text("[\"verb\",\"cwd\"]", "malformed request: it needs 'verb' and 'cwd'");
    refused_text("not json and no reply socket", "malformed request: not JSON");
    refused_text("{\"verb\":\"check\",", "malformed request: not JSON");
    refused_text("{\"verb\":\"check\",\"cwd\":\"/\"} trailing", "malformed request: not JSON");
    refused_text("\"verb\"", "malformed request: not JSON");
    refused("", 0, "malformed request: not JSON");
    /* A NUL inside a string, escaped or raw, is no text. */
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"a\\u0000b\",\"cwd\":\"/\"}",
                 "malformed request: not JSON");
    static const char raw_nul[] = "{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"a\0b\",\"cwd\":\"/\"}";
    refused(raw_nul, sizeof raw_nul - 1, "malformed request: not JSON");
    /* The parser's complaint quotes the input: made visible, one line. */
    refused_text("{\"verb\":tru\x1b[2J\n\x07}", "malformed request: not JSON");
}

static void invalid_utf8_is_refused(void **state)
{
    (void)state;
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"\xff\",\"cwd\":\"/\"}",
                 "malformed request: not UTF-8 (byte 37)");
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"\xc3\",\"cwd\":\"/\"}", "not UTF-8");
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"\xed\xa0\x80\",\"cwd\":\"/\"}", "not UTF-8");
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"\xc0\xaf\",\"cwd\":\"/\"}", "not UTF-8");
    /* An escaped lone surrogate is no character either. */
    refused_text("{\"verb\":\"check\",\"shell\":\"sh\",\"line\":\"\\ud800\",\"cwd\":\"/\"}", "not JSON");
}

static void too_big_a_message_is_refused(void **state)
{
    (void)state;
    size_t len = CHAN_MSG_MAX + 1;
    char *big = xmalloc(len);
    memset(big, ' ', len);
    memcpy(big, "{\"verb\":\"listeners\",\"cwd\":\"/\"}", 30);
    refused(big, len, "malformed request: more than 65536 bytes");
    free(big);
    /* Numbers too big for the parser. */
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":99999999999999999999,\"cwd\":\"/\"}", "not JSON");
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":1e999,\"cwd\":\"/\"}", "not JSON");
}

static void argv_must_be_strings(void **state)
{
    (void)state;
    const char *want = "escalate needs a non-empty 'argv'";
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[]}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":\"make\"}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"make\",5]}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"make\",null]}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"\"]}", want);
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"x\"],\"write\":[1]}",
                 "field 'write' element 0 must be a string without NUL characters");
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"x\"],\"write\":[]}",
                 "field 'write' must be a non-empty array of strings");
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"x\"],\"network\":\"yes\"}",
                 "field 'network' must be true or false");
    refused_text("{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"x\"],\"reason\":[]}",
                 "field 'reason' must be a string");
}

static char *escalate_with(size_t nargs)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{\"verb\":\"escalate\",\"cwd\":\"/\",\"argv\":[\"echo\"");
    for (size_t i = 1; i < nargs; i++)
        buf_puts(&b, ",\"a\"");
    buf_puts(&b, "]}");
    return buf_steal(&b);
}

static void too_many_arguments_are_refused(void **state)
{
    (void)state;
    chan_msg m;
    char err[512];
    char *text = escalate_with(CHAN_ARGV_MAX);
    assert_int_equal(parse(text, &m, err, sizeof err), 0);
    assert_null(m.argv[CHAN_ARGV_MAX]);
    chan_msg_free(&m);
    free(text);
    text = escalate_with(CHAN_ARGV_MAX + 1);
    refused_text(text, "too many arguments");
    free(text);
}

static void check_needs_its_fields_and_any_other_shell_is_sh(void **state)
{
    (void)state;
    chan_msg m;
    char err[512];
    assert_int_equal(parse("{\"verb\":\"check\",\"shell\":\"fish\",\"line\":\"ls\",\"cwd\":\"/\"}", &m, err,
                           sizeof err),
                     0);
    assert_string_equal(m.shell, "sh");
    chan_msg_free(&m);
    assert_int_equal(parse("{\"verb\":\"check\",\"shell\":\"bash\",\"line\":\"\",\"cwd\":\"/\"}", &m, err,
                           sizeof err),
                     0);
    assert_string_equal(m.shell, "bash");
    assert_string_equal(m.line, "");
    chan_msg_free(&m);
    refused_text("{\"verb\":\"check\",\"line\":\"ls\",\"cwd\":\"/\"}", "field 'shell' is required");
    refused_text("{\"verb\":\"check\",\"shell\":\"bash\",\"cwd\":\"/\"}", "field 'line' is required");
    refused_text("{\"verb\":\"check\",\"shell\":\"bash\",\"line\":7,\"cwd\":\"/\"}", "field 'line' must be a string");
}

static void a_reason_is_made_visible_and_kept_short(void **state)
{
    (void)state;
    chan_msg m;
    char err[512];
    assert_int_equal(parse("{\"verb\":\"escalate\",\"argv\":[\"x\"],\"cwd\":\"/\","
                           "\"reason\":\"ok\\u001b[2J\\nnext\\u0007\\u0085\\u007f \\u00e9\"}",
                           &m, err, sizeof err),
                     0);
    assert_string_equal(m.reason, "ok?[2J?next??? \xc3\xa9");
    chan_msg_free(&m);

    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{\"verb\":\"escalate\",\"argv\":[\"x\"],\"cwd\":\"/\",\"reason\":\"");
    for (int i = 0; i < 3000; i++)
        buf_puts(&b, "\xc3\xa9"); /* two bytes each: cut on a character */
    buf_puts(&b, "\"}");
    assert_int_equal(chan_msg_parse(b.data, b.len, &m, err, sizeof err), 0);
    assert_int_equal(strlen(m.reason), CHAN_REASON_MAX);
    chan_msg_free(&m);
    buf_free(&b);
}

static void a_mark_needs_end_and_a_whole_status(void **state)
{
    (void)state;
    const char *want = "mark needs \"what\": \"start\" with a \"line\", or \"end\" (and \"status\" and "
                       "\"command\" numbers, if given)";
    refused_text("{\"verb\":\"mark\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"start\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"start\",\"line\":7,\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"start\",\"line\":\"x\",\"status\":0,\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"line\":\"x\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"command\":\"1\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"command\":1.5,\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":\"0\",\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":1.5,\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":0.0,\"cwd\":\"/\"}", want);
    refused_text("{\"verb\":\"mark\",\"what\":\"end\",\"status\":null,\"cwd\":\"/\"}", want);
    /* Any whole number is taken; only 0 to 255 is a status (snap_server.c). */
    chan_msg m;
    char err[512];
    assert_int_equal(parse("{\"verb\":\"mark\",\"what\":\"end\",\"status\":-9223372036854775808,\"cwd\":\"/\"}", &m,
                           err, sizeof err),
                     0);
    assert_true(m.status < 0);
    chan_msg_free(&m);
}

static void an_error_fits_any_buffer(void **state)
{
    (void)state;
    chan_msg m;
    char err[8];
    assert_int_equal(parse("{\"verb\":\"approve\",\"cwd\":\"/\"}", &m, err, sizeof err), -1);
    assert_string_equal(err, "unknown");
    /* Cut on a character: what jansson quotes of the input is made visible. */
    char small[40];
    assert_int_equal(parse("{\"verb\":\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9}", &m, small, sizeof small), -1);
    assert_true(strlen(small) < sizeof small);
    assert_int_equal(strncmp(small, "malformed request: not JSON", 27), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escalate_is_decoded),
        cmocka_unit_test(check_mark_and_listeners_are_decoded),
        cmocka_unit_test(verb_and_cwd_are_required),
        cmocka_unit_test(only_a_json_object_is_a_message),
        cmocka_unit_test(invalid_utf8_is_refused),
        cmocka_unit_test(too_big_a_message_is_refused),
        cmocka_unit_test(argv_must_be_strings),
        cmocka_unit_test(too_many_arguments_are_refused),
        cmocka_unit_test(check_needs_its_fields_and_any_other_shell_is_sh),
        cmocka_unit_test(a_reason_is_made_visible_and_kept_short),
        cmocka_unit_test(a_mark_needs_end_and_a_whole_status),
        cmocka_unit_test(an_error_fits_any_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
