/*
 * fuzz_proto.c - libFuzzer target for the admin-socket protocol decoder
 * (src/protocol/proto.c): bytes from a client (any process of the user's, or an
 * agent's CLI) framed into lines, parsed as requests, and read with the
 * typed getters every command handler uses.
 *
 * What a user would notice, checked beyond "no crash, no leak":
 *  - the framer hands out every line the input holds, at most the cap
 *    long, however the bytes are cut into reads (the first input byte
 *    chooses the cut), and an oversized line is reported, not delivered;
 *  - every refusal becomes an error reply a client can decode: the reply
 *    encodes (jansson refuses invalid UTF-8, which would leave a client
 *    with neither "ok" nor "error"), its message is one line, its code one
 *    of the protocol's;
 *  - a request that parses encodes back to JSON that parses to the same
 *    object;
 *  - a number field read with a range is inside it; argv is non-empty,
 *    NULL-terminated, its first word non-empty; what base64 decodes to
 *    survives encoding and decoding again.
 *
 * make check runs it over tests/fuzz/corpus/proto with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/proto.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_proto: %s: %s\n", what, detail);
    abort();
}

static const char *const codes[] = {PERR_BAD_JSON, PERR_BAD_REQUEST, PERR_TOO_LARGE, PERR_UNKNOWN_CMD,
                                    PERR_NEED_HELLO, PERR_VERSION, PERR_NOT_FOUND, PERR_FORBIDDEN,
                                    PERR_BUSY, PERR_STDIN_CLOSED, PERR_SPAWN, PERR_RUNNING,
                                    PERR_STORE_FULL, PERR_SHUTTING_DOWN, PERR_FORBIDDEN_BY_POLICY,
                                    PERR_DENIED, PERR_INTERNAL};

/* The error reply the server would send for e must encode and say what e
 * says. */
static void check_error_reply(json_t *id, const proto_err *e)
{
    bool known = false;
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        known |= e->code && strcmp(e->code, codes[i]) == 0;
    if (!known)
        broken("an error code that is not the protocol's", e->code ? e->code : "(null)");
    if (!e->message[0] || strchr(e->message, '\n') || strchr(e->message, '\r'))
        broken("an error message that is empty or not one line", e->message);
    json_t *reply = proto_error(id, e->code, e->message);
    char *text = json_dumps(reply, JSON_COMPACT);
    json_decref(reply);
    json_error_t jerr;
    json_t *back = text ? json_loads(text, 0, &jerr) : NULL;
    json_t *err = json_object_get(back, "error");
    const char *msg = json_string_value(json_object_get(err, "message"));
    if (!msg || strcmp(msg, e->message) != 0)
        broken("an error reply a client cannot read", e->message);
    json_decref(back);
    free(text);
}

/* What parsed encodes again and reads back as the same object. */
static void check_roundtrip(json_t *req)
{
    char *text = json_dumps(req, JSON_COMPACT);
    if (!text)
        broken("a parsed request that does not encode", "");
    json_error_t jerr;
    json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!back || !json_equal(back, req))
        broken("a request that does not read back as itself", text);
    json_decref(back);
    free(text);
}

static void check_fields(json_t *req, json_t *id)
{
    proto_err e = {0};
    int64_t n = 0;
    int rc = proto_get_int(req, "session", false, 1, 2147483647, &n, &e);
    if (rc < 0)
        check_error_reply(id, &e);
    else if (rc == 1 && (n < 1 || n > 2147483647))
        broken("an integer outside its range", "session");
    rc = proto_get_int(req, "timeout_ms", false, 0, INT64_MAX, &n, &e);
    if (rc < 0)
        check_error_reply(id, &e);
    else if (rc == 1 && n < 0)
        broken("an integer outside its range", "timeout_ms");

    bool b;
    if (proto_get_bool(req, "raw", false, &b, &e) < 0)
        check_error_reply(id, &e);

    const char *s = NULL;
    rc = proto_get_string(req, "cwd", false, &s, &e);
    if (rc < 0)
        check_error_reply(id, &e);
    else if (rc == 1 && (!s || strlen(s) != json_string_length(json_object_get(req, "cwd"))))
        broken("a string field read short or as NULL", "cwd");

    char **argv = NULL;
    rc = proto_get_argv(req, "argv", false, &argv, &e);
    if (rc < 0) {
        check_error_reply(id, &e);
    } else if (rc == 1) {
        if (!argv || !argv[0] || !argv[0][0])
            broken("an argv without a program name", "argv");
        size_t k = 0;
        while (argv[k])
            k++;
        if (k != json_array_size(json_object_get(req, "argv")))
            broken("an argv of another length than the array", "argv");
        /* What clients are shown of it must encode. */
        json_t *display = proto_argv_json(argv);
        char *shown = json_dumps(display, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(display);
        if (!shown)
            broken("an argv whose display does not encode", argv[0]);
        free(shown);
        char **copy = strv_copy(argv);
        for (size_t i = 0; i < k; i++)
            if (strcmp(copy[i], argv[i]) != 0)
                broken("a copied argv that differs", argv[i]);
        strv_free(copy);
        strv_free(argv);
    }

    const char *b64 = json_string_value(json_object_get(req, "data_b64"));
    if (b64) {
        size_t len = json_string_length(json_object_get(req, "data_b64"));
        size_t out_len = 0;
        char *raw = base64_decode(b64, len, &out_len);
        if (raw) {
            /* Non-canonical padding bits are accepted (as Python's decoder
             * does), so the check is on the bytes: encoded and decoded
             * again they are the same. */
            size_t again_len = 0, back_len = 0;
            char *again = base64_encode(raw, out_len, &again_len);
            char *back = base64_decode(again, again_len, &back_len);
            if (!back || back_len != out_len || memcmp(back, raw, out_len) != 0 || again_len != len)
                broken("base64 whose bytes do not survive encoding again", b64);
            free(back);
            free(again);
            free(raw);
        }
    }
}

static void one_line(const char *line, size_t len)
{
    json_t *id = NULL;
    proto_err e = {0};
    json_t *req = proto_parse_request(line, len, &id, &e);
    if (!req) {
        check_error_reply(id, &e);
        json_decref(id);
        return;
    }
    if (!json_is_string(json_object_get(req, "cmd")))
        broken("a request without a string cmd", "");
    check_roundtrip(req);
    check_fields(req, id);
    json_decref(req);
    json_decref(id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* The first byte: how the stream is cut into reads (1..256 bytes) and
     * which cap the reader has (a small one reaches the oversize path). */
    size_t chunk = (size_t)(data[0] & 0x7f) + 1;
    size_t max = (data[0] & 0x80) ? 64 : PROTO_MAX_MSG;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;

    proto_reader r;
    proto_reader_init(&r, max);
    size_t lines = 0, delivered = 0;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        proto_reader_feed(&r, in + off, n);
        const char *line;
        size_t l;
        int rc;
        while ((rc = proto_reader_next(&r, &line, &l)) != 0) {
            if (rc < 0)
                continue;
            if (l > max)
                broken("a line longer than the cap delivered", "");
            if (memchr(line, '\n', l))
                broken("a line with a newline inside delivered", "");
            delivered += l;
            lines++;
            one_line(line, l);
        }
    }
    /* Every delivered line came from the input. */
    if (delivered > len || lines > len)
        broken("more bytes delivered than were fed", "");
    if (proto_reader_pending(&r) > len)
        broken("more bytes pending than were fed", "");
    proto_reader_free(&r);
    return 0;
}
