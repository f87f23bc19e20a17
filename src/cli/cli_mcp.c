/*
 * cli_mcp.c - `corral mcp`'s entry (cli_verb.h), which cli.c lists: its
 * usage and help text.  The MCP server itself, options included, is
 * src/mcp/ (mcp.h), which may not include src/cli/: it is handed the
 * entry's texts and prints its usage errors itself.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "mcp/mcp.h"

static int verb_mcp(const cli_verb *v, int argc, char **argv)
{
    return mcp_main(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_mcp = {
    .name = "mcp",
    .usage = "mcp [--name NAME] [--profile P] [--net MODE] [--approval-policy POLICY] [-C DIR] [--yield-cap SECONDS] "
             "[--print-config codex|claude|json]",
    .help = "An MCP server on stdin and stdout for an agent (Codex CLI, Claude Code, any MCP\n"
            "client): its exec_command and write_stdin tools are the Codex CLI's, and every\n"
            "command they run is a sandboxed corral session, shown in the supervisor screen\n"
            "under the agent's name, its escalations approved there (or with corral approve).\n"
            "See docs/mcp.md.\n\n"
            "  -n, --name NAME       the name its sessions are grouped under (default: from\n"
            "                        the client: codex, claude, or the name it gives)\n"
            "  -P, --profile P       sandbox profile of its commands (default: the config's)\n"
            "      --net MODE        off, proxy or full (default: the profile's)\n"
            "      --approval-policy P  on-request, unless-trusted, never or granular\n"
            "  -C, --directory DIR   the workspace: where its commands may write, and where\n"
            "                        they run unless a call names another workdir (default:\n"
            "                        where the client starts it)\n"
            "      --yield-cap S     no call waits longer than S seconds for output (5..3600,\n"
            "                        default 50): keep it below the client's tool timeout\n"
            "      --print-config codex|claude|json\n"
            "                        print what registers this command (with these options)\n"
            "                        with Codex CLI, Claude Code or a generic mcpServers JSON\n"
            "\nSIGTERM or the end of stdin ends it; the commands it started keep running\n"
            "in the corral server (corral ls) until they end, are pruned or killed.\n",
    .run = verb_mcp,
};
