/*
 * cli_verb.c - what the verbs share (cli_verb.h): usage messages, the
 * options and arguments several verbs take (with the sandbox options of new
 * and exec), calls to the server, and the hand-off to the supervisor
 * screen.  Part of the CLI (src/cli/); its header is for src/cli/ only.
 */
#include "config.h"

#include "cli/cli_verb.h"

#include "cli/cli.h"
#include "config/conf.h"
#include "base/exitcode.h"
#include "base/paths.h"
#include "policy/policy.h"
#include "base/quote.h"
#include "base/util.h"
#include "protocol/remote.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_usage_line(const cli_verb *v)
{
    fprintf(stderr, "usage: corral %s\n", v->usage);
    return EXIT_USAGE;
}

/* getopt has said which option and why, as "corral VERB: unrecognized
 * option '--x'" (cli_main names the verb in argv[0] for it), so only the
 * usage follows. */
int cli_option_usage(const cli_verb *v)
{
    cli_usage_line(v);
    fprintf(stderr, "Try 'corral %s --help'.\n", v->name);
    return EXIT_USAGE;
}

int cli_usage_error(const cli_verb *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral %s: ", v->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return cli_option_usage(v);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "corral: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_ERR;
}

int cli_print_help(const cli_verb *v)
{
    printf("usage: corral %s\n\n%s", v->usage, v->help);
    return 0;
}

const char *cli_client_name(void)
{
    const char *n = getenv("CORRAL_CLIENT");
    return n && *n ? n : "user";
}

/* Connect (starting a server if needed); prints the error.  The hello
 * reply is read with the first call's. */
int cli_connect(client_t *c, bool autostart)
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
bool cli_notice(json_t *ev, const char *kind)
{
    if (!kind || !json_is_string(json_object_get(ev, "message")))
        return false;
    bool warning = strcmp(kind, "warning") == 0;
    if (!warning && strcmp(kind, "approval_pending") != 0)
        return false;
    /* It quotes a command and its session's name: made visible. */
    char *msg = client_field(ev, "message", NULL);
    fprintf(stderr, "corral: %s%s\n", warning ? "warning: " : "", msg);
    free(msg);
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

int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_session_id(const cli_verb *v, const char *s, long *id)
{
    if (cli_parse_int(s, 0, INT32_MAX, id) < 0)
        return cli_usage_error(v, "'%s' is not a session id (a number, see corral ls)", s);
    return 0;
}

int cli_only_help(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {HELP_OPTION, {0}};
    int o = getopt_long(argc, argv, "+h", opts, NULL);
    if (o == -1)
        return -1;
    return o == 'h' ? cli_print_help(v) : cli_option_usage(v);
}

json_t *cli_argv_to_json(int argc, char **argv)
{
    json_t *a = json_array();
    for (int i = 0; i < argc; i++) {
        json_t *s = json_string(argv[i]);
        if (!s) {
            fprintf(stderr, "corral: argument %d is not valid UTF-8\n", i + 1);
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, s);
    }
    return a;
}

char *cli_workdir(const char *dir)
{
    if (!dir) {
        char *d = getcwd(NULL, 0);
        return d ? d : xstrdup(paths_home());
    }
    char *d = realpath(dir, NULL);
    if (!d)
        fprintf(stderr, "corral: cannot use directory '%s': %s\n", dir, strerror(errno));
    return d;
}

bool cli_remote(void)
{
    return remote_get() != NULL;
}

int cli_workdir_field(json_t *req, const char *field, const char *dir)
{
    if (cli_remote()) {
        if (!dir)
            return 0; /* the server's default */
        if (dir[0] != '/') {
            char *shown = quote_text_visible(dir, strlen(dir));
            fprintf(stderr, "corral: -C '%s': under -H a directory is the other machine's: give it as an absolute "
                            "path there\n", shown);
            free(shown);
            return -1;
        }
        json_t *d = json_string(dir);
        if (!d) {
            fprintf(stderr, "corral: -C: the directory is not valid UTF-8\n");
            return -1;
        }
        json_object_set_new(req, field, d);
        return 0;
    }
    char *cwd = cli_workdir(dir);
    if (!cwd)
        return -1;
    json_object_set_new(req, field, json_string(cwd));
    free(cwd);
    return 0;
}

void cli_print_json(json_t *j, size_t flags)
{
    /* Whatever the server sent in its place (another machine's may send a
     * string or nothing where a list belongs). */
    char *s = j ? json_dumps(j, flags | JSON_ENCODE_ANY) : NULL;
    if (!s)
        s = xstrdup("null");
    buf_t b;
    buf_init(&b);
    quote_json_append(&b, s, strlen(s));
    buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, stdout);
    buf_free(&b);
    free(s);
}

void cli_out_init(cli_out *o)
{
    *o = (cli_out){.tty = isatty(STDOUT_FILENO) == 1};
}

void cli_out_write(cli_out *o, const char *s, size_t len, bool final)
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

void cli_out_text(json_t *text, bool end_line)
{
    cli_out o;
    cli_out_init(&o);
    fflush(stdout);
    size_t n = json_string_length(text);
    const char *s = json_string_value(text);
    cli_out_write(&o, s ? s : "", n, true);
    if (end_line && (n == 0 || s[n - 1] != '\n'))
        cli_out_write(&o, "\n", 1, true);
}

static int take_sandbox_opt(const cli_verb *v, cli_sandbox_opts *so, int o, const char *arg)
{
    json_t **list = o == 'w' ? &so->write : o == 'R' ? &so->read : o == 'D' ? &so->deny : NULL;
    if (list) {
        bool as_is = arg[0] == '/' || arg[0] == '~' || arg[0] == ':';
        if (!as_is && cli_remote()) {
            cli_usage_error(v, "'%s': under -H a path is the other machine's: give it as an absolute path there", arg);
            return -1;
        }
        char *abs = as_is ? xstrdup(arg) : realpath(arg, NULL);
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

void cli_sandbox_opts_apply(cli_sandbox_opts *so, json_t *req)
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

static void sandbox_opts_free(cli_sandbox_opts *so)
{
    json_decref(so->write);
    json_decref(so->read);
    json_decref(so->deny);
}

int cli_sandbox_opt(const cli_verb *v, cli_sandbox_opts *so, int o, const char *arg)
{
    int taken = take_sandbox_opt(v, so, o, arg);
    if (taken < 0)
        sandbox_opts_free(so);
    return taken;
}

int cli_load_conf(conf_t *c, const char *verb, const char *const *sections)
{
    conf_errors e = {0};
    conf_load_user_all(c, &e, NULL);
    /* Every error at once (not one a run); only those in what this verb
     * reads stop it, the others are said so that they get fixed. */
    for (size_t i = 0; i < e.n; i++)
        fprintf(stderr, "corral: %s\n", e.text[i]);
    size_t mine = conf_errors_read_by(&e, sections);
    if (e.n && !mine)
        fprintf(stderr, "corral: (corral %s does not read %s; it goes on)\n", verb,
                e.n == 1 ? "that setting" : "those settings");
    conf_errors_free(&e);
    return mine ? -1 : 0;
}

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

