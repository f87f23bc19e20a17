/*
 * proto.h - the admin-socket protocol (docs/protocol.md): newline-delimited
 * JSON objects of at most 1 MiB.  A request carries "id" and "cmd"; a reply
 * echoes the id with "ok":true and fields, or with
 * "error":{"code":...,"message":...}.  Events carry "event" and no id.
 *
 * This module frames bytes into messages, parses and validates requests,
 * and builds replies.  It is shared by the server and every client.
 *
 * Included by src/protocol/, src/record/ (reccopy.c), src/server/, src/snap/, src/gate/, src/mcp/,
 * ui/ and src/cli/.
 */
#ifndef CORRAL_PROTO_H
#define CORRAL_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define PROTO_VERSION 1
#define PROTO_MAX_MSG (1024u * 1024u)

/* Error codes (the "code" of an error reply). */
#define PERR_BAD_JSON "bad_json"
#define PERR_BAD_REQUEST "bad_request"
#define PERR_TOO_LARGE "too_large"
#define PERR_UNKNOWN_CMD "unknown_cmd"
#define PERR_NEED_HELLO "need_hello"
#define PERR_VERSION "version_mismatch"
#define PERR_NOT_FOUND "not_found"
#define PERR_FORBIDDEN "forbidden"
#define PERR_BUSY "busy"
#define PERR_STDIN_CLOSED "stdin_closed"
#define PERR_SPAWN "spawn_failed"
#define PERR_RUNNING "session_running"
#define PERR_EXITED "session_exited"
#define PERR_STORE_FULL "store_full"
#define PERR_SHUTTING_DOWN "shutting_down"
#define PERR_FORBIDDEN_BY_POLICY "forbidden_by_policy"
#define PERR_DENIED "denied"
#define PERR_INTERNAL "internal"

/* Splits a byte stream into lines of at most max bytes (newline excluded). */
typedef struct proto_reader {
    buf_t buf;
    size_t start;      /* first unconsumed byte in buf */
    size_t scanned;    /* bytes after start known to hold no '\n' */
    size_t max;
    bool discarding;   /* inside an oversized message: drop to its '\n' */
} proto_reader;

void proto_reader_init(proto_reader *r, size_t max);
void proto_reader_free(proto_reader *r);
void proto_reader_feed(proto_reader *r, const char *data, size_t len);
/* 1: *line and *len hold the next message (valid until the next feed/next call);
 * 0: need more bytes; -1: a message passed the cap (reported once; its
 * bytes are dropped up to its newline).  Trailing '\r' is removed. */
int proto_reader_next(proto_reader *r, const char **line, size_t *len);
/* Bytes held for an incomplete message. */
size_t proto_reader_pending(const proto_reader *r);

/* A parse or validation failure: code is one of PERR_*. */
typedef struct proto_err {
    const char *code;
    char message[256];
} proto_err;

void proto_fail(proto_err *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parse one message into an object with a string "cmd".  On failure *id_out
 * is the request id if one could be read (else NULL); returns NULL. */
json_t *proto_parse_request(const char *line, size_t len, json_t **id_out, proto_err *e);

/* Typed field access with precise messages ("field 'cmd' must be a
 * string").  Return 1 if present and valid, 0 if absent (and not required),
 * -1 on error (e filled). */
int proto_get_string(json_t *obj, const char *name, bool required, const char **out, proto_err *e);
int proto_get_int(json_t *obj, const char *name, bool required, int64_t min, int64_t max,
                  int64_t *out, proto_err *e);
int proto_get_bool(json_t *obj, const char *name, bool required, bool *out, proto_err *e);
/* A non-empty array of strings; *out is a NULL-terminated array the caller
 * frees with strv_free (base/util.h). */
int proto_get_argv(json_t *obj, const char *name, bool required, char ***out, proto_err *e);
/* text as a JSON string, bytes that are not UTF-8 as U+FFFD: jansson
 * refuses invalid UTF-8, and a reply or event would go missing. */
json_t *proto_text_json(const char *text);
/* argv as a JSON array of strings; bytes that are not UTF-8 become
 * U+FFFD, so no word can go missing from what a client shows. */
json_t *proto_argv_json(char *const *argv);

/* {"id":id,"ok":true}; add fields, then proto_dump. id may be NULL. */
json_t *proto_ok(json_t *id);
json_t *proto_error(json_t *id, const char *code, const char *message);
/* {"event":event,"session":session,"data_b64":base64 of data}. */
json_t *proto_data_event(const char *event, int session, const char *data, size_t len);
/* Compact JSON plus '\n'; steals obj.  Caller frees the string. */
char *proto_dump(json_t *obj, size_t *len);

/* Base64 (RFC 4648, padded). */
char *base64_encode(const void *data, size_t len, size_t *out_len);
/* Returns decoded bytes (caller frees) or NULL on bad input. */
char *base64_decode(const char *s, size_t len, size_t *out_len);

#endif
