/*
 * fuzz_mcp.c - libFuzzer target for what `corral mcp` reads from its client
 * (src/mcp/mcp_rpc.c, src/mcp/mcp_tools.c): lines framed as corral mcp frames them
 * (proto_reader with the JSON-RPC cap), each sorted by rpc_parse, and a
 * tools/call translated by mcp_tool_request into the server request it
 * would send.  The client is an agent: its bytes are hostile.
 *
 * What a user (or the model) would notice, checked beyond "no crash, no
 * leak":
 *  - every message gets the answer its kind calls for, and that answer
 *    encodes: a refusal's text is one line of valid UTF-8 (jansson refuses
 *    anything else and the client would be left waiting), a request has a
 *    method and an id a reply can echo;
 *  - a tools/call becomes either a server request that the server's own
 *    decoder (proto_parse_request) accepts, with a cmd and, for an exec, a
 *    non-empty argv or a command line (an empty one runs the shell on
 *    nothing, as Codex does); or an error text that encodes.
 *
 * make check runs it over tests/fuzz/corpus/mcp with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_rpc.h"
#include "mcp/mcp_state.h"
#include "mcp/mcp_tools.h"
#include "protocol/proto.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_mcp: %s: %s\n", what, detail);
    abort();
}

/* msg (stolen) must encode as one line and read back. */
static void must_encode(json_t *msg, const char *what)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text)
        broken("a reply that does not encode", what);
    if (strchr(text, '\n'))
        broken("a reply of more than one line", what);
    json_error_t jerr;
    json_t *back = json_loads(text, 0, &jerr);
    if (!back)
        broken("a reply that does not read back", text);
    json_decref(back);
    free(text);
}

static void tools_call(json_t *params)
{
    json_t *name = json_object_get(params, "name");
    json_t *args = json_object_get(params, "arguments");
    if (!json_is_string(name) || (args && !json_is_object(args) && !json_is_null(args)))
        return; /* answered with -32602 before any translation */
    static const mcp_exec_defaults d = {"/work/space", NULL, NULL, NULL, MCP_DEFAULT_YIELD_CAP_MS};
    char err[2048] = "";
    json_t *req = NULL;
    mcp_tool_status st = mcp_tool_request(json_string_value(name), json_is_object(args) ? args : NULL, &d,
                                          &req, err, sizeof err);
    if (st != MCP_TOOL_OK) {
        if (!err[0])
            broken("a refused tools/call without a reason", json_string_value(name));
        if (st == MCP_TOOL_UNKNOWN)
            must_encode(rpc_error(json_integer(1), RPC_INVALID_PARAMS, err), err);
        else
            must_encode(rpc_result(json_integer(1), mcp_tool_error(err)), err);
        return;
    }
    /* What goes to the server: its own decoder must take it. */
    json_object_set_new(req, "id", json_integer(7));
    char *line = json_dumps(req, JSON_COMPACT);
    if (!line)
        broken("a server request that does not encode", json_string_value(name));
    json_t *id = NULL;
    proto_err e;
    json_t *back = proto_parse_request(line, strlen(line), &id, &e);
    if (!back)
        broken("a server request the server refuses", e.message);
    char **argv = NULL;
    if (proto_get_argv(back, "argv", false, &argv, &e) < 0)
        broken("a server request with a bad argv", e.message);
    const char *cmd = json_string_value(json_object_get(back, "cmd"));
    const char *command = NULL;
    if (proto_get_string(back, "command", false, &command, &e) < 0)
        broken("a server request with a bad command", e.message);
    if (strcmp(cmd, "exec") == 0 && !argv && !command)
        broken("an exec with neither an argv nor a command", line);
    strv_free(argv);
    json_decref(back);
    json_decref(id);
    free(line);
    json_decref(req);
}

static void one_message(const char *line, size_t len)
{
    rpc_msg m;
    rpc_parse(line, len, &m);
    switch (m.kind) {
    case RPC_REQUEST:
        if (!m.method || !m.id)
            broken("a request without a method or an id", "");
        if (m.params && !json_is_object(m.params) && !json_is_array(m.params))
            broken("params that are neither an object nor an array", m.method);
        if (strcmp(m.method, "tools/call") == 0)
            tools_call(m.params);
        if (strcmp(m.method, "initialize") == 0) {
            char *group = mcp_client_group(
                json_string_value(json_object_get(json_object_get(m.params, "clientInfo"), "name")));
            if (!group || !group[0])
                broken("a client with no group name", "initialize");
            json_t *s = json_string(group);
            if (!s)
                broken("a client group name that is not UTF-8", group);
            json_decref(s);
            free(group);
        }
        must_encode(rpc_result(json_incref(m.id), json_object()), m.method);
        break;
    case RPC_NOTIFICATION:
        if (!m.method || m.id)
            broken("a notification without a method, or with an id", "");
        break;
    case RPC_RESPONSE:
        if (!m.id)
            broken("a response without an id", "");
        break;
    case RPC_BAD:
        if (!m.error_text[0] || strchr(m.error_text, '\n'))
            broken("a refusal whose text is empty or not one line", m.error_text);
        if (m.error_code != RPC_PARSE_ERROR && m.error_code != RPC_INVALID_REQUEST)
            broken("a refusal with an unexpected code", m.error_text);
        must_encode(rpc_error(m.id ? json_incref(m.id) : NULL, m.error_code, m.error_text), m.error_text);
        break;
    default:
        broken("a message of no kind", "");
    }
    rpc_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* The first byte: how the stream is cut into reads. */
    size_t chunk = (size_t)data[0] + 1;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    proto_reader r;
    proto_reader_init(&r, RPC_MAX_MESSAGE);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        proto_reader_feed(&r, in + off, n);
        const char *line;
        size_t l;
        int rc;
        while ((rc = proto_reader_next(&r, &line, &l)) != 0)
            if (rc > 0)
                one_message(line, l);
    }
    proto_reader_free(&r);
    return 0;
}
