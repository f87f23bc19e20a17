/*
 * cli_mcp.c - `corral mcp` (cli_verb.h): its options, read as every verb
 * reads its own, then the MCP server of src/mcp/ (mcp.h) run with them, or
 * the snippet that registers that same command with a client
 * (--print-config, mcp_config.h).
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "config/conf.h"
#include "mcp/mcp.h"
#include "mcp/mcp_config.h"
#include "policy/policy.h"
#include "protocol/remote.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPT_NET 0x100
#define OPT_APPROVAL 0x101
#define OPT_YIELD_CAP 0x102
#define OPT_PRINT_CONFIG 0x103
#define OPT_PROGRESS 0x104

/* What a client should allow one call, in seconds.  A call may wait for a
 * person's approval as long as [approvals] timeout lets it (a minute more
 * for the command's own yield after the answer), or, with no timeout, as
 * long as the person takes: a day.  A client that ends the call sooner
 * withdraws the request, and the person's answer comes to nothing. */
static unsigned client_timeout(uint32_t yield_cap_ms)
{
    conf_t conf;
    char err[1024];
    uint64_t approval_ms = 0;
    if (conf_load_user(&conf, err, sizeof err) < 0)
        fprintf(stderr, "corral mcp: %s (the timeout printed assumes [approvals] timeout = 0)\n", err);
    else
        approval_ms = conf.approval_timeout_ms;
    conf_free(&conf);
    uint64_t secs = approval_ms ? approval_ms / 1000u + 60u : 86400u;
    if (secs < yield_cap_ms / 1000u + 10u)
        secs = yield_cap_ms / 1000u + 10u;
    if (secs < 600)
        secs = 600;
    return secs > 30u * 86400u ? 30u * 86400u : (unsigned)secs;
}

/* --print-config: the bridge as the client will start it, with the options
 * given here (the workspace absolute). */
static int print_config(const char *client, const mcp_options *opt, bool dir_given, bool cap_given,
                        const char *progress)
{
    char *exe = realpath("/proc/self/exe", NULL);
    if (!exe) {
        fprintf(stderr, "corral mcp: cannot find corral's own path: %s\n", strerror(errno));
        return EXIT_ERR;
    }
    char cap[16];
    snprintf(cap, sizeof cap, "%u", opt->exec.yield_cap_ms / 1000u);
    char *args[20];
    size_t n = 0;
    if (cli_remote()) { /* the same host, named as it was resolved */
        args[n++] = "-H";
        args[n++] = remote_get()->spec;
    }
    args[n++] = "mcp";
    const char *flags[][2] = {{"--name", opt->name},
                              {"--profile", opt->exec.profile},
                              {"--net", opt->exec.net},
                              {"--approval-policy", opt->exec.approval_policy},
                              {"-C", dir_given ? opt->exec.workdir : NULL},
                              {"--yield-cap", cap_given ? cap : NULL},
                              {"--progress-interval", progress}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        if (!flags[i][1])
            continue;
        args[n++] = (char *)flags[i][0];
        args[n++] = (char *)flags[i][1];
    }
    args[n] = NULL;
    unsigned timeout = client_timeout(opt->exec.yield_cap_ms);
    char err[256];
    int rc = 0;
    if (mcp_print_config(stdout, client, exe, args, timeout, err, sizeof err) < 0) {
        fprintf(stderr, "corral mcp: %s\n", err);
        rc = EXIT_ERR;
    }
    free(exe);
    return rc;
}

