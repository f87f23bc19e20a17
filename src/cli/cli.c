/*
 * cli.c - the command-line verbs.  Each verb is one entry (cli_verb.h):
 * name, usage, help text and the function; the table at the bottom lists
 * them in the order corral --help shows them.  Exit statuses
 * (base/exitcode.h): 0 success, 1 an error reported by corral or the
 * server, 2 a usage error; `exec --raw` exits with the command's own status
 * and uses 125 for its own failures.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/cli_log.h"
#include "cli/cli_export.h"
#include "cli/cli_snap.h"
#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "policy/policy.h"
#include "protocol/client.h"
#include "mcp/mcp.h"
#include "base/paths.h"
#include "protocol/proto.h"
#include "base/quote.h"
#include "server/server.h"
#include "cli/server_modules.h"
#include "protocol/uexec.h"
#include "base/util.h"
#include "base/width.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* After getopt refused an option: it has said which and why, as
 * "corral VERB: unrecognized option '--x'" (cli_main names the verb in
 * argv[0] for it), so only the usage follows. */
static int cli_option_usage(const cli_verb *v)
{
    fprintf(stderr, "usage: corral %s\nTry 'corral %s --help'.\n", v->usage, v->name);
    return EXIT_USAGE;
}

static int cli_usage_error(const cli_verb *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli_usage_error(const cli_verb *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral %s: ", v->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return cli_option_usage(v);
}

static int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_ERR;
}

/* --help: the usage line and the help text on stdout; exit status 0. */
static int cli_print_help(const cli_verb *v)
{
    printf("usage: corral %s\n\n%s", v->usage, v->help);
    return 0;
}

static const char *cli_client_name(void)
{
    const char *n = getenv("CORRAL_CLIENT");
    return n && *n ? n : "user";
}

/* Connect (starting a server if needed); prints the error.  The hello
 * reply is read with the first call's. */
static int cli_connect(client_t *c, bool autostart)
{
    char err[1024];
    if (client_connect_lazy(c, cli_client_name(), autostart, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        return -1;
    }
    return 0;
}

/* What the server tells a requester on the way (on stderr): the store's
 * and the sandbox's warnings, and that the command (or a request from
 * inside its session) waits for a human, which one, and how to answer it.
 * True when ev was one of them. */
static bool cli_notice(json_t *ev, const char *kind)
{
    const char *msg = json_string_value(json_object_get(ev, "message"));
    if (!kind || !msg)
        return false;
    if (strcmp(kind, "warning") == 0)
        fprintf(stderr, "corral: warning: %s\n", msg);
    else if (strcmp(kind, "approval_pending") == 0)
        fprintf(stderr, "corral: %s\n", msg);
    else
        return false;
    return true;
}

static void on_notice(json_t *ev, void *user)
{
    (void)user;
    cli_notice(ev, json_string_value(json_object_get(ev, "event")));
}

json_t *cli_call(client_t *c, json_t *req)
{
    char err[1024];
    json_t *r = client_call(c, req, on_notice, NULL, err, sizeof err);
    if (!r) {
        fprintf(stderr, "corral: %s\n", err);
        return NULL;
    }
    char buf[1024];
    const char *msg = client_error_message(r, buf, sizeof buf);
    if (msg) {
        /* The server's message may name what a session made (a path in
         * its workspace): made visible (quote.h). */
        char *v = quote_text_visible(msg, strlen(msg));
        fprintf(stderr, "corral: %s\n", v);
        free(v);
        json_decref(r);
        return NULL;
    }
    return r;
}

json_t *cli_request(json_t *req)
{
    client_t c;
    if (cli_connect(&c, true) < 0) {
        json_decref(req);
        return NULL;
    }
    json_t *r = cli_call(&c, req);
    client_close(&c);
    return r;
}

static int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* A yield in milliseconds: any whole number from 0 up.  A value too large
 * for the protocol is taken as its largest, as the server clamps every yield
 * to its range anyway (the help gives the range), so 99999999999 waits as
 * long as the largest yield does instead of being refused. */
static int parse_yield(const char *s, long *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    if (cli_parse_int(s, 0, INT32_MAX, out) < 0)
        *out = INT32_MAX; /* only digits, so only too large */
    return 0;
}

static int cli_parse_session_id(const cli_verb *v, const char *s, long *id)
{
    if (cli_parse_int(s, 0, INT32_MAX, id) < 0)
        return cli_usage_error(v, "'%s' is not a session id (a number, see corral ls)", s);
    return 0;
}

static json_t *cli_argv_to_json(int argc, char **argv, int *bad)
{
    json_t *a = json_array();
    for (int i = 0; i < argc; i++) {
        json_t *s = json_string(argv[i]);
        if (!s) {
            *bad = i;
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, s);
    }
    return a;
}

static char *cli_current_dir(void)
{
    char *d = getcwd(NULL, 0);
    return d ? d : xstrdup(paths_home());
}

/* Options shared by verbs: -h/--help. Returns 1 if help was printed. */
#define HELP_OPTION {"help", no_argument, NULL, 'h'}

/* ---- server ------------------------------------------------------------------ */

static int verb_server(const cli_verb *v, int argc, char **argv)
{
    bool foreground = false, stop = false;
    int ready_fd = -1;
    static const struct option opts[] = {
        {"foreground", no_argument, NULL, 'f'}, {"stop", no_argument, NULL, 's'},
        {"ready-fd", required_argument, NULL, 'r'}, HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, "+fsh", opts, NULL)) != -1) {
        long fd;
        switch (o) {
        case 'f': foreground = true; break;
        case 's': stop = true; break;
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
    if (stop) {
        client_t c;
        if (cli_connect(&c, false) < 0)
            return EXIT_ERR;
        /* The server holds an exclusive lock on its lock file until its
         * process ends: taking the lock after the shutdown request is how
         * we know it is gone. */
        char err[1024];
        char *sock = paths_socket(err, sizeof err);
        char *lock = sock ? xasprintf("%.*s.lock", (int)strlen(sock) - 5, sock) : NULL;
        int lockfd = lock ? open(lock, O_RDONLY | O_CLOEXEC) : -1;
        free(sock);
        free(lock);
        json_t *r = cli_call(&c, json_pack("{s:s}", "cmd", "shutdown"));
        if (!r) {
            client_close(&c);
            if (lockfd >= 0)
                close(lockfd);
            return EXIT_ERR;
        }
        if (lockfd >= 0) {
            alarm(30); /* a server that does not end: give up with SIGALRM */
            flock(lockfd, LOCK_EX);
            alarm(0);
            close(lockfd);
        }
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
    .usage = "server [--foreground] [--stop]",
    .help = "Start the corral server in the background (every other verb also starts it\n"
            "when none answers).  One server runs per socket: a second start says which\n"
            "pid serves.\n\n"
            "  -f, --foreground  run in this process, logging to stderr\n"
            "  -s, --stop        stop the running server: every session's process tree is\n"
            "                    killed, logs and recordings are flushed, the socket removed\n",
    .run = verb_server,
};

/* ---- ls ---------------------------------------------------------------------- */

static void format_age(double secs, char *out, size_t n)
{
    if (secs < 0)
        secs = 0;
    if (secs < 60)
        snprintf(out, n, "%ds", (int)secs);
    else if (secs < 3600)
        snprintf(out, n, "%dm", (int)(secs / 60));
    else if (secs < 86400)
        snprintf(out, n, "%dh", (int)(secs / 3600));
    else
        snprintf(out, n, "%dd", (int)(secs / 86400));
}

/* text (UTF-8 from a session or the config) in a column of w terminal
 * columns: cut to whole characters that fit, padded with spaces, as wide
 * as w on screen whatever its characters' widths (CJK takes two columns
 * each, printf's %-16s counts bytes).  Caller frees. */
static char *column(const char *text, int w)
{
    char *clean = sanitize_text(text ? text : "", text ? strlen(text) : 0, 4096);
    int used;
    size_t n = uc_text_fit(clean, strlen(clean), w, &used);
    char *out = xasprintf("%.*s%*s", (int)n, clean, w - used, "");
    free(clean);
    return out;
}

static void print_table(json_t *r)
{
    const char *nc = getenv("NO_COLOR");
    bool color = isatty(STDOUT_FILENO) && !(nc && *nc);
    json_t *list = json_object_get(r, "sessions");
    printf("%-6s %-16s %-14s %-15s %-10s %-5s %s\n", "ID", "NAME", "STATE", "PROFILE", "CLIENT", "AGE", "COMMAND");
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s) {
        char age[16];
        format_age(json_real_value(json_object_get(s, "age_seconds")), age, sizeof age);
        /* The command shell-quoted; a long one cut with a mark saying so. */
        char *line = client_quote_argv(json_object_get(s, "command"));
        char *shown = quote_shorten(line, 60);
        free(line);
        char *name = column(json_string_value(json_object_get(s, "name")), 16);
        char *client = column(json_string_value(json_object_get(s, "client")), 10);
        char *status = column(json_string_value(json_object_get(s, "status")), 14);
        /* "full" is no sandbox at all: red, so it is never missed. */
        const char *profile = json_string_value(json_object_get(s, "profile"));
        char *prof = column(profile, 15);
        bool full = profile && strcmp(profile, "full") == 0 && color;
        printf("%-6lld %s %s %s%s%s %s %-5s %s%s\n", (long long)json_integer_value(json_object_get(s, "id")), name,
               status, full ? "\033[1;31m" : "", prof, full ? "\033[0m" : "", client, age, shown,
               json_is_true(json_object_get(s, "pinned")) ? "  [pinned]" : "");
        free(shown);
        free(name);
        free(client);
        free(status);
        free(prof);
    }
    printf("%lld live, %lld stored of %lld\n", (long long)json_integer_value(json_object_get(r, "live")),
           (long long)json_integer_value(json_object_get(r, "stored")),
           (long long)json_integer_value(json_object_get(r, "max")));
}

static int verb_ls(const cli_verb *v, int argc, char **argv)
{
    bool as_json = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
        if (o == 'j')
            as_json = true;
        else if (o == 'h')
            return cli_print_help(v);
        else
            return cli_option_usage(v);
    }
    if (optind < argc)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind]);
    json_t *r = cli_request(json_pack("{s:s}", "cmd", "ls"));
    if (!r)
        return EXIT_ERR;
    if (as_json) {
        json_object_del(r, "id");
        json_object_del(r, "ok");
        char *s = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        buf_t b; /* an agent's argv: its DEL, C1 and invisible characters as \u escapes */
        buf_init(&b);
        quote_json_append(&b, s, strlen(s));
        buf_putc(&b, '\n');
        fwrite(b.data, 1, b.len, stdout);
        buf_free(&b);
        free(s);
    } else {
        print_table(r);
    }
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_ls = {
    .name = "ls",
    .usage = "ls [--json]",
    .help = "List the sessions in the process store, most recently used first: id, name,\n"
            "state (running, exited N, killed SIGNAL), sandbox profile, the client that\n"
            "created it, age and command.\n\n"
            "  -j, --json  print the server's JSON instead of a table\n",
    .run = verb_ls,
};

