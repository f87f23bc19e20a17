/*
 * mcp.c - `corral mcp`: options, --print-config, and the one poll loop
 * over stdin, the corral server's connections and a signal pipe.  No
 * threads: a call waiting on the server costs a descriptor, not a thread.
 *
 * Shutdown: SIGTERM (Codex sends it before it closes stdin), SIGINT,
 * SIGHUP or stdin closing end the bridge at once and cleanly, exit 0.
 * Calls still waiting get no reply; the commands they started keep
 * running in the corral server, as Codex's own do, until pruned or killed.
 */
#include "config.h"

#include "mcp/mcp.h"
#include "base/exitcode.h"
#include "mcp/mcp_config.h"
#include "mcp/mcp_rpc.h"
#include "mcp/mcp_state.h"
#include "policy/policy.h"
#include "protocol/proto.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A signal that ends the bridge: its number, and a byte in the pipe that
 * wakes poll. */
static volatile sig_atomic_t stop_signal;
static int signal_pipe[2] = {-1, -1};

static void on_stop_signal(int sig)
{
    int saved = errno;
    stop_signal = sig;
    if (signal_pipe[1] >= 0 && write(signal_pipe[1], "", 1) < 0) {
        /* full: poll wakes for the bytes already there */
    }
    errno = saved;
}

/* Handlers, not a blocked mask with signalfd: a corral server this bridge
 * starts inherits the mask, and must still hear its own SIGTERM. */
static int install_signals(char *err, size_t errlen)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    const int stops[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++)
        sigaction(stops[i], &sa, NULL);
    /* The client closing its end shows as a write error, not a death. */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static const char *signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* Complete lines in rd go to the state machine. */
static void drain_lines(mcp_state *s, proto_reader *rd)
{
    for (;;) {
        const char *line;
        size_t len;
        int r = proto_reader_next(rd, &line, &len);
        if (r == 0 || s->out_broken)
            return;
        if (r < 0)
            mcp_state_too_large(s);
        else if (len > 0)
            mcp_state_message(s, line, len);
    }
}

static size_t count_calls(mcp_state *s)
{
    size_t n = 0;
    for (link_t *l = s->calls.next; l != &s->calls; l = l->next)
        n++;
    return n;
}

static int serve(const mcp_options *opt)
{
    char err[512];
    if (install_signals(err, sizeof err) < 0) {
        fprintf(stderr, "corral mcp: %s\n", err);
        return EXIT_ERR;
    }
    mcp_state s;
    mcp_state_init(&s, opt, STDOUT_FILENO);
    proto_reader rd;
    proto_reader_init(&rd, RPC_MAX_MESSAGE);
    const char *why = "stdin closed";
    struct pollfd fds[2 + MCP_MAX_LINKS];
    int link_of[MCP_MAX_LINKS];
    for (;;) {
        fds[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = signal_pipe[0], .events = POLLIN};
        size_t nlinks = mcp_bridge_pollfds(&s.bridge, fds + 2, link_of, MCP_MAX_LINKS);
        int timeout = mcp_state_timeout(&s);
        int n = poll(fds, 2 + nlinks, timeout);
        if (n < 0 && errno != EINTR) {
            snprintf(err, sizeof err, "poll: %s", strerror(errno));
            why = err;
            break;
        }
        if (stop_signal) {
            why = signal_name(stop_signal);
            break;
        }
        if (n <= 0) {
            mcp_state_tick(&s);
            continue;
        }
        /* The server's messages first: handling the client's may close a
         * link and open another on the same descriptor number. */
        for (size_t i = 0; i < nlinks; i++)
            if (fds[2 + i].revents)
                mcp_bridge_readable(&s.bridge, link_of[i]);
        if (fds[0].revents) {
            char buf[65536];
            ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got <= 0) {
                if (got < 0) {
                    snprintf(err, sizeof err, "reading stdin: %s", strerror(errno));
                    why = err;
                }
                /* A last message without its newline still counts. */
                if (proto_reader_pending(&rd))
                    proto_reader_feed(&rd, "\n", 1);
                drain_lines(&s, &rd);
                break;
            }
            proto_reader_feed(&rd, buf, (size_t)got);
            drain_lines(&s, &rd);
        }
        if (s.out_broken) {
            why = "the client stopped reading stdout";
            break;
        }
        mcp_state_tick(&s);
    }
    size_t waiting = count_calls(&s);
    if (waiting)
        fprintf(stderr, "corral mcp: %s: stopping; %zu call%s still waiting (what they started keeps running: "
                        "corral ls)\n",
                why, waiting, waiting == 1 ? " was" : "s were");
    mcp_state_free(&s);
    proto_reader_free(&rd);
    return 0;
}

