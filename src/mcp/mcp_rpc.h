/*
 * mcp_rpc.h - JSON-RPC 2.0 framing for the MCP stdio transport: one JSON
 * message per line on stdin and stdout.  This module reads lines, sorts
 * each message into a request, a notification or a response (or says
 * precisely what is wrong with it), and writes results, errors and
 * notifications.  It knows nothing of MCP's methods (mcp_state.h).
 *
 * Included only in src/mcp/.
 */
#ifndef CORRAL_MCP_RPC_H
#define CORRAL_MCP_RPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
/* MCP's: a request names a protocol revision the server does not serve
 * (data: {"supported": [...], "requested": ...}). */
#define RPC_UNSUPPORTED_VERSION -32022

/* The largest message read from the client.  MCP sets no limit; a longer
 * line is skipped up to its newline and answered with -32600. */
#define RPC_MAX_MESSAGE (64u * 1024u * 1024u)

typedef enum rpc_kind {
    RPC_REQUEST,      /* method and id */
    RPC_NOTIFICATION, /* method, no id */
    RPC_RESPONSE,     /* result or error with an id: a reply to us */
    RPC_BAD,          /* answer with error_code/error_text (id when one was read) */
} rpc_kind;

typedef struct rpc_msg {
    rpc_kind kind;
    json_t *root;       /* the parsed message (owned; NULL if it did not parse) */
    json_t *id;         /* borrowed from root, or NULL */
    const char *method; /* borrowed from root */
    json_t *params;     /* borrowed; NULL when absent */
    int error_code;     /* RPC_BAD */
    char error_text[256];
} rpc_msg;

/* Sort one line (without its newline) into m.  Always fills m; free it
 * with rpc_msg_free. */
void rpc_parse(const char *line, size_t len, rpc_msg *m);
void rpc_msg_free(rpc_msg *m);

/* Messages to send (each steals what it is given; id may be NULL for
 * null).  The result must be an object. */
json_t *rpc_result(json_t *id, json_t *result);
json_t *rpc_error(json_t *id, int code, const char *message);
json_t *rpc_notification(const char *method, json_t *params);

/* Write msg as one line to fd (stolen).  0, or -errno when the client is
 * gone. */
int rpc_send(int fd, json_t *msg);

#endif
