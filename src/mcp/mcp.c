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

int mcp_serve(const mcp_options *opt)
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
