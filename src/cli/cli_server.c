/*
 * cli_server.c - the verbs about the server itself: `corral server` starts
 * one in the background or in this process, or stops the running one;
 * `corral version` says corral's version and the running server's.  Each
 * verb is one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "base/paths.h"
#include "config/conf.h"
#include "protocol/proto.h"
#include "server/server.h"
#include "cli/server_modules.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- server ------------------------------------------------------------------ */

/* How many of the server's sessions are running (-1: it could not say). */
static int running_sessions(client_t *c)
{
    json_t *r = cli_call(c, json_pack("{s:s}", "cmd", "ls"));
    if (!r)
        return -1;
    int n = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(r, "sessions"), i, s) {
        const char *state = json_string_value(json_object_get(s, "state"));
        n += state && strcmp(state, "running") == 0;
    }
    json_decref(r);
    return n;
}

/* On a terminal, with sessions running: ask first (they end with the
 * server).  True to go on. */
static bool confirm_stop(long long pid, int running)
{
    fprintf(stderr, "Stop the corral server (pid %lld)? %d running session%s end%s with it: %s programs are "
            "killed. [y/N] ", pid, running, running == 1 ? "" : "s", running == 1 ? "s" : "",
            running == 1 ? "its" : "their");
    fflush(stderr);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        return false;
    return line[0] == 'y' || line[0] == 'Y';
}

static int verb_server(const cli_verb *v, int argc, char **argv)
{
    bool foreground = false, stop = false, yes = false;
    int ready_fd = -1;
    static const struct option opts[] = {
        {"foreground", no_argument, NULL, 'f'}, {"stop", no_argument, NULL, 's'},
        {"yes", no_argument, NULL, 'y'}, {"ready-fd", required_argument, NULL, 'r'}, HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, "fsyh", opts, NULL)) != -1) {
        long fd;
        switch (o) {
        case 'f': foreground = true; break;
        case 's': stop = true; break;
        case 'y': yes = true; break;
        case 'r':
            if (cli_parse_int(optarg, 0, 1 << 20, &fd) < 0)
                return cli_usage_error(v, "--ready-fd needs a file descriptor number");
            ready_fd = (int)fd;
            break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    if (optind < argc)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind]);
    if (yes && !stop)
        return cli_usage_error(v, "--yes goes with --stop");
    if (stop) {
        client_t c;
        if (cli_connect(&c, false) < 0)
            return EXIT_ERR;
        int running = running_sessions(&c); /* first: the connection's hello comes with it */
        long long spid = json_integer_value(json_object_get(c.hello, "pid"));
        if (running > 0 && !yes && isatty(STDIN_FILENO) && isatty(STDERR_FILENO) && !confirm_stop(spid, running)) {
            client_close(&c);
            fprintf(stderr, "corral: the server keeps running (corral server --stop --yes stops it without asking)\n");
            return EXIT_ERR;
        }
        /* The server holds an exclusive lock on its lock file until its
         * process ends: taking the lock after the shutdown request is how
         * we know it is gone. */
        char err[1024];
        char *sock = paths_socket(err, sizeof err);
        char *lock = sock ? xasprintf("%.*s.lock", (int)strlen(sock) - 5, sock) : NULL;
        int lockfd = lock ? open(lock, O_RDONLY | O_CLOEXEC) : -1;
        free(sock);
        free(lock);
        /* The lock goes when the server closes its files, a moment before
         * its process has ended: "stopped" waits for that too (the pidfd
         * turns readable then).  -1 where pidfds are missing. */
#ifdef SYS_pidfd_open
        int pidfd = spid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)spid, 0) : -1;
#else
        int pidfd = -1;
#endif
        json_t *r = cli_call(&c, json_pack("{s:s}", "cmd", "shutdown"));
        if (!r) {
            client_close(&c);
            if (lockfd >= 0)
                close(lockfd);
            if (pidfd >= 0)
                close(pidfd);
            return EXIT_ERR;
        }
        if (lockfd >= 0) {
            alarm(30); /* a server that does not end: give up with SIGALRM */
            flock(lockfd, LOCK_EX);
            if (pidfd >= 0) {
                struct pollfd pf = {.fd = pidfd, .events = POLLIN};
                while (poll(&pf, 1, -1) < 0 && errno == EINTR)
                    ;
            }
            alarm(0);
            close(lockfd);
        }
        if (pidfd >= 0)
            close(pidfd);
        if (running >= 0)
            printf("corral: server (pid %lld) stopped; %d running session%s ended\n",
                   (long long)json_integer_value(json_object_get(r, "pid")), running, running == 1 ? "" : "s");
        else
            printf("corral: server (pid %lld) stopped\n", (long long)json_integer_value(json_object_get(r, "pid")));
        json_decref(r);
        client_close(&c);
        return 0;
    }
    if (foreground)
        return server_run(ready_fd, corral_server_modules);
    char err[1024];
    int pid = 0;
    char *sock = paths_socket(err, sizeof err);
    if (!sock)
        return cli_fail("%s", err);
    /* An explicit start reports a running server instead of joining it. */
    client_t probe;
    if (client_connect(&probe, cli_client_name(), false, err, sizeof err) == 0) {
        long long spid = json_integer_value(json_object_get(probe.hello, "pid"));
        client_close(&probe);
        cli_fail("a server is already running on %s (pid %lld)", sock, spid);
        free(sock);
        return EXIT_ERR;
    }
    if (client_spawn_server(err, sizeof err, &pid) < 0) {
        free(sock);
        return cli_fail("%s", err);
    }
    printf("corral: server started (pid %d), socket %s\n", pid, sock);
    free(sock);
    return 0;
}