/* ---- options ------------------------------------------------------------------ */

static int usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral mcp: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nusage: corral %s\nTry 'corral mcp --help'.\n", usage);
    va_end(ap);
    return EXIT_USAGE;
}

#define OPT_NET 0x100
#define OPT_APPROVAL 0x101
#define OPT_YIELD_CAP 0x102
#define OPT_PRINT_CONFIG 0x103

int mcp_main(int argc, char **argv, const char *usage, const char *help)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'},          {"profile", required_argument, NULL, 'P'},
        {"net", required_argument, NULL, OPT_NET},       {"approval-policy", required_argument, NULL, OPT_APPROVAL},
        {"directory", required_argument, NULL, 'C'},     {"yield-cap", required_argument, NULL, OPT_YIELD_CAP},
        {"print-config", required_argument, NULL, OPT_PRINT_CONFIG}, {"help", no_argument, NULL, 'h'},
        {0}};
    mcp_options opt = {.exec.yield_cap_ms = MCP_DEFAULT_YIELD_CAP_MS};
    const char *dir = NULL, *print_for = NULL;
    bool cap_given = false;
    int o;
    while ((o = getopt_long(argc, argv, "+n:P:C:h", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            if (!*optarg)
                return usage_error(usage, "--name wants a name");
            opt.name = optarg;
            break;
        case 'P':
            opt.exec.profile = optarg;
            break;
        case OPT_NET:
            if (strcmp(optarg, "off") && strcmp(optarg, "proxy") && strcmp(optarg, "full"))
                return usage_error(usage, "--net wants off, proxy or full, not '%s'", optarg);
            opt.exec.net = optarg;
            break;
        case OPT_APPROVAL: {
            approval_policy p;
            if (approval_policy_parse(optarg, &p) < 0)
                return usage_error(usage, "--approval-policy wants on-request, unless-trusted, never or granular, "
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
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < (long)(MCP_MIN_YIELD_CAP_MS / 1000) || v > 3600)
                return usage_error(usage, "--yield-cap wants seconds from %u to 3600, not '%s'",
                                   MCP_MIN_YIELD_CAP_MS / 1000, optarg);
            opt.exec.yield_cap_ms = (uint32_t)v * 1000u;
            cap_given = true;
            break;
        }
        case OPT_PRINT_CONFIG:
            if (strcmp(optarg, "codex") && strcmp(optarg, "claude") && strcmp(optarg, "json"))
                return usage_error(usage, "--print-config wants codex, claude or json, not '%s'", optarg);
            print_for = optarg;
            break;
        case 'h':
            printf("usage: corral %s\n\n%s", usage, help);
            return 0;
        default:
            return usage_error(usage, "unknown option");
        }
    }
    if (optind < argc)
        return usage_error(usage, "unexpected argument '%s'", argv[optind]);
    char *workdir = dir ? realpath(dir, NULL) : getcwd(NULL, 0);
    if (!workdir) {
        fprintf(stderr, "corral mcp: cannot use directory '%s': %s\n", dir ? dir : ".", strerror(errno));
        return EXIT_ERR;
    }
    opt.exec.workdir = workdir;
    int rc;
    if (print_for) {
        /* The same bridge, as the client will start it. */
        char *exe = realpath("/proc/self/exe", NULL);
        char cap[16];
        snprintf(cap, sizeof cap, "%u", opt.exec.yield_cap_ms / 1000u);
        char *args[16];
        size_t n = 0;
        args[n++] = "mcp";
        const char *flags[][2] = {{"--name", opt.name},
                                  {"--profile", opt.exec.profile},
                                  {"--net", opt.exec.net},
                                  {"--approval-policy", opt.exec.approval_policy},
                                  {"-C", dir ? workdir : NULL},
                                  {"--yield-cap", cap_given ? cap : NULL}};
        for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
            if (!flags[i][1])
                continue;
            args[n++] = (char *)flags[i][0];
            args[n++] = (char *)flags[i][1];
        }
        args[n] = NULL;
        /* A person may be answering an approval while the call waits: give
         * it ten minutes, and never less than the longest wait. */
        unsigned timeout = opt.exec.yield_cap_ms / 1000u + 10u;
        if (timeout < 600)
            timeout = 600;
        char err[256];
        rc = 0;
        if (!exe) {
            fprintf(stderr, "corral mcp: cannot find corral's own path: %s\n", strerror(errno));
            rc = EXIT_ERR;
        } else if (mcp_print_config(stdout, print_for, exe, args, timeout, err, sizeof err) < 0) {
            fprintf(stderr, "corral mcp: %s\n", err);
            rc = EXIT_ERR;
        }
        free(exe);
    } else {
        rc = serve(&opt);
    }
    free(workdir);
    return rc;
}
