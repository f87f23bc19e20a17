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

/* corral mcp ARGS (argv[0] is "mcp"); usage and help as the CLI prints
 * them.  Returns the exit status. */
int mcp_main(int argc, char **argv, const char *usage, const char *help);

#endif
