/*
 * cli_sessions.c - the verbs about the sessions in the server's store:
 * `corral ls`, `new`, `screen`, `kill`, `pin`, `rm`, `resize`, and `attach`
 * (the supervisor screen on them).  Each verb is one entry (cli_verb.h)
 * that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "base/quote.h"
#include "base/util.h"
#include "base/width.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

/* text (from a session, the config, or another machine's server) in a
 * column of w terminal columns: its control and invisible characters made
 * visible (client_visible), cut to whole characters that fit, padded with
 * spaces, as wide as w on screen whatever its characters' widths (CJK
 * takes two columns each, printf's %-16s counts bytes).  Caller frees. */
static char *column(const char *text, int w)
{
    /* Only the start can show: a huge string is not escaped whole. */
    size_t len = text ? strnlen(text, 4096) : 0;
    char *clean = quote_text_visible(text ? text : "", len);
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
        /* A session you killed, or the server's stop ended, is no failure. */
        const char *by = json_string_value(json_object_get(s, "killed_by"));
        const char *st = json_string_value(json_object_get(s, "status"));
        char *status = column(by && strcmp(by, "user") == 0       ? "killed by you"
                              : by && strcmp(by, "shutdown") == 0 ? "server stopped"
                                                                  : st,
                              14);
        /* "full" is no sandbox at all: red, so it is never missed. */
        const char *profile = json_string_value(json_object_get(s, "profile"));
        char *prof = column(profile, 15);
        bool full = profile && strcmp(profile, "full") == 0 && color;
        printf("%-6lld %s %s %s%s%s %s %-5s %s%s\n", (long long)json_integer_value(json_object_get(s, "id")), name,
               status, full ? "\033[1;31m" : "", prof, full ? "\033[0m" : "", client, age, shown,
               json_is_true(json_object_get(s, "pinned")) ? "  [pinned]" : "");
        /* A request of it waits (its program is silent meanwhile): say for
         * what, and how to answer, with no screen needed. */
        json_t *wait = json_object_get(s, "waiting");
        if (wait) {
            long long aid = (long long)json_integer_value(json_object_get(wait, "approval"));
            char *summary = client_field(wait, "summary", "?");
            char *what = quote_shorten(summary, 400);
            printf("       waits for an answer to request %lld: %s (corral approve %lld, corral deny %lld)\n", aid,
                   what, aid, aid);
            free(what);
            free(summary);
        }
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
    while ((o = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
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
        cli_print_json(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER); /* an agent's argv, made safe */
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
    .where = CLI_REMOTE,
};

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
        if (sr < 0)
            return EXIT_USAGE;
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
    if (cli_workdir_field(req, "cwd", dir) < 0) {
        json_decref(req);
        return EXIT_ERR;
    }
    if (name)
        json_object_set_new(req, "name", json_string(name));
    if (rows) {
        json_object_set_new(req, "rows", json_integer(rows));
        json_object_set_new(req, "cols", json_integer(cols));
    }
    if (optind < argc) {
        json_t *a = cli_argv_to_json(argc - optind, argv + optind);
        if (!a) {
            json_decref(req);
            return EXIT_ERR;
        }
        json_object_set_new(req, "argv", a);
    }
    json_t *r = cli_request(req);
    if (!r)
        return EXIT_ERR;
    char *warning = client_field(r, "warning", NULL);
    if (warning)
        fprintf(stderr, "corral: warning: %s\n", warning);
    free(warning);
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
            "  -C, --directory DIR   where it starts (default: the current directory;\n"
            "                        under -H, the other machine's home, or DIR there)\n"
            "  -p, --pin             never prune this session from the store\n"
            "  -s, --size COLSxROWS  terminal size (default: this terminal's, else 80x24)\n" SANDBOX_HELP,
    .run = verb_new,
    .where = CLI_REMOTE,
};

/* ---- screen, kill, pin, resize ---------------------------------------------------- */

/* Parse "[options] ID" with only --help and the given flag; returns the
 * index of ID in argv or -1 (status in *rc). */
static int simple_id_verb(const cli_verb *v, int argc, char **argv, const char *flag, bool *flag_set, long *id, int *rc)
{
    struct option opts[] = {{flag ? flag : "no-such-option", no_argument, NULL, 'f'}, HELP_OPTION, {0}};
    int o;
    *rc = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
    /* The session's screen: as exec prints a session's output (raw to a
     * pipe, its control characters made visible on a terminal). */
    cli_out_text(json_object_get(r, "text"), false);
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_screen = {
    .name = "screen",
    .usage = "screen [--history] ID",
    .help = "Print a session's current screen as text, from the server's terminal model\n"
            "(on a terminal, control characters show as cat -v shows them).\n\n"
            "      --history  include the scrollback above the screen\n",
    .run = verb_screen,
    .where = CLI_REMOTE,
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
    char *state = client_field(r, "state", "?");
    char *shown = quote_shorten(state, 200);
    free(state);
    printf("session %ld: %s\n", id, shown);
    free(shown);
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_kill = {
    .name = "kill",
    .usage = "kill ID",
    .help = "End a session's whole process tree and wait until it is gone.\n",
    .run = verb_kill,
    .where = CLI_REMOTE,
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
    .where = CLI_REMOTE,
};

/* corral rm ID... | --exited */
static int verb_rm(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"exited", no_argument, NULL, 'e'}, HELP_OPTION, {0}};
    bool exited = false;
    int o;
    while ((o = getopt_long(argc, argv, "eh", opts, NULL)) != -1) {
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
    .where = CLI_REMOTE,
};

static int verb_resize(const cli_verb *v, int argc, char **argv)
{
    int rc = cli_only_help(v, argc, argv);
    if (rc >= 0)
        return rc;
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
    .where = CLI_REMOTE,
};

static int verb_attach(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"theme", required_argument, NULL, 'T'}, HELP_OPTION, {0}};
    tui_options o = {0};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
    cli_screen_host(&o.host_name, &o.host); /* corral -H HOST attach: that machine too */
    return cli_run_tui(&o);
}

const cli_verb cli_verb_attach = {
    .name = "attach",
    .usage = "attach [--theme NAME] [ID]",
    .help = "Open the supervisor screen (what plain 'corral' does on a terminal), starting\n"
            "the server if none runs.  With ID: that session zoomed, in pane focus.\n"
            "q detaches (sessions keep running); ? lists the keys.\n",
    .run = verb_attach,
    .where = CLI_SCREEN,
};

