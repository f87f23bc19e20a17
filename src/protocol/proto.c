/*
 * proto.c - message framing, request validation, reply building.  The server
 * feeds untrusted bytes through here, so every limit is checked before use
 * and every failure becomes an error reply, never a crash.
 */
#include "config.h"

#include "protocol/proto.h"
#include "base/quote.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void proto_reader_init(proto_reader *r, size_t max)
{
    buf_init(&r->buf);
    r->start = 0;
    r->scanned = 0;
    r->max = max;
    r->discarding = false;
}

void proto_reader_free(proto_reader *r)
{
    buf_free(&r->buf);
}

void proto_reader_feed(proto_reader *r, const char *data, size_t len)
{
    /* Compact before growing so a long-lived connection does not creep. */
    if (r->start > 0 && r->start == r->buf.len) {
        buf_reset(&r->buf);
        r->start = 0;
    } else if (r->start > 65536 && r->start > r->buf.len / 2) {
        buf_consume(&r->buf, r->start);
        r->start = 0;
    }
    buf_append(&r->buf, data, len);
}

size_t proto_reader_pending(const proto_reader *r)
{
    return r->buf.len - r->start;
}

int proto_reader_next(proto_reader *r, const char **line, size_t *len)
{
    for (;;) {
        char *base = r->buf.data + r->start;
        size_t avail = r->buf.len - r->start;
        char *nl = avail > r->scanned ? memchr(base + r->scanned, '\n', avail - r->scanned) : NULL;
        if (!nl) {
            r->scanned = avail;
            if (r->discarding) {
                /* Drop what we hold of the oversized message. */
                r->start = r->buf.len;
                r->scanned = 0;
                return 0;
            }
            if (avail > r->max) {
                r->discarding = true;
                r->start = r->buf.len;
                r->scanned = 0;
                return -1;
            }
            return 0;
        }
        size_t n = (size_t)(nl - base);
        r->start += n + 1;
        r->scanned = 0;
        if (r->discarding) {
            r->discarding = false;
            continue;
        }
        if (n > r->max)
            return -1;
        if (n > 0 && base[n - 1] == '\r')
            n--;
        *line = base;
        *len = n;
        return 1;
    }
}

void proto_fail(proto_err *e, const char *code, const char *fmt, ...)
{
    e->code = code;
    char raw[sizeof e->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* A message may quote the client's bytes (jansson's "near '...'"): made
     * visible and valid UTF-8, or the error reply would not encode and the
     * client would get neither "ok" nor "error". */
    char *shown = quote_text_visible(raw, strlen(raw));
    size_t n = strlen(shown);
    if (n >= sizeof e->message)
        n = utf8_complete_prefix(shown, sizeof e->message - 1);
    memcpy(e->message, shown, n);
    e->message[n] = '\0';
    free(shown);
}

json_t *proto_parse_request(const char *line, size_t len, json_t **id_out, proto_err *e)
{
    *id_out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* jansson names its own flag in one message; users need not. */
        char *flag = strstr(jerr.text, " without JSON_ALLOW_NUL");
        if (flag)
            memmove(flag, flag + 23, strlen(flag + 23) + 1);
        proto_fail(e, PERR_BAD_JSON, "invalid JSON at byte %d: %s", jerr.position, jerr.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        proto_fail(e, PERR_BAD_REQUEST, "a message must be a JSON object");
        json_decref(root);
        return NULL;
    }
    json_t *id = json_object_get(root, "id");
    if (id) {
        if (!json_is_integer(id) && !json_is_string(id)) {
            proto_fail(e, PERR_BAD_REQUEST, "field 'id' must be an integer or a string");
            json_decref(root);
            return NULL;
        }
        if (json_is_string(id) && json_string_length(id) > 128) {
            proto_fail(e, PERR_BAD_REQUEST, "field 'id' must be at most 128 bytes");
            json_decref(root);
            return NULL;
        }
        *id_out = json_incref(id);
    }
    const char *cmd;
    if (proto_get_string(root, "cmd", true, &cmd, e) < 0) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int proto_get_string(json_t *obj, const char *name, bool required, const char **out, proto_err *e)
{
    json_t *v = json_object_get(obj, name);
    if (!v || json_is_null(v)) {
        if (required) {
            proto_fail(e, PERR_BAD_REQUEST, "field '%s' is required", name);
            return -1;
        }
        return 0;
    }
    if (!json_is_string(v)) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must be a string", name);
        return -1;
    }
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must not contain NUL characters", name);
        return -1;
    }
    *out = json_string_value(v);
    return 1;
}

/* Is d a whole number an int64_t holds?  The range is checked before the
 * cast: converting 1e300 to an integer is undefined behaviour. */
static bool whole_int64(double d)
{
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d;
}

