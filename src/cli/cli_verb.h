/*
 * cli_verb.h - one verb of the command line (corral VERB, docs/corral.1):
 * the entry each verb exports, and what the verbs share.  Every verb,
 * wherever its code lives, is one const cli_verb; cli.c lists the entries
 * in the order corral --help shows them, finds the one named and runs it.
 * Included by the files of src/cli/ only.
 */
#ifndef CORRAL_CLI_VERB_H
#define CORRAL_CLI_VERB_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>

#include "base/quote.h"
#include "protocol/client.h"
#include "ui/tui.h"

/* What a verb does under corral -H HOST (or CORRAL_HOST): cli_host.c. */
enum cli_where {
    CLI_HERE = 0,  /* this machine's only (its config, sandbox, files): refused under -H and CORRAL_HOST */
    CLI_REMOTE,    /* asks the server only: runs against HOST's server */
    CLI_FILES,     /* reads the records: under -H, HOST's, copied first (cli_records.c) */
    CLI_SCREEN,    /* the supervisor screen: not yet over -H, refused saying so */
    CLI_LOCAL,     /* always this machine's (a server, serve-stdio, what runs in a session): refused
                    * under -H, and CORRAL_HOST is not for it */
};

typedef struct cli_verb cli_verb;
struct cli_verb {
    const char *name;  /* corral NAME */
    const char *usage; /* the usage line, after "usage: corral " */
    const char *help;  /* --help's text, after the usage line and a blank line */
    /* The verb itself: argv[0] is "corral NAME" (getopt names the verb in
     * its messages with it) and getopt is reset for the verb's own options.
     * Returns the exit status (base/exitcode.h). */
    int (*run)(const cli_verb *v, int argc, char **argv);
    enum cli_where where; /* under corral -H */
};

/* The verbs corral --help lists, in its order (cli.c). */
const cli_verb *const *cli_verbs(size_t *n);

/* ---- usage ---------------------------------------------------------------------- */

/* "usage: corral USAGE" on stderr; returns EXIT_USAGE.  For a message that
 * says the rest itself. */
int cli_usage_line(const cli_verb *v);
/* After getopt refused an option (it said which): the usage line and where
 * to read more; returns EXIT_USAGE. */
