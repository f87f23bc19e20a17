/*
 * mcp_rpc.c - JSON-RPC 2.0 messages, one per line (MCP's stdio transport).
 */
#include "config.h"

#include "mcp/mcp_rpc.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bad(rpc_msg *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(rpc_msg *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    m->kind = RPC_BAD;
    m->error_code = code;
    vsnprintf(m->error_text, sizeof m->error_text, fmt, ap);
    va_end(ap);
}

/* MCP ids are strings or numbers, never null. */
static bool valid_id(json_t *id)
{
    return json_is_string(id) || json_is_integer(id) || json_is_real(id);
}

void rpc_parse(const char *line, size_t len, rpc_msg *m)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    m->root = json_loadb(line, len, JSON_DECODE_ANY, &je);
    if (!m->root) {
        bad(m, RPC_PARSE_ERROR, "parse error: %s (line %d, column %d)", je.text, je.line, je.column);
        return;
    }
    if (json_is_array(m->root)) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: batches are not supported (send one message per line)");
        return;
    }
    if (!json_is_object(m->root)) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: a message must be a JSON object");
        return;
    }
    json_t *id = json_object_get(m->root, "id");
    if (id && valid_id(id))
        m->id = id;
    json_t *version = json_object_get(m->root, "jsonrpc");
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    json_t *method = json_object_get(m->root, "method");
    if (!method) {
        if (m->id && (json_object_get(m->root, "result") || json_object_get(m->root, "error"))) {
            m->kind = RPC_RESPONSE;
            return;
        }
        bad(m, RPC_INVALID_REQUEST, "invalid request: no \"method\" (and not a response)");
        return;
    }
    if (!json_is_string(method)) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: \"method\" must be a string");
        return;
    }
    m->method = json_string_value(method);
    json_t *params = json_object_get(m->root, "params");
    if (params && !json_is_object(params) && !json_is_array(params)) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: \"params\" must be an object");
        return;
    }
    m->params = params;
    if (!id) {
        m->kind = RPC_NOTIFICATION;
        return;
    }
    if (!m->id) {
        bad(m, RPC_INVALID_REQUEST, "invalid request: \"id\" must be a string or a number");
        return;
    }
    m->kind = RPC_REQUEST;
}

void rpc_msg_free(rpc_msg *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof *m);
}

static json_t *envelope(json_t *id)
{
    json_t *msg = json_object();
    json_object_set_new(msg, "jsonrpc", json_string("2.0"));
    json_object_set_new(msg, "id", id ? id : json_null());
    return msg;
}

json_t *rpc_result(json_t *id, json_t *result)
{
    json_t *msg = envelope(id);
    json_object_set_new(msg, "result", result);
    return msg;
}

json_t *rpc_error(json_t *id, int code, const char *message)
{
    json_t *msg = envelope(id);
    json_object_set_new(msg, "error", json_pack("{s:i, s:s}", "code", code, "message", message));
    return msg;
}

json_t *rpc_notification(const char *method, json_t *params)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
    json_object_set_new(msg, "params", params ? params : json_object());
    return msg;
}

int rpc_send(int fd, json_t *msg)
{
    /* Compact JSON has no raw newline (inside strings they are escaped),
     * so the message is exactly one line. */
    /* 15 digits: a number rounded to four decimals (wall_time_seconds)
     * is written as it reads, 0.0123 and not 0.012300000000000001. */
    char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(msg);
    if (!text)
        return -ENOMEM;
    size_t n = strlen(text);
    text[n] = '\n';
    int rc = write_all(fd, text, n + 1);
    free(text);
    return rc;
}
