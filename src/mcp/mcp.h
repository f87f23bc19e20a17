/*
 * mcp.h - `corral mcp`: an MCP server on stdin and stdout (docs/mcp.md)
 * that gives any MCP client (Codex CLI, Claude Code, an IDE's agent) the
 * Codex CLI's exec_command and write_stdin tools, each call one more
 * request to the corral server, so every command an agent runs is a
 * sandboxed corral session the user watches and approves.
 *
 * Included by src/mcp/ and src/cli/.
 */
#ifndef CORRAL_MCP_H
#define CORRAL_MCP_H

#include "mcp/mcp_state.h"

/* Serve the MCP client on stdin and stdout with opt (the CLI's options,
 * src/cli/cli_mcp.c) until the client goes or SIGTERM.  Returns the exit
 * status. */
int mcp_serve(const mcp_options *opt);

#endif