int proto_get_int(json_t *obj, const char *name, bool required, int64_t min, int64_t max,
                  int64_t *out, proto_err *e)
{
    json_t *v = json_object_get(obj, name);
    if (!v || json_is_null(v)) {
        if (required) {
            proto_fail(e, PERR_BAD_REQUEST, "field '%s' is required", name);
            return -1;
        }
        return 0;
    }
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v) && whole_int64(json_real_value(v))) {
        x = (int64_t)json_real_value(v); /* agents send 1000.0 */
    } else {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must be a whole number", name);
        return -1;
    }
    if (x < min || x > max) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must be between %lld and %lld (got %lld)", name,
                   (long long)min, (long long)max, (long long)x);
        return -1;
    }
    *out = x;
    return 1;
}

int proto_get_bool(json_t *obj, const char *name, bool required, bool *out, proto_err *e)
{
    json_t *v = json_object_get(obj, name);
    if (!v || json_is_null(v)) {
        if (required) {
            proto_fail(e, PERR_BAD_REQUEST, "field '%s' is required", name);
            return -1;
        }
        return 0;
    }
    if (!json_is_boolean(v)) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must be true or false", name);
        return -1;
    }
    *out = json_is_true(v);
    return 1;
}

json_t *proto_text_json(const char *text)
{
    size_t n;
    char *fixed = uexec_lossy_utf8(text, strlen(text), &n);
    json_t *s = json_stringn(fixed, n);
    free(fixed);
    return s;
}

json_t *proto_argv_json(char *const *argv)
{
    json_t *a = json_array();
    for (size_t i = 0; argv && argv[i]; i++)
        json_array_append_new(a, proto_text_json(argv[i]));
    return a;
}

int proto_get_argv(json_t *obj, const char *name, bool required, char ***out, proto_err *e)
{
    json_t *v = json_object_get(obj, name);
    if (!v || json_is_null(v)) {
        if (required) {
            proto_fail(e, PERR_BAD_REQUEST, "field '%s' is required", name);
            return -1;
        }
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) == 0) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must be a non-empty array of strings", name);
        return -1;
    }
    size_t n = json_array_size(v);
    if (n > 65536) {
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' has more than 65536 elements", name);
        return -1;
    }
    char **argv = xcalloc(n + 1, sizeof *argv);
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s)) {
            strv_free(argv);
            proto_fail(e, PERR_BAD_REQUEST, "field '%s' element %zu must be a string without NUL characters",
                       name, i);
            return -1;
        }
        argv[i] = xstrdup(json_string_value(s));
    }
    if (argv[0][0] == '\0') {
        strv_free(argv);
        proto_fail(e, PERR_BAD_REQUEST, "field '%s' must start with a program name, not an empty string", name);
        return -1;
    }
    *out = argv;
    return 1;
}

json_t *proto_data_event(const char *event, int session, const char *data, size_t len)
{
    size_t b64_len;
    char *b64 = base64_encode(data, len, &b64_len);
    json_t *ev = json_pack("{s:s, s:i, s:s%}", "event", event, "session", session, "data_b64", b64, b64_len);
    free(b64);
    return ev;
}

json_t *proto_ok(json_t *id)
{
    json_t *o = json_object();
    if (id)
        json_object_set(o, "id", id);
    json_object_set_new(o, "ok", json_true());
    return o;
}

json_t *proto_error(json_t *id, const char *code, const char *message)
{
    json_t *o = json_object();
    json_object_set(o, "id", id ? id : json_null());
    json_object_set_new(o, "error", json_pack("{s:s, s:s}", "code", code, "message", message));
    return o;
}

char *proto_dump(json_t *obj, size_t *len)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!s) {
        /* Only on allocation failure or invalid UTF-8 in a string: both are
         * bugs on our side; report them instead of sending nothing. */
        s = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"cannot encode reply\"}}");
        if (!s)
            abort();
    }
    size_t n = strlen(s);
    char *out = xmalloc(n + 2);
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(s);
    if (len)
        *len = n + 1;
    return out;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len, size_t *out_len)
{
    const unsigned char *p = data;
    size_t n = (len + 2) / 3 * 4;
    char *out = xmalloc(n + 1), *o = out;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = b64[v >> 18];
        *o++ = b64[(v >> 12) & 63];
        *o++ = b64[(v >> 6) & 63];
        *o++ = b64[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
        *o++ = b64[v >> 18];
        *o++ = b64[(v >> 12) & 63];
        *o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    if (out_len)
        *out_len = n;
    return out;
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

char *base64_decode(const char *s, size_t len, size_t *out_len)
{
    if (len % 4 != 0)
        return NULL;
    char *out = xmalloc(len / 4 * 3 + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            if (s[i + k] == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad || (v[k] = b64_value(s[i + k])) < 0) {
                free(out);
                return NULL;
            }
        }
        unsigned x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        out[o++] = (char)(x >> 16);
        if (pad < 2)
            out[o++] = (char)(x >> 8);
        if (pad < 1)
            out[o++] = (char)x;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}