const cli_verb cli_verb_server = {
    .name = "server",
    .usage = "server [--foreground] [--stop [--yes]]",
    .help = "Start the corral server in the background (every other verb also starts it\n"
            "when none answers).  One server runs per socket: a second start says which\n"
            "pid serves.\n\n"
            "  -f, --foreground  run in this process, logging to stderr\n"
            "  -s, --stop        stop the running server: every session's process tree is\n"
            "                    killed, logs and recordings are flushed, the socket removed;\n"
            "                    says how many running sessions ended, and asks first on a\n"
            "                    terminal when some are running\n"
            "  -y, --yes         with --stop: do not ask\n",
    .run = verb_server,
    .where = CLI_LOCAL,
};

/* corral reload: the server reads its config file again (as on SIGHUP).
 * Every error of the file is printed; the server takes the file only when
 * none is in a section it reads, else it keeps what it runs with. */
static int verb_reload(const cli_verb *v, int argc, char **argv)
{
    int rc = cli_only_help(v, argc, argv);
    if (rc >= 0)
        return rc;
    if (optind < argc)
        return cli_usage_error(v, "takes no arguments");
    client_t c;
    char err[1024];
    if (client_connect(&c, cli_client_name(), false, err, sizeof err) < 0) {
        /* Nothing to reload; the file is still worth checking. */
        conf_t conf;
        conf_errors e = {0};
        conf_load_user_all(&conf, &e, NULL);
        for (size_t i = 0; i < e.n; i++)
            fprintf(stderr, "corral: %s\n", e.text[i]);
        char *path = conf_user_path();
        fprintf(stderr, "corral: no server is running; the next one reads %s%s\n", path,
                e.n ? " (once the errors above are fixed)" : "");
        free(path);
        rc = e.n ? EXIT_ERR : 0;
        conf_errors_free(&e);
        conf_free(&conf);
        return rc;
    }
    json_t *r = cli_call(&c, json_pack("{s:s}", "cmd", "reload"));
    client_close(&c);
    if (!r)
        return EXIT_ERR;
    json_t *errors = json_object_get(r, "errors");
    const char *path = json_string_value(json_object_get(r, "path"));
    for (size_t i = 0; i < json_array_size(errors); i++)
        fprintf(stderr, "corral: %s\n", json_string_value(json_array_get(errors, i)));
    rc = json_array_size(errors) ? EXIT_ERR : 0;
    if (!json_is_true(json_object_get(r, "applied"))) {
        fprintf(stderr, "corral: the server keeps the settings it runs with: fix the errors above and run "
                        "corral reload again\n");
        json_decref(r);
        return EXIT_ERR;
    }
    if (json_array_size(errors))
        fprintf(stderr, "corral: the lines with errors were left out (only the screen reads them)\n");
    printf("corral: the server reloaded %s\n", path ? path : "its config file");
    json_t *later = json_object_get(r, "restart_needed");
    if (json_array_size(later)) {
        buf_t b;
        buf_init(&b);
        for (size_t i = 0; i < json_array_size(later); i++)
            buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(json_array_get(later, i)));
        printf("corral: changes to %s take effect when the server starts again (corral server --stop, then "
               "corral)\n", b.data);
        buf_free(&b);
    }
    json_decref(r);
    return rc;
}

const cli_verb cli_verb_reload = {
    .name = "reload",
    .usage = "reload",
    .help = "Make the running server read its config file again (as SIGHUP to it does).\n"
            "Every error of the file is listed.  The server takes the file when no error\n"
            "is in a section it reads, else it keeps the settings it runs with; errors in\n"
            "[ui] and [keys] are the screen's, whose own reload key (R) reads them.\n"
            "[snapshots] and [network] max-connections wait for a server restart.\n",
    .run = verb_reload,
};

static int verb_version(const cli_verb *v, int argc, char **argv)
{
    int rc = cli_only_help(v, argc, argv);
    if (rc >= 0)
        return rc;
    printf("%s (protocol %d)\n", PACKAGE_STRING, PROTO_VERSION);
    client_t c;
    char err[1024];
    if (client_connect(&c, cli_client_name(), false, err, sizeof err) == 0) {
        printf("server: %s, pid %lld\n", json_string_value(json_object_get(c.hello, "server")),
               (long long)json_integer_value(json_object_get(c.hello, "pid")));
        client_close(&c);
    } else {
        printf("server: not running\n");
    }
    return 0;
}

const cli_verb cli_verb_version = {
    .name = "version",
    .usage = "version",
    .help = "Print corral's version and the running server's.\n",
    .run = verb_version,
};

