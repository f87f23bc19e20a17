/*
 * cli_exec.c - the verbs that run commands the way an agent's tools do:
 * `corral exec` (exec_command), `corral send` and `corral poll`
 * (write_stdin), each printing the reply envelope or, with exec --raw, the
 * output itself.  Each verb is one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "protocol/proto.h"
#include "base/quote.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- exec ----------------------------------------------------------------------- */

static void on_raw_event(json_t *ev, void *user)
{
    cli_out *st = user;
    const char *kind = json_string_value(json_object_get(ev, "event"));
    if (cli_notice(ev, kind))
        return;
    if (!kind || strcmp(kind, "output") != 0 || st->broken)
        return;
    json_t *d = json_object_get(ev, "data_b64");
    size_t n;
    char *bytes = base64_decode(json_string_value(d), json_string_length(d), &n);
    if (bytes)
        cli_out_write(st, bytes, n, false);
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
        if (sr < 0)
            return EXIT_USAGE;
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
            if (cli_remote() && optarg[0] != '/')
                return cli_usage_error(v, "--add-write '%s': under -H a path is the other machine's: give it as "
                                          "an absolute path there", optarg);
            char *abs = cli_remote() ? NULL : realpath(optarg, NULL);
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
    if (cli_workdir_field(req, "workdir", dir) < 0) {
        json_decref(req);
        return err_status;
    }
    if (shell_cmd) {
        json_t *s = json_string(shell_cmd);
        if (!s) {
            json_decref(req);
            fprintf(stderr, "corral: the command is not valid UTF-8\n");
            return err_status;
        }
        json_object_set_new(req, "command", s);
    } else {
        json_t *a = cli_argv_to_json(argc - optind, argv + optind);
        if (!a) {
            json_decref(req);
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
    cli_out st;
    cli_out_init(&st);
    json_t *r = client_call(&c, req, raw ? on_raw_event : on_exec_event, &st, err, sizeof err);
    client_close(&c);
    if (raw)
        cli_out_write(&st, "", 0, true); /* a character the stream ended inside */
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
        cli_out_text(json_object_get(r, "text"), true);
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
            "  -C, --directory DIR   working directory (default: the current directory;\n"
            "                        under -H, the other machine's home, or DIR there)\n"
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
    .where = CLI_REMOTE,
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
    cli_out_text(json_object_get(r, "text"), true);
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
    .where = CLI_REMOTE,
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
    .where = CLI_REMOTE,
};