/* ---- sandbox options of new and exec ------------------------------------------ */

/* --profile, -w, -r, --deny, --net: collected into the request. */
typedef struct cli_sandbox_opts {
    json_t *write, *read, *deny;
    const char *profile, *net, *approval;
    bool allow_home;
} cli_sandbox_opts;

#define OPT_APPROVAL_POLICY 0x101
#define OPT_ALLOW_HOME 0x102

#define SANDBOX_LONGOPTS                                                                             \
    {"profile", required_argument, NULL, 'P'}, {"write", required_argument, NULL, 'w'},               \
        {"read", required_argument, NULL, 'R'}, {"deny", required_argument, NULL, 'D'},               \
        {"net", required_argument, NULL, 'N'}, {"approval-policy", required_argument, NULL, OPT_APPROVAL_POLICY}, \
        {"allow-home-workspace", no_argument, NULL, OPT_ALLOW_HOME}

/* Take a sandbox option; 1 if o was one, 0 if not, -1 on a bad value. */
static int cli_sandbox_opt(const cli_verb *v, cli_sandbox_opts *so, int o, const char *arg)
{
    json_t **list = o == 'w' ? &so->write : o == 'R' ? &so->read : o == 'D' ? &so->deny : NULL;
    if (list) {
        char *abs = arg[0] == '/' || arg[0] == '~' || arg[0] == ':' ? xstrdup(arg) : realpath(arg, NULL);
        if (!abs) {
            cli_usage_error(v, "cannot use path '%s': %s", arg, strerror(errno));
            return -1;
        }
        if (!*list)
            *list = json_array();
        json_array_append_new(*list, json_string(abs));
        free(abs);
        return 1;
    }
    if (o == 'P') {
        so->profile = arg;
        return 1;
    }
    if (o == OPT_ALLOW_HOME) {
        so->allow_home = true;
        return 1;
    }
    if (o == OPT_APPROVAL_POLICY) {
        approval_policy p;
        if (approval_policy_parse(arg, &p) < 0) {
            cli_usage_error(v, "--approval-policy wants on-request, unless-trusted, never or granular, not '%s'", arg);
            return -1;
        }
        so->approval = arg;
        return 1;
    }
    if (o == 'N') {
        if (strcmp(arg, "off") && strcmp(arg, "proxy") && strcmp(arg, "full")) {
            cli_usage_error(v, "--net wants off, proxy or full, not '%s'", arg);
            return -1;
        }
        so->net = arg;
        return 1;
    }
    return 0;
}

static void cli_sandbox_opts_apply(cli_sandbox_opts *so, json_t *req)
{
    if (so->profile)
        json_object_set_new(req, "profile", json_string(so->profile));
    if (so->net)
        json_object_set_new(req, "net", json_string(so->net));
    if (so->approval)
        json_object_set_new(req, "approval_policy", json_string(so->approval));
    if (so->allow_home)
        json_object_set_new(req, "allow_home_workspace", json_true());
    if (so->write)
        json_object_set_new(req, "write", so->write);
    if (so->read)
        json_object_set_new(req, "read", so->read);
    if (so->deny)
        json_object_set_new(req, "deny", so->deny);
    so->write = so->read = so->deny = NULL;
}

static void cli_sandbox_opts_free(cli_sandbox_opts *so)
{
    json_decref(so->write);
    json_decref(so->read);
    json_decref(so->deny);
}

