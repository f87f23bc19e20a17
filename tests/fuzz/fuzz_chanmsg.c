/*
 * fuzz_chanmsg.c - libFuzzer target for the session channel's messages
 * (src/protocol/chanmsg.c): what any process in a sandbox can send the server over
 * fd 3.  Any bytes must decode or fail with one line of valid UTF-8 and no
 * control characters (the "failed" reply the requester reads), leaving
 * nothing behind; never crash, leak, read outside the input or take more
 * than a moment.  A message that decodes has its verb's fields: a cwd, for
 * escalate a non-empty NULL-terminated argv of at most CHAN_ARGV_MAX
 * words and a reason with no control characters, for check one of the
 * three shells and a line; nothing of another verb's.  Encoded back as
 * JSON it must decode to the same message (the reason already visible
 * stays as it is).
 *
 * make check builds it with tests/fuzz/replay_main.c and replays
 * tests/fuzz/corpus/chanmsg; tests/fuzz/build.sh fuzz_chanmsg builds it
 * for libFuzzer, tests/fuzz/run.sh fuzz_chanmsg SECONDS runs it with
 * tests/fuzz/chanmsg.dict (tests/fuzz/README.md).
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/chanmsg.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stop with a message: the fuzzer (or make check) reports the input. */
static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_chanmsg: %s: %s\n", what, detail ? detail : "(null)");
    abort();
}

/* Text a person reads: valid UTF-8 without C0, DEL or C1 controls. */
static bool visible(const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            return false;
        i += n;
    }
    return true;
}

static size_t words(char **v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static bool same_words(char **a, char **b)
{
    if (!a || !b)
        return a == b;
    size_t n = words(a);
    if (words(b) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i], b[i]) != 0)
            return false;
    return true;
}

static bool same_text(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

static void check_failure(const chan_msg *m, const char *err)
{
    if (!err[0])
        broken("a message refused without a word", "");
    if (strchr(err, '\n'))
        broken("an error of more than one line", err);
    if (!visible(err))
        broken("an error that is not visible text (no JSON reply could carry it)", err);
    if (m->cwd || m->argv || m->write || m->reason || m->shell || m->line || m->network || m->status != -1)
        broken("a message refused left fields behind", err);
}

static void check_success(const chan_msg *m)
{
    if (!m->cwd)
        broken("a message without its cwd", "");
    bool escalate = m->verb == CHAN_ESCALATE, check = m->verb == CHAN_CHECK;
    switch (m->verb) {
    case CHAN_ESCALATE: {
        size_t n = words(m->argv);
        if (n == 0 || n > CHAN_ARGV_MAX || !m->argv[0][0])
            broken("an escalation's argv is empty or too long", m->argv ? m->argv[0] : NULL);
        if (m->write && !m->write[0])
            broken("an empty list of write roots", m->cwd);
        if (m->reason && (!m->reason[0] || strlen(m->reason) > CHAN_REASON_MAX || !visible(m->reason)))
            broken("a reason not made visible", m->reason);
        break;
    }
    case CHAN_CHECK:
        if (!m->shell || (strcmp(m->shell, "bash") != 0 && strcmp(m->shell, "zsh") != 0 && strcmp(m->shell, "sh") != 0))
            broken("a check's shell is not bash, zsh or sh", m->shell);
        if (!m->line)
            broken("a check without its line", m->cwd);
        break;
    case CHAN_MARK:
    case CHAN_LISTENERS:
        break;
    default:
        broken("a verb outside the enum", m->cwd);
    }
    if (!escalate && (m->argv || m->write || m->reason || m->network))
        broken("an escalation's fields in another verb", m->cwd);
    if (!check && (m->shell || m->line))
        broken("a check's fields in another verb", m->cwd);
    if (m->verb != CHAN_MARK && m->status != -1)
        broken("a mark's status in another verb", m->cwd);
}

static json_t *words_json(char **v)
{
    json_t *a = json_array();
    for (size_t i = 0; v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* m as a message again. */
static json_t *encode(const chan_msg *m)
{
    static const char *const verbs[] = {"escalate", "check", "mark", "listeners"};
    json_t *o = json_object();
    json_object_set_new(o, "verb", json_string(verbs[m->verb]));
    json_object_set_new(o, "cwd", json_string(m->cwd));
    if (m->argv)
        json_object_set_new(o, "argv", words_json(m->argv));
    if (m->write)
        json_object_set_new(o, "write", words_json(m->write));
    if (m->verb == CHAN_ESCALATE)
        json_object_set_new(o, "network", json_boolean(m->network));
    if (m->reason)
        json_object_set_new(o, "reason", json_string(m->reason));
    if (m->shell)
        json_object_set_new(o, "shell", json_string(m->shell));
    if (m->line)
        json_object_set_new(o, "line", json_string(m->line));
    if (m->verb == CHAN_MARK) {
        json_object_set_new(o, "what", json_string("end"));
        if (m->status != -1)
            json_object_set_new(o, "status", json_integer(m->status));
    }
    return o;
}

static void check_round_trip(const chan_msg *m)
{
    json_t *o = encode(m);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        broken("a decoded message cannot be encoded", m->cwd);
    size_t len = strlen(text);
    if (len <= CHAN_MSG_MAX) {
        chan_msg back;
        char err[512];
        if (chan_msg_parse(text, len, &back, err, sizeof err) < 0)
            broken("a decoded message, encoded again, is refused", err);
        if (back.verb != m->verb || !same_text(back.cwd, m->cwd) || !same_words(back.argv, m->argv) ||
            !same_words(back.write, m->write) || back.network != m->network || !same_text(back.reason, m->reason) ||
            !same_text(back.shell, m->shell) || !same_text(back.line, m->line) || back.status != m->status)
            broken("a decoded message, encoded again, decodes differently", text);
        chan_msg_free(&back);
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chan_msg m;
    char err[512];
    if (chan_msg_parse((const char *)data, size, &m, err, sizeof err) < 0) {
        check_failure(&m, err);
        return 0;
    }
    check_success(&m);
    check_round_trip(&m);
    chan_msg_free(&m);
    return 0;
}