static int verb_mcp(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'},          {"profile", required_argument, NULL, 'P'},
        {"net", required_argument, NULL, OPT_NET},       {"approval-policy", required_argument, NULL, OPT_APPROVAL},
        {"directory", required_argument, NULL, 'C'},     {"yield-cap", required_argument, NULL, OPT_YIELD_CAP},
        {"print-config", required_argument, NULL, OPT_PRINT_CONFIG}, {"help", no_argument, NULL, 'h'},
        {"progress-interval", required_argument, NULL, OPT_PROGRESS},
        {0}};
    mcp_options opt = {.exec.yield_cap_ms = MCP_DEFAULT_YIELD_CAP_MS, .progress_ms = MCP_PROGRESS_INTERVAL_MS};
    const char *progress_arg = NULL;
    const char *dir = NULL, *print_for = NULL;
    bool cap_given = false;
    int o;
    while ((o = getopt_long(argc, argv, "+n:P:C:h", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            if (!*optarg)
                return cli_usage_error(v, "--name wants a name");
            opt.name = optarg;
            break;
        case 'P':
            opt.exec.profile = optarg;
            break;
        case OPT_NET:
            if (strcmp(optarg, "off") && strcmp(optarg, "proxy") && strcmp(optarg, "full"))
                return cli_usage_error(v, "--net wants off, proxy or full, not '%s'", optarg);
            opt.exec.net = optarg;
            break;
        case OPT_APPROVAL: {
            approval_policy p;
            if (approval_policy_parse(optarg, &p) < 0)
                return cli_usage_error(v, "--approval-policy wants on-request, unless-trusted, never or granular, "
                                          "not '%s'", optarg);
            opt.exec.approval_policy = optarg;
            break;
        }
        case 'C':
            dir = optarg;
            break;
        case OPT_YIELD_CAP: {
            char *end;
            errno = 0;
            long secs = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || secs < (long)(MCP_MIN_YIELD_CAP_MS / 1000) || secs > 3600)
                return cli_usage_error(v, "--yield-cap wants seconds from %u to 3600, not '%s'",
                                       MCP_MIN_YIELD_CAP_MS / 1000, optarg);
            opt.exec.yield_cap_ms = (uint32_t)secs * 1000u;
            cap_given = true;
            break;
        }
        case OPT_PROGRESS: {
            char *end;
            errno = 0;
            long secs = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || secs < 1 || secs > 600)
                return cli_usage_error(v, "--progress-interval wants seconds from 1 to 600, not '%s'", optarg);
            opt.progress_ms = (uint32_t)secs * 1000u;
            progress_arg = optarg;
            break;
        }
        case OPT_PRINT_CONFIG:
            if (strcmp(optarg, "codex") && strcmp(optarg, "claude") && strcmp(optarg, "gemini") &&
                strcmp(optarg, "json"))
                return cli_usage_error(v, "--print-config wants codex, claude, gemini or json, not '%s'", optarg);
            print_for = optarg;
            break;
        case 'h':
            printf("usage: corral %s\n\n%s", v->usage, v->help);
            return 0;
        default:
            return cli_option_usage(v);
        }
    }
    if (optind < argc)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind]);
    if (cli_remote() && (!dir || dir[0] != '/')) {
        /* This machine's current directory means nothing there, and that
         * server's default (its home) is no workspace a sandbox writes. */
        fprintf(stderr, "corral mcp: under -H give -C DIR, the directory on that machine where its commands run "
                        "(an absolute path there)\n");
        return EXIT_USAGE;
    }
    char *workdir = cli_remote() ? xstrdup(dir) : dir ? realpath(dir, NULL) : getcwd(NULL, 0);
    if (!workdir) {
        fprintf(stderr, "corral mcp: cannot use directory '%s': %s\n", dir ? dir : ".", strerror(errno));
        return EXIT_ERR;
    }
    opt.exec.workdir = workdir;
    int rc = print_for ? print_config(print_for, &opt, dir != NULL, cap_given, progress_arg) : mcp_serve(&opt);
    free(workdir);
    return rc;
}

const cli_verb cli_verb_mcp = {
    .name = "mcp",
    .usage = "mcp [--name NAME] [--profile P] [--net MODE] [--approval-policy POLICY] [-C DIR] [--yield-cap SECONDS] "
             "[--progress-interval SECONDS] [--print-config codex|claude|gemini|json]",
    .help = "An MCP server on stdin and stdout for an agent (Codex CLI, Claude Code, any MCP\n"
            "client): its exec_command and write_stdin tools are the Codex CLI's, and every\n"
            "command they run is a sandboxed corral session, shown in the supervisor screen\n"
            "under the agent's name, its escalations approved there (or with corral approve).\n"
            "See docs/mcp.md.\n\n"
            "  -n, --name NAME       the name its sessions are grouped under (default: from\n"
            "                        the client: codex, claude, gemini, or the name it gives)\n"
            "  -P, --profile P       sandbox profile of its commands (default: the config's)\n"
            "      --net MODE        off, proxy or full (default: the profile's)\n"
            "      --approval-policy P  on-request, unless-trusted, never or granular\n"
            "  -C, --directory DIR   the workspace: where its commands may write, and where\n"
            "                        they run unless a call names another workdir (default:\n"
            "                        where the client starts it; under -H, required: a\n"
            "                        directory on that machine)\n"
            "      --yield-cap S     no call waits longer than S seconds for output (5..3600,\n"
            "                        default 50): keep it below the client's tool timeout\n"
            "      --progress-interval S  a call with a progress token that waits (for its\n"
            "                        command or for your approval) says so every S seconds\n"
            "                        (1..600, default 5)\n"
            "      --print-config codex|claude|gemini|json\n"
            "                        print what registers this command (with these options)\n"
            "                        with Codex CLI, Claude Code, Gemini CLI (settings.json)\n"
            "                        or a generic mcpServers JSON\n"
            "\nSIGTERM or the end of stdin ends it; the commands it started keep running\n"
            "in the corral server (corral ls) until they end, are pruned or killed.\n",
    .run = verb_mcp,
    .where = CLI_REMOTE,
};