#define SANDBOX_HELP                                                                                   \
    "  -P, --profile P       sandbox profile: read-only, workspace-write (default),\n"                   \
    "                        full (no sandbox), or a [profile \"P\"] of the config\n"                     \
    "  -w, --write PATH      also writable in the sandbox (repeatable)\n"                                \
    "  -R, --read PATH       also readable\n"                                                            \
    "  -D, --deny PATH       hidden in the sandbox\n"                                                    \
    "      --net MODE        proxy (workspace-write's default: each new host asks),\n"                  \
    "                        off (loopback only) or full (the host's network)\n"                    \
    "      --approval-policy P  on-request (default), unless-trusted, never or granular:\n"          \
    "                        when the session's commands ask (the config's [approvals])\n"          \
    "      --allow-home-workspace  allow a writable workspace or write root that is your\n"        \
    "                        home directory, / or above it (refused otherwise: your\n"          \
    "                        shell's startup files would be writable)\n"

/* ---- new ------------------------------------------------------------------------ */

static void terminal_size(int *rows, int *cols)
{
    struct winsize ws;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        *rows = ws.ws_row;
        *cols = ws.ws_col;
    }
}

static int parse_size(const char *s, int *cols, int *rows)
{
    int c, r;
    char x;
    if (sscanf(s, "%d%c%d", &c, &x, &r) != 3 || (x != 'x' && x != 'X') || c < 1 || r < 1 || c > 1000 || r > 1000)
        return -1;
    *cols = c;
    *rows = r;
    return 0;
}