int cli_option_usage(const cli_verb *v);
/* "corral VERB: MESSAGE", then the usage; returns EXIT_USAGE. */
int cli_usage_error(const cli_verb *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* --help: the usage line and the help text on stdout; returns 0. */
int cli_print_help(const cli_verb *v);
/* "corral: MESSAGE" on stderr; returns EXIT_ERR. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- options and arguments ------------------------------------------------------ */

/* -h/--help, in every verb's options. */
#define HELP_OPTION {"help", no_argument, NULL, 'h'}

/* A whole number from lo to hi; -1 if s is not one. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
/* A session id (as corral ls shows it); a usage error if s is not one. */
int cli_parse_session_id(const cli_verb *v, const char *s, long *id);
/* The options of a verb that takes none but --help.  Returns -1 to go on
 * (argv[optind] is the first argument), else the verb's exit status: 0
 * after --help, EXIT_USAGE after an option getopt refused. */
int cli_only_help(const cli_verb *v, int argc, char **argv);
/* argv as a JSON array of strings; NULL when an argument is not valid
 * UTF-8 (said on stderr). */
json_t *cli_argv_to_json(int argc, char **argv);
/* Where a command of new or exec runs: dir made absolute, else the current
 * directory (else the home directory).  NULL when dir cannot be used (said
 * on stderr).  Caller frees. */
char *cli_workdir(const char *dir);
/* Put where a command runs into req's field: cli_workdir's; under -H
 * (cli_remote) dir as it is (an absolute path on that machine) or, with no
 * dir, nothing (the server's default, its home directory), since this
 * machine's current directory means nothing there.  0, or -1 (said on
 * stderr). */
int cli_workdir_field(json_t *req, const char *field, const char *dir);

/* ---- another machine (corral -H, cli_host.c) ------------------------------------ */

/* Take the global options before the verb (-H HOST, --host HOST) from
 * argv (argv[0] is corral's name): *skip is how many words they were.  -1
 * to go on, or an exit status after saying what was wrong. */
int cli_host_options(int argc, char **argv, int *skip, const char **host);
/* Before verb v (NULL: the supervisor screen) runs: with host (-H) or
 * CORRAL_HOST, resolve it ([hosts] names) and point every connection of
 * this process at it (protocol/remote.h), or refuse v there.  -1 to go on,
 * else the exit status after saying why not. */
int cli_host_prepare(const cli_verb *v, const char *host);
/* The machine corral -H (or CORRAL_HOST) adds to the supervisor screen,
 * as cli_host_prepare found it: its name and ssh:// URL, or NULLs. */
void cli_screen_host(const char **name, const char **url);
/* Whether the verb runs against another machine's server (cli_host_prepare
 * pointed the connections there). */
bool cli_remote(void);

/* ---- output --------------------------------------------------------------------- */

/* j as JSON (json_dumps flags) on stdout, and a newline: its DEL, C1 and
 * invisible characters as \u escapes (quote.h), since what the server says
 * quotes sessions and the requests from inside them.  NULL (a member the
 * server left out) is null. */
void cli_print_json(json_t *j, size_t flags);

/* A session's output (exec, send, poll, screen) goes to stdout byte for
 * byte when stdout is a pipe or a file; on a terminal its control
 * characters are made visible first (as cat -v shows them, but for
 * newline, tab and carriage return), so that what a command prints, or
 * what another machine's server (-H) says it printed, cannot act on the
 * user's terminal: an OSC 52 would write their clipboard, an OSC 0 their
 * title, and a DECRQSS or CSI 21t makes the terminal answer into its own
 * input, as if typed. */
typedef struct cli_out {
    bool tty;        /* stdout is a terminal */
    quote_catv catv; /* a character split between two writes */
    bool broken;     /* stdout went away */
} cli_out;
void cli_out_init(cli_out *o);
/* Write a session's output to stdout (final: nothing follows). */
void cli_out_write(cli_out *o, const char *s, size_t len, bool final);
/* A reply's "text" (an exec envelope, a screen), whole; end_line: ending
 * in a newline, added when it has none.  Not a string: as "". */
void cli_out_text(json_t *text, bool end_line);

/* ---- the sandbox options of new and exec ---------------------------------------- */

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

/* Take option o (getopt's value for it, with its argument) if it is one of
 * the sandbox options: 1 if it was, 0 if not, -1 on a bad value (said as a
 * usage error; the options are freed, the verb exits EXIT_USAGE). */
int cli_sandbox_opt(const cli_verb *v, cli_sandbox_opts *so, int o, const char *arg);
/* Put the options into the request (which takes the path lists). */
void cli_sandbox_opts_apply(cli_sandbox_opts *so, json_t *req);

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

/* ---- the server ----------------------------------------------------------------- */

/* The client name the server is told: $CORRAL_CLIENT, else "user". */
const char *cli_client_name(void);
int cli_connect(client_t *c, bool autostart);
bool cli_notice(json_t *ev, const char *kind);
/* Make a call on c; on a connection failure or an error reply print it
 * ("corral: ...") and return NULL. */
json_t *cli_call(client_t *c, json_t *req);
/* One request to the server (started when none answers) on a connection of
 * its own, closed after; req is consumed.  The reply, or NULL when it
 * failed (said on stderr). */
json_t *cli_request(json_t *req);

/* ---- the config and the screen -------------------------------------------------- */

/* The config file over the defaults, its lines with errors left out; every
 * error printed.  -1 when one is in a section verb reads (NULL-ended
 * sections: conf_errors_read_by), else 0. */
struct conf;
int cli_load_conf(struct conf *c, const char *verb, const char *const *sections);
/* The supervisor screen, as main.c handed it over (cli.h). */
int cli_run_tui(const tui_options *opt);

#endif
