/*
 * cli_host.c - corral -H HOST and CORRAL_HOST (docs/corral.1): the global
 * option, the host it names ([hosts] in the config, or ssh://...), what
 * each verb does there (refused, with the reason, unless it only asks the
 * server), and corral serve-stdio, the other end: standard input and
 * output relayed to this machine's server.  The connection itself is made
 * where every connection is (protocol/client.c, protocol/remote.c).
 */
#include "config.h"

#include "cli/cli_records.h"
#include "cli/cli_verb.h"

#include "base/exitcode.h"
#include "base/quote.h"
#include "base/util.h"
#include "config/conf.h"
#include "protocol/client.h"
#include "protocol/remote.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the global option ---------------------------------------------------------- */

int cli_host_options(int argc, char **argv, int *skip, const char **host)
{
    *skip = 0;
    *host = NULL;
    int i = 1;
    while (i < argc) {
        const char *a = argv[i];
        const char *val = NULL;
        int used = 1;
        if (strcmp(a, "-H") == 0 || strcmp(a, "--host") == 0) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, "corral: %s wants a host: ssh://[user@]host[:port] or a name of [hosts] in the "
                                "config\n", a);
                return EXIT_USAGE;
            }
            val = argv[i + 1];
            used = 2;
        } else if (strncmp(a, "--host=", 7) == 0) {
            val = a + 7;
        } else if (strncmp(a, "-H", 2) == 0 && a[2]) {
            val = a + 2;
        } else {
            break;
        }
        if (!*val) {
            fprintf(stderr, "corral: --host wants a host: ssh://[user@]host[:port] or a name of [hosts]\n");
            return EXIT_USAGE;
        }
        *host = val; /* the last one given */
        i += used;
    }
    *skip = i - 1;
    return -1;
}

/* ---- resolving it --------------------------------------------------------------- */

/* Point this process's connections at spec (a URL or a [hosts] name).  0,
 * or an exit status after saying why not. */
static int use_host(const char *spec, const char *from)
{
    conf_t conf;
    if (cli_load_conf(&conf, "-H", conf_client_sections) < 0) {
        conf_free(&conf);
        return EXIT_ERR;
    }
    const char *url = spec;
    if (strncmp(spec, "ssh://", 6) != 0) {
        url = conf_host_url(&conf, spec);
        if (!url) {
            char *shown = quote_text_visible(spec, strlen(spec));
            char *path = conf_user_path();
            char *where = quote_text_visible(path, strlen(path));
            fprintf(stderr, "corral: %s '%s' is neither ssh://[user@]host[:port] nor a name in [hosts] of %s\n",
                    from, shown, where);
            free(where);
            free(path);
            free(shown);
            conf_free(&conf);
            return EXIT_USAGE;
        }
    }
    remote_host *h = xcalloc(1, sizeof *h);
    char err[512];
    if (remote_parse(url, h, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s: %s\n", from, err);
        free(h);
        conf_free(&conf);
        return EXIT_USAGE;
    }
    const char *ssh = getenv("CORRAL_SSH_COMMAND");
    if (!ssh || !*ssh)
        ssh = conf.hosts_ssh_command;
    h->ssh_command = ssh ? xstrdup(ssh) : NULL;
    h->remote_command = conf.hosts_remote_command ? xstrdup(conf.hosts_remote_command) : NULL;
    conf_free(&conf);
    remote_set(h);
    return 0;
}

/* The host corral -H HOST adds to the supervisor screen for this run. */
static char *screen_name, *screen_url;

/* Check spec (a URL or a [hosts] name) now, before the screen opens, and
 * keep it for cli_screen_host.  0, or an exit status after saying why. */
static int screen_host(const char *spec, const char *from)
{
    conf_t conf;
    if (cli_load_conf(&conf, "-H", conf_client_sections) < 0) {
        conf_free(&conf);
        return EXIT_ERR;
    }
    const char *url = strncmp(spec, "ssh://", 6) == 0 ? spec : conf_host_url(&conf, spec);
    int rc = 0;
    remote_host h = {0};
    char err[512];
    if (!url) {
        char *shown = quote_text_visible(spec, strlen(spec));
        char *path = conf_user_path();
        char *where = quote_text_visible(path, strlen(path));
        fprintf(stderr, "corral: %s '%s' is neither ssh://[user@]host[:port] nor a name in [hosts] of %s\n", from,
                shown, where);
        free(where);
        free(path);
        free(shown);
        rc = EXIT_USAGE;
    } else if (remote_parse(url, &h, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s: %s\n", from, err);
        rc = EXIT_USAGE;
    } else {
        /* Named as [hosts] names it, or by the host in the URL. */
        screen_name = xstrdup(url == spec ? h.host : spec);
        screen_url = xstrdup(url);
    }
    remote_host_free(&h);
    conf_free(&conf);
    return rc;
}

void cli_screen_host(const char **name, const char **url)
{
    *name = screen_name;
    *url = screen_url;
}

int cli_host_prepare(const cli_verb *v, const char *host)
{
    const char *env = getenv("CORRAL_HOST");
    const char *from = host ? "-H" : "CORRAL_HOST";
    if (!host && env && *env && (!v || v->where != CLI_LOCAL))
        host = env;
    if (!host)
        return -1;
    /* How the refusals start: the option, or the variable that asked. */
    char *shown = quote_text_visible(host, strlen(host));
    char *who = strcmp(from, "-H") == 0 ? xstrdup("corral -H") : xasprintf("corral (CORRAL_HOST=%s)", shown);
    free(shown);
    int rc = -1;
    enum cli_where where = v ? v->where : CLI_SCREEN;
    const char *name = v ? v->name : "";
    switch (where) {
    case CLI_REMOTE:
        rc = use_host(host, from);
        if (rc == 0)
            rc = -1;
        break;
    case CLI_FILES: {
        /* The other machine's records, copied into a private directory
         * that this run then reads as its own state directory. */
        rc = use_host(host, from);
        char err[1024];
        if (rc == 0 && cli_records_begin(err, sizeof err) < 0) {
            fprintf(stderr, "corral: %s\n", err);
            rc = EXIT_ERR;
        }
        if (rc == 0)
            rc = -1;
        break;
    }
    case CLI_SCREEN:
        /* The screen shows this machine and adds that one (with [hosts]). */
        rc = screen_host(host, from);
        if (rc == 0)
            rc = -1;
        break;
    case CLI_LOCAL:
    case CLI_HERE:
        fprintf(stderr, "%s: %s works on this machine only; run it on that machine (ssh HOST corral %s ...)%s\n",
                who, name, name, strcmp(from, "-H") == 0 ? "" : ", or unset CORRAL_HOST");
        rc = EXIT_USAGE;
        break;
    }
    free(who);
    return rc;
}

/* ---- corral serve-stdio ---------------------------------------------------------- */

/* Copy what one read gets from in to out.  1 copied, 0 end of file (or
 * out gone), -1 error (said). */
static int pass(int in, int out, const char *from, const char *to)
{
    char buf[65536];
    ssize_t n;
    do
        n = read(in, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n == 0 || (n < 0 && (errno == ECONNRESET)))
        return 0;
    if (n < 0) {
        fprintf(stderr, "corral serve-stdio: reading %s: %s\n", from, strerror(errno));
        return -1;
    }
    int rc = write_all(out, buf, (size_t)n);
    if (rc == -EPIPE || rc == -ECONNRESET)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "corral serve-stdio: writing to %s: %s\n", to, strerror(-rc));
        return -1;
    }
    return 1;
}