static int verb_new(const cli_verb *v, int argc, char **argv)
{
    const char *name = NULL, *dir = NULL;
    bool pin = false;
    int rows = 0, cols = 0;
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'}, {"directory", required_argument, NULL, 'C'},
        {"pin", no_argument, NULL, 'p'}, {"size", required_argument, NULL, 's'}, SANDBOX_LONGOPTS, HELP_OPTION, {0}};
    cli_sandbox_opts so = {0};
    int o;
    while ((o = getopt_long(argc, argv, "+n:C:ps:P:w:R:D:h", opts, NULL)) != -1) {
        int sr = cli_sandbox_opt(v, &so, o, optarg);
        if (sr < 0) {
            cli_sandbox_opts_free(&so);
            return EXIT_USAGE;
        }
        if (sr > 0)
            continue;
        switch (o) {
        case 'n': name = optarg; break;
        case 'C': dir = optarg; break;
        case 'p': pin = true; break;
        case 's':
            if (parse_size(optarg, &cols, &rows) < 0)
                return cli_usage_error(v, "--size wants COLSxROWS, e.g. 120x40 (each 1..1000)");
            break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    if (!rows)
        terminal_size(&rows, &cols);
    json_t *req = json_pack("{s:s, s:b}", "cmd", "new", "pin", pin);
    cli_sandbox_opts_apply(&so, req);
    char *cwd = dir ? realpath(dir, NULL) : cli_current_dir();
    if (!cwd) {
        json_decref(req);
        return cli_fail("cannot use directory '%s': %s", dir, strerror(errno));
    }
    json_object_set_new(req, "cwd", json_string(cwd));
    free(cwd);
    if (name)
        json_object_set_new(req, "name", json_string(name));
    if (rows) {
        json_object_set_new(req, "rows", json_integer(rows));
        json_object_set_new(req, "cols", json_integer(cols));
    }
    if (optind < argc) {
        int bad;
        json_t *a = cli_argv_to_json(argc - optind, argv + optind, &bad);
        if (!a) {
            json_decref(req);
            return cli_fail("argument %d is not valid UTF-8", bad + 1);
        }
        json_object_set_new(req, "argv", a);
    }
    json_t *r = cli_request(req);
    if (!r)
        return EXIT_ERR;
    const char *warning = json_string_value(json_object_get(r, "warning"));
    if (warning)
        fprintf(stderr, "corral: warning: %s\n", warning);
    printf("%lld\n", (long long)json_integer_value(json_object_get(json_object_get(r, "session"), "id")));
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_new = {
    .name = "new",
    .usage = "new [-n NAME] [-C DIR] [--pin] [--size COLSxROWS] [SANDBOX OPTIONS] [-- CMD [ARG...]]",
    .help = "Start an interactive session on a terminal (default: your shell) and print\n"
            "its id.\n\n"
            "  -n, --name NAME       a name to show in lists\n"
            "  -C, --directory DIR   where it starts (default: the current directory)\n"
            "  -p, --pin             never prune this session from the store\n"
            "  -s, --size COLSxROWS  terminal size (default: this terminal's, else 80x24)\n" SANDBOX_HELP,
    .run = verb_new,
};

/* ---- exec ----------------------------------------------------------------------- */

/* A session's output goes to stdout byte for byte when stdout is a pipe or
 * a file; on a terminal its control characters are made visible first (as
 * cat -v shows them, but for newline, tab and carriage return), so that
 * what a command prints cannot act on the user's terminal: an OSC 52 would
 * write their clipboard, an OSC 0 their title, and a DECRQSS or CSI 21t
 * makes the terminal answer into its own input, as if typed. */
typedef struct out_state {
    bool tty;        /* stdout is a terminal */
    quote_catv catv; /* a character split between two writes */
    bool broken;     /* stdout went away */
} out_state;

static void out_init(out_state *o)
{
    *o = (out_state){.tty = isatty(STDOUT_FILENO) == 1};
}

/* Write a session's output to stdout (final: nothing follows). */
static void out_write(out_state *o, const char *s, size_t len, bool final)
{
    if (o->broken)
        return;
    if (!o->tty) {
        if (write_all(STDOUT_FILENO, s, len) < 0)
            o->broken = true;
        return;
    }
    buf_t b;
    buf_init(&b);
    quote_catv_write(&o->catv, &b, s, len, final);
    if (b.len && write_all(STDOUT_FILENO, b.data, b.len) < 0)
        o->broken = true;
    buf_free(&b);
}

/* A reply's "text" (the envelope), ending in a newline. */
static void out_reply_text(json_t *text)
{
    out_state o;
    out_init(&o);
    fflush(stdout);
    size_t n = json_string_length(text);
    const char *s = json_string_value(text);
    out_write(&o, s ? s : "", n, true);
    if (n == 0 || s[n - 1] != '\n')
        out_write(&o, "\n", 1, true);
}

static void on_raw_event(json_t *ev, void *user)
{
    out_state *st = user;
    const char *kind = json_string_value(json_object_get(ev, "event"));
    if (cli_notice(ev, kind))
        return;
    if (!kind || strcmp(kind, "output") != 0 || st->broken)
        return;
    json_t *d = json_object_get(ev, "data_b64");
    size_t n;
    char *bytes = base64_decode(json_string_value(d), json_string_length(d), &n);
    if (bytes)
        out_write(st, bytes, n, false);
    free(bytes);
}

static void on_exec_event(json_t *ev, void *user)
{
    (void)user;
    const char *kind = json_string_value(json_object_get(ev, "event"));
    cli_notice(ev, kind);
}

/* corral exec; add_write collects --add-write (the caller frees it on
 * every way out). */
static int exec_with(const cli_verb *v, int argc, char **argv, json_t *add_write)
{
    bool tty = false, raw = false, add_net = false;
    const char *dir = NULL, *shell_cmd = NULL, *name = NULL;
    const char *sandbox_perms = NULL, *justification = NULL, *prefix_rule = NULL;
    long yield = -1, max_tokens = -1;
    static const struct option opts[] = {
        {"tty", no_argument, NULL, 't'}, {"directory", required_argument, NULL, 'C'},
        {"yield", required_argument, NULL, 'y'}, {"max-tokens", required_argument, NULL, 'm'},
        {"raw", no_argument, NULL, 'r'}, {"command", required_argument, NULL, 'c'},
        {"name", required_argument, NULL, 'n'}, {"sandbox-permissions", required_argument, NULL, 1},
        {"add-write", required_argument, NULL, 2}, {"add-net", no_argument, NULL, 3},
        {"justification", required_argument, NULL, 4}, {"prefix-rule", required_argument, NULL, 5},
        SANDBOX_LONGOPTS, HELP_OPTION, {0}};
    cli_sandbox_opts so = {0};
    int o;
    while ((o = getopt_long(argc, argv, "+tC:y:m:rc:n:P:w:R:D:h", opts, NULL)) != -1) {
        int sr = cli_sandbox_opt(v, &so, o, optarg);
        if (sr < 0) {
            cli_sandbox_opts_free(&so);
            return EXIT_USAGE;
        }
        if (sr > 0)
            continue;
        switch (o) {
        case 't': tty = true; break;
        case 'C': dir = optarg; break;
        case 'y':
            if (parse_yield(optarg, &yield) < 0)
                return cli_usage_error(v, "--yield wants milliseconds, a whole number (clamped to 250..30000)");
            break;
        case 'm':
            if (cli_parse_int(optarg, 0, INT32_MAX, &max_tokens) < 0)
                return cli_usage_error(v, "--max-tokens wants a whole number");
            break;
        case 'r': raw = true; break;
        case 'c': shell_cmd = optarg; break;
        case 'n': name = optarg; break;
        case 1: sandbox_perms = optarg; break;
        case 2: {
            char *abs = realpath(optarg, NULL);
            json_array_append_new(add_write, json_string(abs ? abs : optarg));
            free(abs);
            break;
        }
        case 3: add_net = true; break;
        case 4: justification = optarg; break;
        case 5: prefix_rule = optarg; break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    if (sandbox_perms && strcmp(sandbox_perms, "require_escalated") != 0 &&
        strcmp(sandbox_perms, "with_additional_permissions") != 0 && strcmp(sandbox_perms, "use_default") != 0)
        return cli_usage_error(v, "--sandbox-permissions is require_escalated, with_additional_permissions or use_default");
    if ((json_array_size(add_write) || add_net) && (!sandbox_perms || strcmp(sandbox_perms, "with_additional_permissions")))
        return cli_usage_error(v, "--add-write and --add-net go with --sandbox-permissions with_additional_permissions");
    int err_status = raw ? EXIT_OWN_ERR : EXIT_ERR;
    if (!shell_cmd && optind >= argc)
        return cli_usage_error(v, "no command given (corral exec -- CMD [ARG...], or -c 'SHELL COMMAND')");
    if (shell_cmd && optind < argc)
        return cli_usage_error(v, "give either -c 'COMMAND' or -- CMD ARGS, not both");
    json_t *req = json_pack("{s:s, s:b}", "cmd", "exec", "tty", tty);
    cli_sandbox_opts_apply(&so, req);
    char *cwd = dir ? realpath(dir, NULL) : cli_current_dir();
    if (!cwd) {
        json_decref(req);
        fprintf(stderr, "corral: cannot use directory '%s': %s\n", dir, strerror(errno));
        return err_status;
    }
    json_object_set_new(req, "workdir", json_string(cwd));
    free(cwd);
    if (shell_cmd) {
        json_t *s = json_string(shell_cmd);
        if (!s) {
            json_decref(req);
            fprintf(stderr, "corral: the command is not valid UTF-8\n");
            return err_status;
        }
        json_object_set_new(req, "command", s);
    } else {
        int bad;
        json_t *a = cli_argv_to_json(argc - optind, argv + optind, &bad);
        if (!a) {
            json_decref(req);
            fprintf(stderr, "corral: argument %d is not valid UTF-8\n", bad + 1);
            return err_status;
        }
        json_object_set_new(req, "argv", a);
    }
    if (name)
        json_object_set_new(req, "name", json_string(name));
    if (yield >= 0)
        json_object_set_new(req, "yield_time_ms", json_integer(yield));
    if (max_tokens >= 0)
        json_object_set_new(req, "max_output_tokens", json_integer(max_tokens));
    if (raw)
        json_object_set_new(req, "stream", json_true());
    if (sandbox_perms)
        json_object_set_new(req, "sandbox_permissions", json_string(sandbox_perms));
    if (json_array_size(add_write) || add_net)
        json_object_set_new(req, "additional_permissions",
                            json_pack("{s:O, s:b}", "write", add_write, "network", add_net));
    if (justification)
        json_object_set_new(req, "justification", json_string(justification));
    if (prefix_rule) {
        json_t *tokens = json_array();
        char *copy = xstrdup(prefix_rule), *save = NULL;
        for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
            json_array_append_new(tokens, json_string(tok));
        free(copy);
        json_object_set_new(req, "prefix_rule", tokens);
    }

    client_t c;
    if (cli_connect(&c, true) < 0) {
        json_decref(req);
        return err_status;
    }
    char err[1024];
    out_state st;
    out_init(&st);
    json_t *r = client_call(&c, req, raw ? on_raw_event : on_exec_event, &st, err, sizeof err);
    client_close(&c);
    if (raw)
        out_write(&st, "", 0, true); /* a character the stream ended inside */
    if (!r) {
        fprintf(stderr, "corral: %s\n", err);
        return err_status;
    }
    char buf[1024];
    const char *msg = client_error_message(r, buf, sizeof buf);
    if (msg) {
        fprintf(stderr, "corral: %s\n", msg);
        json_decref(r);
        return err_status;
    }
    int status = 0;
    if (raw) {
        status = (int)json_integer_value(json_object_get(r, "exit_code"));
    } else {
        out_reply_text(json_object_get(r, "text"));
    }
    json_decref(r);
    return status;
}

static int verb_exec(const cli_verb *v, int argc, char **argv)
{
    json_t *add_write = json_array();
    int rc = exec_with(v, argc, argv, add_write);
    json_decref(add_write);
    return rc;
}

const cli_verb cli_verb_exec = {
    .name = "exec",
    .usage = "exec [--tty] [-C DIR] [--yield MS] [--max-tokens N] [--raw] [-n NAME] [SANDBOX OPTIONS] "
             "[--sandbox-permissions P [--add-write PATH]... [--add-net]] "
             "[--justification TEXT] [--prefix-rule TOKENS] "
             "(-- CMD [ARG...] | -c 'COMMAND')",
    .help = "Run a command the way an agent's exec_command does and print the reply\n"
            "envelope (Chunk ID, Wall time, exit code or session id, Original token\n"
            "count, Output).  A command still running after the yield keeps running:\n"
            "use its session id with corral poll and corral send.\n\n"
            "  -t, --tty             run on a terminal (stdin stays open for send);\n"
            "                        default: pipes, stdin closed\n"
            "  -C, --directory DIR   working directory (default: the current directory)\n"
            "  -y, --yield MS        wait this long for output (250..30000, default 10000)\n"
            "  -m, --max-tokens N    output budget in tokens of 4 bytes (default 10000)\n"
            "  -c, --command STRING  run STRING with your shell (SHELL -lc STRING)\n"
            "  -n, --name NAME       a name to show in lists\n"
            "  -r, --raw             print the command's output as it comes, untruncated,\n"
            "                        and exit with its status (128+N for signal N); corral's\n"
            "                        own errors exit 125.  Interrupting corral kills the command.\n"
            "On a terminal, control characters in the output show as cat -v shows them\n"
            "(^[ for ESC), so the command's escape sequences cannot act on it; to a pipe\n"
            "the output is unchanged (exact bytes with --raw).  The same for send and poll.\n"
            "\nEvery command passes corral's exec policy first (corral.rules(5)): a forbidden\n"
            "one is refused, one that needs approval waits until someone answers in the\n"
            "supervisor screen or with corral approve/deny; a denial exits 1 (125 with --raw)\n"
            "with the user's note if one was typed.\n"
            "  --sandbox-permissions require_escalated|with_additional_permissions\n"
            "                        ask to run without the sandbox, or with more in it\n"
            "  --add-write PATH      (with_additional_permissions) a writable path\n"
            "  --add-net             (with_additional_permissions) network access\n"
            "  --justification TEXT  why, shown to the person who answers\n"
            "  --prefix-rule 'TOKENS' the rule to save if they answer \"always\" (p)\n" SANDBOX_HELP,
    .run = verb_exec,
};

/* ---- send / poll ------------------------------------------------------------------- */

/* Interpret C-style escapes: \n \r \t \e \a \b \\ \xHH \0NNN. */
static char *unescape(const char *s, size_t *len)
{
    buf_t b;
    buf_init(&b);
    for (const char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) {
            buf_putc(&b, *p);
            continue;
        }
        p++;
        switch (*p) {
        case 'n': buf_putc(&b, '\n'); break;
        case 'r': buf_putc(&b, '\r'); break;
        case 't': buf_putc(&b, '\t'); break;
        case 'e': buf_putc(&b, '\033'); break;
        case 'a': buf_putc(&b, '\a'); break;
        case 'b': buf_putc(&b, '\b'); break;
        case '\\': buf_putc(&b, '\\'); break;
        case 'x': {
            int v = 0, k = 0;
            while (k < 2 && strchr("0123456789abcdefABCDEF", p[1]) && p[1]) {
                char ch = *++p;
                v = v * 16 + (ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
                k++;
            }
            buf_putc(&b, (char)v);
            break;
        }
        default:
            buf_putc(&b, '\\');
            buf_putc(&b, *p);
        }
    }
    *len = b.len;
    return buf_steal(&b);
}

static int write_stdin(long id, const char *chars, size_t len, long yield, long max_tokens)
{
    json_t *req = json_pack("{s:s, s:i}", "cmd", "write_stdin", "session_id", (int)id);
    json_t *text = json_stringn(chars, len);
    if (!text) {
        json_decref(req);
        return cli_fail("the text to send is not valid UTF-8");
    }
    json_object_set_new(req, "chars", text);
    if (yield >= 0)
        json_object_set_new(req, "yield_time_ms", json_integer(yield));
    if (max_tokens >= 0)
        json_object_set_new(req, "max_output_tokens", json_integer(max_tokens));
    json_t *r = cli_request(req);
    if (!r)
        return EXIT_ERR;
    out_reply_text(json_object_get(r, "text"));
    json_decref(r);
    return 0;
}

static int send_or_poll(const cli_verb *v, int argc, char **argv, bool is_send)
{
    bool escapes = false, enter = false;
    long yield = -1, max_tokens = -1;
    static const struct option opts[] = {
        {"escapes", no_argument, NULL, 'e'}, {"enter", no_argument, NULL, 'E'},
        {"yield", required_argument, NULL, 'y'}, {"max-tokens", required_argument, NULL, 'm'},
        HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, is_send ? "+ey:m:h" : "+y:m:h", opts, NULL)) != -1) {
        switch (o) {
        case 'e': escapes = true; break;
        case 'E': enter = true; break;
        case 'y':
            if (parse_yield(optarg, &yield) < 0)
                return cli_usage_error(v, is_send ? "--yield wants milliseconds, a whole number (clamped to 250..30000)"
                                           : "--yield wants milliseconds, a whole number (clamped to 5000 up to "
                                             "[exec] background-timeout, 300000 by default)");
            break;
        case 'm':
            if (cli_parse_int(optarg, 0, INT32_MAX, &max_tokens) < 0)
                return cli_usage_error(v, "--max-tokens wants a whole number");
            break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    int want = is_send ? 2 : 1;
    if (argc - optind != want)
        return cli_usage_error(v, is_send ? "wants a session id and the text to send" : "wants a session id");
    long id;
    if (cli_parse_session_id(v, argv[optind], &id))
        return EXIT_USAGE;
    if (!is_send)
        return write_stdin(id, "", 0, yield, max_tokens);
    size_t len;
    char *text = escapes ? unescape(argv[optind + 1], &len) : xstrdup(argv[optind + 1]);
    if (!escapes)
        len = strlen(text);
    if (enter) {
        text = xrealloc(text, len + 2);
        text[len++] = '\r';
        text[len] = '\0';
    }
    if (len == 0) {
        free(text);
        return cli_usage_error(v, "the text is empty (to wait for output, use corral poll)");
    }
    int rc = write_stdin(id, text, len, yield, max_tokens);
    free(text);
    return rc;
}

static int verb_send(const cli_verb *v, int argc, char **argv)
{
    return send_or_poll(v, argc, argv, true);
}

const cli_verb cli_verb_send = {
    .name = "send",
    .usage = "send [-e] [--enter] [--yield MS] ID TEXT",
    .help = "Write TEXT to a session's terminal (write_stdin) and print the reply envelope\n"
            "with the output that follows (yield default 250 ms, at most 30000).\n\n"
            "  -e, --escapes   interpret \\n \\r \\t \\e \\a \\b \\\\ \\xHH in TEXT\n"
            "      --enter     append a carriage return (the Enter key)\n"
            "  -y, --yield MS  how long to collect output\n",
    .run = verb_send,
};

static int verb_poll(const cli_verb *v, int argc, char **argv)
{
    return send_or_poll(v, argc, argv, false);
}

const cli_verb cli_verb_poll = {
    .name = "poll",
    .usage = "poll [--yield MS] ID",
    .help = "Collect a session's new output without writing (an empty write_stdin): waits\n"
            "up to the yield (5000..300000 ms, default 5000) unless the process ends.\n",
    .run = verb_poll,
};

/* ---- screen, kill, pin, resize ---------------------------------------------------- */

/* Parse "[options] ID" with only --help and the given flag; returns the
 * index of ID in argv or -1 (status in *rc). */
static int simple_id_verb(const cli_verb *v, int argc, char **argv, const char *flag, bool *flag_set, long *id, int *rc)
{
    struct option opts[] = {{flag ? flag : "no-such-option", no_argument, NULL, 'f'}, HELP_OPTION, {0}};
    int o;
    *rc = 0;
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (o == 'f' && flag_set)
            *flag_set = true;
        else if (o == 'h') {
            cli_print_help(v);
            return -1;
        } else {
            *rc = cli_option_usage(v);
            return -1;
        }
    }
    if (argc - optind != 1) {
        *rc = cli_usage_error(v, "wants one session id");
        return -1;
    }
    if (cli_parse_session_id(v, argv[optind], id)) {
        *rc = EXIT_USAGE;
        return -1;
    }
    return optind;
}

static int verb_screen(const cli_verb *v, int argc, char **argv)
{
    bool history = false;
    long id;
    int rc;
    if (simple_id_verb(v, argc, argv, "history", &history, &id, &rc) < 0)
        return rc;
    json_t *r = cli_request(json_pack("{s:s, s:i, s:b}", "cmd", "screen", "session", (int)id, "history", history));
    if (!r)
        return EXIT_ERR;
    json_t *t = json_object_get(r, "text");
    fwrite(json_string_value(t), 1, json_string_length(t), stdout);
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_screen = {
    .name = "screen",
    .usage = "screen [--history] ID",
    .help = "Print a session's current screen as text, from the server's terminal model.\n\n"
            "      --history  include the scrollback above the screen\n",
    .run = verb_screen,
};

static int verb_kill(const cli_verb *v, int argc, char **argv)
{
    long id;
    int rc;
    if (simple_id_verb(v, argc, argv, NULL, NULL, &id, &rc) < 0)
        return rc;
    json_t *r = cli_request(json_pack("{s:s, s:i}", "cmd", "kill", "session", (int)id));
    if (!r)
        return EXIT_ERR;
    printf("session %ld: %s\n", id, json_string_value(json_object_get(r, "state")));
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_kill = {
    .name = "kill",
    .usage = "kill ID",
    .help = "End a session's whole process tree and wait until it is gone.\n",
    .run = verb_kill,
};

static int verb_pin(const cli_verb *v, int argc, char **argv)
{
    bool off = false;
    long id;
    int rc;
    if (simple_id_verb(v, argc, argv, "off", &off, &id, &rc) < 0)
        return rc;
    json_t *r = cli_request(json_pack("{s:s, s:i, s:b}", "cmd", "pin", "session", (int)id, "pinned", !off));
    if (!r)
        return EXIT_ERR;
    printf("session %ld: %s\n", id, off ? "unpinned" : "pinned");
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_pin = {
    .name = "pin",
    .usage = "pin [--off] ID",
    .help = "Pin a session so the store never prunes it (--off to unpin).\n",
    .run = verb_pin,
};

/* corral rm ID... | --exited */
static int verb_rm(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"exited", no_argument, NULL, 'e'}, HELP_OPTION, {0}};
    bool exited = false;
    int o;
    while ((o = getopt_long(argc, argv, "+eh", opts, NULL)) != -1) {
        if (o == 'e')
            exited = true;
        else if (o == 'h')
            return cli_print_help(v);
        else
            return cli_usage_error(v, "unknown option");
    }
    if (exited == (optind < argc))
        return cli_usage_error(v, exited ? "give session ids or --exited, not both" : "wants session ids or --exited");
    json_t *req = json_pack("{s:s}", "cmd", "rm");
    if (exited) {
        json_object_set_new(req, "exited", json_true());
    } else {
        json_t *ids = json_array();
        for (int i = optind; i < argc; i++) {
            long id;
            if (cli_parse_session_id(v, argv[i], &id)) {
                json_decref(ids);
                json_decref(req);
                return EXIT_USAGE;
            }
            json_array_append_new(ids, json_integer(id));
        }
        json_object_set_new(req, "sessions", ids);
    }
    json_t *r = cli_request(req);
    if (!r)
        return EXIT_ERR;
    json_t *removed = json_object_get(r, "removed");
    if (json_array_size(removed) == 0)
        printf("no exited sessions to remove (pinned ones stay: corral rm ID removes one)\n");
    size_t i;
    json_t *sid;
    json_array_foreach(removed, i, sid)
        printf("session %lld: removed\n", (long long)json_integer_value(sid));
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_rm = {
    .name = "rm",
    .usage = "rm ID... | rm --exited",
    .help = "Remove exited sessions from the store (and from every list and screen).\n"
            "Their directories under the state directory, with the log and the\n"
            "recording, stay on disk.  A running session is refused, and then nothing is\n"
            "removed: end it first with corral kill.\n\n"
            "  -e, --exited  every exited session but the pinned ones\n",
    .run = verb_rm,
};

static int verb_resize(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (o == 'h')
            return cli_print_help(v);
        return cli_option_usage(v);
    }
    if (argc - optind != 2)
        return cli_usage_error(v, "wants a session id and COLSxROWS");
    long id;
    int rows, cols;
    if (cli_parse_session_id(v, argv[optind], &id))
        return EXIT_USAGE;
    if (parse_size(argv[optind + 1], &cols, &rows) < 0)
        return cli_usage_error(v, "size wants COLSxROWS, e.g. 120x40 (each 1..1000)");
    json_t *r = cli_request(json_pack("{s:s, s:i, s:i, s:i}", "cmd", "resize", "session", (int)id, "cols", cols,
                               "rows", rows));
    if (!r)
        return EXIT_ERR;
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_resize = {
    .name = "resize",
    .usage = "resize ID COLSxROWS",
    .help = "Resize a session's terminal.\n",
    .run = verb_resize,
};

static int verb_sandbox(const cli_verb *v, int argc, char **argv)
{
    return cli_sandbox(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_sandbox = {
    .name = "sandbox",
    .usage = "sandbox [--profile P] [-w PATH]... [-r PATH]... [--deny PATH]... [--net off|proxy|full] [--print-plan] "
             "[--allow-home-workspace] [-C DIR] -- CMD [ARG...]",
    .help = "Run one command in corral's sandbox, without a server: standard input and\n"
            "output pass straight through; the exit status is the command's (128+N for\n"
            "signal N; 125 when corral itself fails).\n\n"
            "  -p, --profile P     read-only, workspace-write (default), full (no sandbox),\n"
            "                      or a [profile \"P\"] section of the config file\n"
            "  -w, --write PATH    also writable\n"
            "  -r, --read PATH     also readable (with an empty root, :minimal)\n"
            "  -d, --deny PATH     hidden: an empty, unreadable directory or file\n"
            "      --net MODE      off (default): a network namespace with loopback only;\n"
            "                      full: the host's network (proxy needs the server)\n"
            "  -C, --directory DIR the workspace and working directory (default: here)\n"
            "      --allow-home-workspace  allow a writable workspace or write root that is\n"
            "                      your home directory, / or above it\n"
            "      --print-plan    print what would be done (mounts in order, namespaces,\n"
            "                      filter, limits, environment) and exit\n\n"
            "Deny beats write beats read; the more specific path wins.  See docs/sandbox.md.\n",
    .run = verb_sandbox,
};

static int verb_policy(const cli_verb *v, int argc, char **argv)
{
    return cli_policy(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_policy = {
    .name = "policy",
    .usage = "policy check [--rules F]... [--pretty] [--resolve-host-executables] -- CMD...",
    .help = "Print what the exec-policy rules in the files F decide for a command, exactly\n"
            "as 'codex execpolicy check' does: one JSON line with every matching prefix\n"
            "rule, in order, and the strictest decision (forbidden > prompt > allow);\n"
            "{\"matchedRules\":[]} when none matches.  The command is matched as given\n"
            "(no shell parsing).  A rules file with an error is reported as FILE:LINE:COLUMN\n"
            "and exits 1.  See corral.rules(5).\n\n"
            "  -r, --rules F                 a rules file (required; repeatable, loaded in order)\n"
            "      --pretty                  indented JSON\n"
            "      --resolve-host-executables  an absolute program without rules of its own\n"
            "                                uses its basename's, as host_executable() allows\n",
    .run = verb_policy,
};

static int verb_trust(const cli_verb *v, int argc, char **argv)
{
    return cli_trust(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_trust = {
    .name = "trust",
    .usage = "trust DIR | trust --list | trust --remove DIR",
    .help = "Trust a workspace: commands run in DIR (exactly; not its subdirectories) are\n"
            "also judged by the rules in DIR/.corral/rules/*.rules, loaded after your own.\n"
            "Trust only a directory whose rules you have read.  Trust is pinned to\n"
            "DIR/.corral/rules as they are now: any change stops them loading until you\n"
            "run corral trust DIR again.  The list is kept in ~/.config/corral/trusted;\n"
            "a running server picks changes up at once.\n\n"
            "  -l, --list      print each trusted directory and whether its rules are\n"
            "                  still the ones trusted\n"
            "  -r, --remove    stop trusting DIR\n",
    .run = verb_trust,
};

static int verb_approvals(const cli_verb *v, int argc, char **argv)
{
    return cli_approvals(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_approvals = {
    .name = "approvals",
    .usage = "approvals [--json]",
    .help = "List the requests waiting for approval, oldest first: id, who asks, age,\n"
            "the whole command (shell-quoted, never cut; invisible characters escaped as\n"
            "in bash's $'...'), its kind, directory and permissions (and whether it runs\n"
            "OUTSIDE the sandbox), why the policy asks and the agent's reason.\n",
    .run = verb_approvals,
};

static int verb_approve(const cli_verb *v, int argc, char **argv)
{
    return cli_approve(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_approve = {
    .name = "approve",
    .usage = "approve [--session | --persist] ID",
    .help = "Approve request ID: once (default), --session (this exact request for the rest\n"
            "of the requester's session), or --persist (and save a prefix_rule in\n"
            "~/.config/corral/rules/default.rules).  For a network host: once is this\n"
            "connection, --session the host (protocol and port) for the session, --persist\n"
            "saves network_rule(host=..., decision=\"allow\").  The first answer wins.\n",
    .run = verb_approve,
};

static int verb_deny(const cli_verb *v, int argc, char **argv)
{
    return cli_deny(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_deny = {
    .name = "deny",
    .usage = "deny [--note TEXT] [--stop] [--persist] ID",
    .help = "Deny request ID; --note tells the agent what to do instead; --stop also ends\n"
            "what asked (a command from inside a session).  For a network host, --persist\n"
            "also denies it for the session and saves network_rule(host=...,\n"
            "decision=\"deny\") in ~/.config/corral/rules/default.rules.  Options may\n"
            "follow the ID.\n",
    .run = verb_deny,
};

static int verb_escalate(const cli_verb *v, int argc, char **argv)
{
    return cli_escalate(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_escalate = {
    .name = "escalate",
    .usage = "escalate [-w PATH]... [--net] [--reason TEXT] -- CMD [ARG...]",
    .help = "Inside a corral session: ask the user to run CMD outside the session's\n"
            "sandbox, or with -w/--net in a wider one.  The request goes to the supervisor\n"
            "screen (or corral approvals) over the session's channel; once approved CMD\n"
            "runs with this terminal as its stdin, stdout and stderr, and corral escalate\n"
            "exits with its status.  Denied or refused: exit 126 with the reason (and the\n"
            "user's note).\n\n"
            "  -w, --write PATH   also writable (repeatable)\n"
            "  -N, --net          with network access\n"
            "  -r, --reason TEXT  why, shown to the user\n",
    .run = verb_escalate,
};

static int verb_replay(const cli_verb *v, int argc, char **argv)
{
    return cli_replay(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_replay = {
    .name = "replay",
    .usage = "replay [--speed X] [--idle-limit S] [--from N] SESSION|FILE.cast|FILE.tar.gz",
    .help = "Play a session's recording (its output.cast, which stays after the session\n"
            "and the server are gone), a .cast file, or a corral export in the terminal,\n"
            "through corral's own terminal model: the recorded program's escape sequences\n"
            "never reach your terminal (no title, clipboard, mode or query), only its\n"
            "screen, drawn by corral.  Pauses longer than the idle limit are cut.  While\n"
            "it plays: space pauses, + and - change the speed, n and p jump to the next\n"
            "and previous command, q quits.  To a pipe, or with --speed 0, it prints only\n"
            "the screen as the recording ends (as text to a pipe, like corral screen).\n\n"
            "  -s, --speed X       play X times as fast (default 1); 0: the end at once\n"
            "  -i, --idle-limit S  cut pauses to S seconds (default: the recording's\n"
            "                      idle_time_limit, else 2); 0 keeps every pause\n"
            "  -f, --from N        start where command N starts (its \"cmd N:\" marker),\n"
            "                      with the screen as it was there\n"
            "SESSION is an id from corral ls (ID.N for an older session's recording kept\n"
            "under that id); a file named like an id is given as ./NAME.\n",
    .run = verb_replay,
};

static int verb_demo(const cli_verb *v, int argc, char **argv)
{
    return cli_demo(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_demo = {
    .name = "demo",
    .usage = "demo [--theme NAME]",
    .help = "Start a few scripted sessions that show what corral does (live output, a\n"
            "long-running process, a failing command, a shell to type into, an agent's\n"
            "processes grouped apart from yours) in a scratch workspace, then open the\n"
            "supervisor screen on them.  q detaches; corral kill or x ends them.  Without\n"
            "a terminal it only starts them (corral attach shows them later).\n",
    .run = verb_demo,
};

static int verb_doctor(const cli_verb *v, int argc, char **argv)
{
    return cli_doctor(argc, argv, v->usage, v->help);
}

const cli_verb cli_verb_doctor = {
    .name = "doctor",
    .usage = "doctor",
    .help = "Print what this kernel supports for the sandbox (user and network namespaces,\n"
            "seccomp, the Landlock ABI, cgroup delegation, TIOCSTI), try a real sandbox,\n"
            "and say what corral will therefore enforce.  Then list the exec-policy rules\n"
            "files a command run here would be judged by (built-in, yours, this\n"
            "workspace's when trusted), each with its FILE:LINE:COLUMN error if it has\n"
            "one.  Exits 1 when sandboxes cannot run here (corral then refuses to start\n"
            "sandboxed commands) or a rules file cannot be loaded.\n",
    .run = verb_doctor,
};

static int verb_version(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {HELP_OPTION, {0}};
    int o;
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (o == 'h')
            return cli_print_help(v);
        return cli_option_usage(v);
    }
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

/* ---- mcp ------------------------------------------------------------------------- */

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

/* ---- the table -------------------------------------------------------------------- */

static cli_tui_fn tui_fn;

void cli_set_tui(cli_tui_fn fn)
{
    tui_fn = fn;
}

int cli_run_tui(const tui_options *opt)
{
    if (!tui_fn) {
        fprintf(stderr, "corral: this build has no supervisor screen\n");
        return 1;
    }
    return tui_fn(opt);
}

static int verb_attach(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"theme", required_argument, NULL, 'T'}, HELP_OPTION, {0}};
    tui_options o = {0};
    int ch;
    while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (ch) {
        case 'T': o.theme = optarg; break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    long id = 0;
    if (optind < argc && cli_parse_session_id(v, argv[optind], &id))
        return EXIT_USAGE;
    if (optind + 1 < argc)
        return cli_usage_error(v, "one session id at most");
    o.attach_id = (int)id;
    return cli_run_tui(&o);
}

const cli_verb cli_verb_attach = {
    .name = "attach",
    .usage = "attach [--theme NAME] [ID]",
    .help = "Open the supervisor screen (what plain 'corral' does on a terminal), starting\n"
            "the server if none runs.  With ID: that session zoomed, in pane focus.\n"
            "q detaches (sessions keep running); ? lists the keys.\n",
    .run = verb_attach,
};

/* ---- verbs in files of their own -------------------------------------------------- */

static int verb_diff(const cli_verb *v, int argc, char **argv)
{
    return cli_diff(argc, argv);
}

const cli_verb cli_verb_diff = {.name = "diff", .usage = CLI_DIFF_USAGE, .help = CLI_DIFF_HELP, .run = verb_diff};

static int verb_revert(const cli_verb *v, int argc, char **argv)
{
    return cli_revert(argc, argv);
}

const cli_verb cli_verb_revert = {
    .name = "revert", .usage = CLI_REVERT_USAGE, .help = CLI_REVERT_HELP, .run = verb_revert};

static int verb_gc(const cli_verb *v, int argc, char **argv)
{
    return cli_gc(argc, argv);
}

const cli_verb cli_verb_gc = {.name = "gc", .usage = CLI_GC_USAGE, .help = CLI_GC_HELP, .run = verb_gc};

static int verb_git_restore(const cli_verb *v, int argc, char **argv)
{
    return cli_git_restore(argc, argv);
}

const cli_verb cli_verb_git_restore = {
    .name = "git-restore", .usage = CLI_GIT_RESTORE_USAGE, .help = CLI_GIT_RESTORE_HELP, .run = verb_git_restore};

static int verb_log(const cli_verb *v, int argc, char **argv)
{
    return cli_log(argc, argv);
}

const cli_verb cli_verb_log = {.name = "log", .usage = CLI_LOG_USAGE, .help = CLI_LOG_HELP, .run = verb_log};

static int verb_export(const cli_verb *v, int argc, char **argv)
{
    return cli_export(argc, argv);
}

const cli_verb cli_verb_export = {
    .name = "export", .usage = CLI_EXPORT_USAGE, .help = CLI_EXPORT_HELP, .run = verb_export};

/* The shell hooks' verbs: internal, never listed; their usage is said by
 * the functions themselves. */
static int verb_hook_check(const cli_verb *v, int argc, char **argv)
{
    return cli_hook_check(argc, argv);
}

const cli_verb cli_verb_hook_check = {.name = "__hook-check", .usage = "", .help = "", .run = verb_hook_check};

static int verb_hook_mark(const cli_verb *v, int argc, char **argv)
{
    return cli_hook_mark(argc, argv);
}

const cli_verb cli_verb_hook_mark = {.name = "__hook-mark", .usage = "", .help = "", .run = verb_hook_mark};

/* The verbs, in the order corral --help lists them. */
extern const cli_verb cli_verb_server, cli_verb_ls, cli_verb_new, cli_verb_exec, cli_verb_send, cli_verb_poll,
    cli_verb_screen, cli_verb_replay, cli_verb_kill, cli_verb_pin, cli_verb_rm, cli_verb_resize, cli_verb_sandbox,
    cli_verb_doctor, cli_verb_policy, cli_verb_trust, cli_verb_version, cli_verb_approvals, cli_verb_approve,
    cli_verb_deny, cli_verb_escalate, cli_verb_demo, cli_verb_diff, cli_verb_revert, cli_verb_gc,
    cli_verb_git_restore, cli_verb_log, cli_verb_export, cli_verb_mcp, cli_verb_attach;

static const cli_verb *const verbs[] = {
    &cli_verb_server,
    &cli_verb_ls,
    &cli_verb_new,
    &cli_verb_exec,
    &cli_verb_send,
    &cli_verb_poll,
    &cli_verb_screen,
    &cli_verb_replay,
    &cli_verb_kill,
    &cli_verb_pin,
    &cli_verb_rm,
    &cli_verb_resize,
    &cli_verb_sandbox,
    &cli_verb_doctor,
    &cli_verb_policy,
    &cli_verb_trust,
    &cli_verb_version,
    &cli_verb_approvals,
    &cli_verb_approve,
    &cli_verb_deny,
    &cli_verb_escalate,
    &cli_verb_demo,
    &cli_verb_diff,
    &cli_verb_revert,
    &cli_verb_gc,
    &cli_verb_git_restore,
    &cli_verb_log,
    &cli_verb_export,
    &cli_verb_mcp,
    &cli_verb_attach,
};

/* The shell hooks' verbs (src/shell/): internal, never listed. */
static const cli_verb *const internal_verbs[] = {&cli_verb_hook_check, &cli_verb_hook_mark};

static void main_usage(FILE *f)
{
    fprintf(f, "usage: corral [VERB [ARGS...]]\n\n"
               "corral supervises AI-agent shells: sandboxed terminal sessions you can watch,\n"
               "approve and review.  Verbs:\n\n");
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        fprintf(f, "  corral %s\n", verbs[i]->usage);
    fprintf(f, "\nWithout a verb: the supervisor screen (attach) on a terminal, else the list (ls).\n"
               "'corral VERB --help' explains a verb; see corral(1).\n");
}

static const cli_verb *find_verb(const char *name)
{
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (strcmp(name, verbs[i]->name) == 0)
            return verbs[i];
    for (size_t i = 0; i < sizeof internal_verbs / sizeof *internal_verbs; i++)
        if (strcmp(name, internal_verbs[i]->name) == 0)
            return internal_verbs[i];
    return NULL;
}

/* Hand argv (argv[0] the verb's name) over to the verb. */
static int run_verb(const cli_verb *v, int argc, char **argv)
{
    optind = 0; /* reset getopt for the verb's own options */
    opterr = 1;
    /* getopt prefixes its messages with argv[0]: make them say
     * "corral ls: unrecognized option", not "ls: ...". */
    static char prog[64];
    snprintf(prog, sizeof prog, "corral %s", v->name);
    argv[0] = prog;
    return v->run(v, argc, argv);
}

int cli_main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--theme") == 0) {
        tui_options o = {.theme = argv[2]};
        if (argc > 3) {
            fprintf(stderr, "corral: --theme goes with the supervisor screen only: corral --theme NAME, or "
                            "corral attach --theme NAME ID\n");
            return EXIT_USAGE;
        }
        return cli_run_tui(&o);
    }
    if (argc < 2 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
        tui_options o = {0};
        return cli_run_tui(&o);
    }
    if (argc < 2) { /* not on a terminal: the list, for scripts */
        char *args[] = {"ls", NULL};
        return run_verb(&cli_verb_ls, 1, args);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        main_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("%s\n", PACKAGE_STRING);
        return 0;
    }
    const cli_verb *v = find_verb(argv[1]);
    if (v)
        return run_verb(v, argc - 1, argv + 1);
    fprintf(stderr, "corral: unknown verb '%s'\n\n", argv[1]);
    main_usage(stderr);
    return EXIT_USAGE;
}
