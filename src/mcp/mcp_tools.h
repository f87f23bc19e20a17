/*
 * mcp_tools.h - the two tools `corral mcp` offers, exactly as the Codex CLI
 * defines them (exec_command and write_stdin: input schemas, descriptions,
 * defaults, the output schema, with corral's notices added), and the
 * translation between a tools/call and the corral server's own exec /
 * write_stdin requests and replies (docs/mcp.md, docs/protocol.md).  Pure
 * functions: no I/O.
 *
 * Included only in src/mcp/.
 */
#ifndef CORRAL_MCP_TOOLS_H
#define CORRAL_MCP_TOOLS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The default cap on any wait of a call, below an MCP client's usual tool
 * timeout (Codex: 60 s), so a call answers before the client gives up. */
#define MCP_DEFAULT_YIELD_CAP_MS 50000u
/* An empty poll waits at least this long (Codex's floor), so a cap below
 * it could not be kept. */
#define MCP_MIN_YIELD_CAP_MS 5000u

/* The result of tools/list: {"tools": [...]}. */
json_t *mcp_tools_list(void);

/* What every exec of this bridge carries unless the call says otherwise. */
typedef struct mcp_exec_defaults {
    const char *workdir;         /* absolute: the default, and the base of relative ones */
    const char *profile;         /* NULL: the server's */
    const char *net;             /* NULL: the profile's */
    const char *approval_policy; /* NULL: the server's */
    uint32_t yield_cap_ms;
} mcp_exec_defaults;

typedef enum mcp_tool_status {
    MCP_TOOL_OK,
    MCP_TOOL_UNKNOWN,  /* no such tool: a JSON-RPC error (-32602) */
    MCP_TOOL_BAD_ARGS, /* the arguments are wrong: a tool error the model reads */
} mcp_tool_status;

/* The corral request (without an id) for a call of tool name with
 * arguments args (an object, or NULL for none), into *req.  On
 * MCP_TOOL_BAD_ARGS or MCP_TOOL_UNKNOWN, err says what is wrong. */
mcp_tool_status mcp_tool_request(const char *name, json_t *args, const mcp_exec_defaults *d, json_t **req,
                                 char *err, size_t errlen);

/* The CallToolResult for the server's reply to req (the request made by
 * mcp_tool_request): the envelope in content and the same facts in
 * structuredContent, or isError with what went wrong.  warnings: texts
 * the server sent on the way; waits: the bridge's notes on waits for the
 * user (arrays of strings, or NULL).  Both are added as more content, and
 * every notice (those, the sandbox's advice, the user's answer, a
 * truncation) is also in structuredContent.notices. */
json_t *mcp_tool_result(json_t *req, json_t *reply, json_t *warnings, json_t *waits);

/* A CallToolResult with isError set and text as its content. */
json_t *mcp_tool_error(const char *text);

#endif
