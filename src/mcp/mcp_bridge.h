/*
 * mcp_bridge.h - `corral mcp`'s side of the admin socket: a small pool of
 * connections to the corral server, each carrying at most one tool call at
 * a time, so that calls run concurrently and each can be cancelled alone.
 * Cancelling a call closes its connection: the server then ends the wait
 * (the process keeps running in the store) or withdraws a question still
 * waiting for a human.  Sequential calls always use the first connection,
 * which keeps the server's "approved for this session" answers.
 *
 * Single-threaded: the caller polls the connections' descriptors and calls
 * mcp_bridge_readable; replies and events come back through the ops.
 *
 * Included only in src/mcp/.
 */
#ifndef CORRAL_MCP_BRIDGE_H
#define CORRAL_MCP_BRIDGE_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/client.h"

/* Calls waiting at once, at most. */
#define MCP_MAX_LINKS 32

typedef struct mcp_bridge_ops {
    /* An event the server sent about the call (approval_pending, warning). */
    void (*event)(void *user, void *call, json_t *event);
    /* The server's reply to the call (stolen), or NULL and err when the
     * connection failed first. */
    void (*reply)(void *user, void *call, json_t *reply, const char *err);
    /* The reply to a request made with mcp_bridge_ask (stolen). */
    void (*answer)(void *user, void *call, json_t *reply);
} mcp_bridge_ops;

typedef struct mcp_link {
    client_t cl;
    bool up;
    void *call;   /* the call it carries, or NULL: idle */
    long call_id; /* its request id on this connection */
    long ask_id;  /* an extra request's id, 0 when none */
} mcp_link;

typedef struct mcp_bridge {
    const mcp_bridge_ops *ops;
    void *user;
    char *client_name; /* who the server records as creating the sessions */
    mcp_link links[MCP_MAX_LINKS];
    int server_pid;    /* from the last hello, 0 before */
} mcp_bridge;

void mcp_bridge_init(mcp_bridge *b, const mcp_bridge_ops *ops, void *user);
/* The client name for connections made from now on. */
void mcp_bridge_set_name(mcp_bridge *b, const char *name);
/* Make sure the first connection is up (a server is started when none
 * answers).  0, or -1 with err. */
int mcp_bridge_connect(mcp_bridge *b, char *err, size_t errlen);
/* Send req (stolen) for call on an idle connection; the reply comes
 * through ops->reply.  The link's index, or -1 with err. */
int mcp_bridge_call(mcp_bridge *b, json_t *req, void *call, char *err, size_t errlen);
/* One more request (stolen) on the link of a waiting call; its reply comes
 * through ops->answer.  0, or -1 when one is outstanding or the link is
 * down. */
int mcp_bridge_ask(mcp_bridge *b, int link, json_t *req);
/* End the link's call at once: the connection is closed. */
void mcp_bridge_cancel(mcp_bridge *b, int link);

/* The descriptors to poll: fills fds (POLLIN) and link_of (the link of
 * each); returns how many. */
size_t mcp_bridge_pollfds(mcp_bridge *b, struct pollfd *fds, int *link_of, size_t max);
/* The link's descriptor is readable (or hung up): read and deliver. */
void mcp_bridge_readable(mcp_bridge *b, int link);
/* Close every connection (waiting calls get no reply). */
void mcp_bridge_close(mcp_bridge *b);

#endif
