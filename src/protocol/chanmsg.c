/*
 * chanmsg.c - see chanmsg.h.
 */
#include "config.h"

#include "protocol/chanmsg.h"

#include "protocol/proto.h"
#include "base/utf8.h"
#include "base/util.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one reply for a mark that is not one. */
#define MARK_USAGE                                                                                      \
    "mark needs \"what\": \"start\" with a \"line\", or \"end\" (and \"status\" and \"command\" numbers, if " \
    "given)"

/* Fail with a message: m emptied, err one line of valid UTF-8 that fits
 * errlen (text from the input, such as a JSON parser's "near '...'", made
 * visible and cut on a character's boundary). */
static int fail(chan_msg *m, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(chan_msg *m, char *err, size_t errlen, const char *fmt, ...)
{
    chan_msg_free(m);
    if (errlen == 0)
        return -1;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *seen = sanitize_text(text, strlen(text), errlen - 1);
    memcpy(err, seen, strlen(seen) + 1);
    free(seen);
    return -1;
}

static int read_escalate(json_t *o, chan_msg *m, char *err, size_t errlen)
{
    proto_err e;
    const char *reason = NULL;
    if (proto_get_argv(o, "argv", true, &m->argv, &e) < 0)
        return fail(m, err, errlen, "escalate needs a non-empty 'argv'");
    size_t n = 0;
    while (m->argv[n])
        n++;
    if (n > CHAN_ARGV_MAX)
        return fail(m, err, errlen, "too many arguments");
    if (proto_get_argv(o, "write", false, &m->write, &e) < 0 ||
        proto_get_bool(o, "network", false, &m->network, &e) < 0 ||
        proto_get_string(o, "reason", false, &reason, &e) < 0)
        return fail(m, err, errlen, "%s", e.message);
    if (reason && *reason)
        m->reason = sanitize_text(reason, strlen(reason), CHAN_REASON_MAX);
    return 0;
}

static int read_check(json_t *o, chan_msg *m, char *err, size_t errlen)
{
    proto_err e;
    const char *shell = NULL, *line = NULL;
    if (proto_get_string(o, "shell", true, &shell, &e) < 0 || proto_get_string(o, "line", true, &line, &e) < 0)
        return fail(m, err, errlen, "%s", e.message);
    m->shell = strcmp(shell, "bash") == 0 ? "bash" : strcmp(shell, "zsh") == 0 ? "zsh" : "sh";
    m->line = xstrdup(line);
    return 0;
}

static int read_mark(json_t *o, chan_msg *m, char *err, size_t errlen)
{
    const char *what = json_string_value(json_object_get(o, "what"));
    json_t *status = json_object_get(o, "status");
    json_t *command = json_object_get(o, "command");
    json_t *line = json_object_get(o, "line");
    if (what && strcmp(what, "start") == 0) {
        if (!json_is_string(line) || status || command)
            return fail(m, err, errlen, MARK_USAGE);
        m->start = true;
        m->line = xstrdup(json_string_value(line));
        return 0;
    }
    if (!what || strcmp(what, "end") != 0 || line || (status && !json_is_integer(status)) ||
        (command && !json_is_integer(command)))
        return fail(m, err, errlen, MARK_USAGE);
    m->status = status ? (long long)json_integer_value(status) : -1;
    m->command = command ? (long long)json_integer_value(command) : -1;
    return 0;
}

int chan_msg_parse(const char *data, size_t len, chan_msg *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->status = -1;
    m->command = -1;
    if (errlen)
        err[0] = '\0';
    if (len > CHAN_MSG_MAX)
        return fail(m, err, errlen, "malformed request: more than %d bytes", CHAN_MSG_MAX);
    size_t valid = utf8_valid_prefix(data, len);
    if (valid < len)
        return fail(m, err, errlen, "malformed request: not UTF-8 (byte %zu)", valid);
    json_error_t jerr;
    json_t *o = json_loadb(data, len, 0, &jerr);
    if (!o)
        return fail(m, err, errlen, "malformed request: not JSON (%s)", jerr.text);
    const char *verb = json_string_value(json_object_get(o, "verb"));
    const char *cwd = json_string_value(json_object_get(o, "cwd"));
    if (!json_is_object(o) || !verb || !cwd) {
        json_decref(o);
        return fail(m, err, errlen, "malformed request: it needs 'verb' and 'cwd'");
    }
    int rc = 0;
    m->cwd = xstrdup(cwd);
    if (strcmp(verb, "listeners") == 0) {
        m->verb = CHAN_LISTENERS;
    } else if (strcmp(verb, "mark") == 0) {
        m->verb = CHAN_MARK;
        rc = read_mark(o, m, err, errlen);
    } else if (strcmp(verb, "escalate") == 0) {
        m->verb = CHAN_ESCALATE;
        rc = read_escalate(o, m, err, errlen);
    } else if (strcmp(verb, "check") == 0) {
        m->verb = CHAN_CHECK;
        rc = read_check(o, m, err, errlen);
    } else {
        rc = fail(m, err, errlen, "unknown verb (escalate, check, mark)");
    }
    json_decref(o);
    return rc;
}

void chan_msg_free(chan_msg *m)
{
    free(m->cwd);
    strv_free(m->argv);
    strv_free(m->write);
    free(m->reason);
    free(m->line);
    memset(m, 0, sizeof *m);
    m->status = -1;
    m->command = -1;
}