static int verb_serve_stdio(const cli_verb *v, int argc, char **argv)
{
    int h = cli_only_help(v, argc, argv);
    if (h >= 0)
        return h;
    if (optind < argc)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind]);
    int sock;
    char err[1024];
    if (client_connect_socket(&sock, true, err, sizeof err) < 0) {
        fprintf(stderr, "corral serve-stdio: cannot reach this machine's corral server: %s\n", err);
        return EXIT_ERR;
    }
    /* The other side going away ends the relay; it is no error. */
    signal(SIGPIPE, SIG_IGN);
    bool in_open = true;
    int rc = 0;
    for (;;) {
        struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = in_open ? 0 : -1, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "corral serve-stdio: poll: %s\n", strerror(errno));
            rc = EXIT_ERR;
            break;
        }
        if (p[0].revents) {
            int r = pass(sock, 1, "the server", "standard output");
            if (r <= 0) { /* the server ended the connection, or stdout is gone */
                rc = r < 0 ? EXIT_ERR : 0;
                break;
            }
        }
        if (in_open && p[1].revents) {
            int r = pass(0, sock, "standard input", "the server");
            if (r < 0) {
                rc = EXIT_ERR;
                break;
            }
            if (r == 0) { /* the client is done: the server hears it and ends the connection */
                in_open = false;
                shutdown(sock, SHUT_WR);
            }
        }
    }
    close(sock);
    return rc;
}

const cli_verb cli_verb_serve_stdio = {
    .name = "serve-stdio",
    .usage = "serve-stdio",
    .help = "Relay standard input and output to this machine's corral server (started when\n"
            "none answers), byte for byte, until either side ends; the other end speaks the\n"
            "admin protocol (docs/protocol.md).  It is what corral -H ssh://HOST runs on\n"
            "HOST through ssh, so that one machine's verbs and corral mcp reach another's\n"
            "server over OpenSSH with nothing new listening on any port.  Exits 0 at the end\n"
            "of either side, 1 when it cannot reach the server.\n",
    .run = verb_serve_stdio,
    .where = CLI_LOCAL,
};
