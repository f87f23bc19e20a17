/*
 * mcp_state.h - the MCP protocol state machine of `corral mcp`: initialize
 * (version negotiation, the client's name), ping, tools/list, tools/call
 * (through mcp_bridge.h), notifications/cancelled, and the progress a
 * waiting call reports (while a human decides, or its command runs).  It reads one client message
 * at a time and writes its answers to the output descriptor; the event
 * loop around it lives in mcp.c.
 *
 * Included only in src/mcp/.
 */
#ifndef CORRAL_MCP_STATE_H
#define CORRAL_MCP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/list.h"
#include "mcp/mcp_bridge.h"
#include "mcp/mcp_tools.h"

/* Protocol versions spoken after initialize, oldest first; an unknown one
 * is answered with the newest. */
#define MCP_VERSION_OLD "2025-06-18"
#define MCP_VERSION_NEW "2025-11-25"
/* The stateless revision: no initialize, server/discover, each request's
 * revision in its _meta. */
#define MCP_VERSION_STATELESS "2026-07-28"

/* A call that has waited this long (for its command or for a human)
 * reports progress, and again as often, when the client gave it a
 * progressToken: a client that ends quiet calls (Claude Code's idle
 * timeout) keeps waiting.  --progress-interval changes it. */
#define MCP_PROGRESS_INTERVAL_MS 5000u

/* After initialize, the server is connected once tools/list is answered,
 * or after this long without one (a client that lists no tools), or at
 * the first call. */
#define MCP_CONNECT_GRACE_MS 250u

typedef struct mcp_options {
    const char *name;        /* --name: the client name; NULL: from clientInfo */
    mcp_exec_defaults exec;  /* workdir, profile, net, approval policy, yield cap */
    uint32_t progress_ms;    /* how often a waiting call reports progress */
} mcp_options;

typedef struct mcp_state {
    mcp_options opt;
    int out_fd;
    bool out_broken;    /* the client stopped reading: time to go */
    bool initialized;   /* notifications/initialized came */
    bool connected_once; /* the first connection to the server was tried */
    uint64_t connect_at; /* when to try it (ms, now_ms), 0: not yet due */
    char *version;      /* negotiated, or NULL before initialize */
    char *client;       /* the name sessions are grouped under */
    mcp_bridge bridge;
    link_t calls;       /* mcp_call: tools/call requests still waiting */
} mcp_state;

void mcp_state_init(mcp_state *s, const mcp_options *opt, int out_fd);
/* One message (a line without its newline) from the client. */
void mcp_state_message(mcp_state *s, const char *line, size_t len);
/* A message longer than RPC_MAX_MESSAGE was skipped. */
void mcp_state_too_large(mcp_state *s);
/* Milliseconds until mcp_state_tick has work, or -1 for none. */
int mcp_state_timeout(mcp_state *s);
void mcp_state_tick(mcp_state *s);
/* Every waiting call is dropped (the server keeps their processes) and the
 * connections closed. */
void mcp_state_free(mcp_state *s);

/* The name sessions of a client called client_name are grouped under:
 * codex-mcp-client is "codex", claude-code is "claude",
 * gemini-cli-mcp-client is "gemini", others keep theirs.  Caller frees. */
char *mcp_client_group(const char *client_name);

#endif
