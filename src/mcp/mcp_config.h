/*
 * mcp_config.h - `corral mcp --print-config`: the snippet that registers
 * corral as an MCP server with a client (Codex CLI's config.toml, Claude
 * Code's `claude mcp add`, Gemini CLI's settings.json, or a generic
 * mcpServers JSON), absolute paths
 * and the environment that finds the user's corral server filled in.
 *
 * Included by src/mcp/ and src/cli/ (corral mcp --print-config).
 */
#ifndef CORRAL_MCP_CONFIG_H
#define CORRAL_MCP_CONFIG_H

#include <stdint.h>
#include <stdio.h>

/* The environment variables that decide which corral server and config a
 * bridge uses; a client that filters its MCP servers' environment (Codex
 * does) is told to pass them on. */
extern const char *const mcp_config_env_names[];

/* Print the snippet for client ("codex", "claude", "gemini" or "json") to
 * f: exe (absolute) run with mcp_args (NULL-terminated, starting with
 * "mcp").  tool_timeout_s: what the client should allow a call (Claude
 * Code's own default is longer, and is left alone unless it is not).  0, or -1 with err
 * (an unknown client, a value a config file cannot hold). */
int mcp_print_config(FILE *f, const char *client, const char *exe, char *const *mcp_args,
                     unsigned tool_timeout_s, char *err, size_t errlen);

#endif
