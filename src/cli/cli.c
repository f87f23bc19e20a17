/*
 * cli.c - corral's command line (docs/corral.1): the table of verbs, in the
 * order corral --help lists them, the lookup of the one named, --help, and
 * the hand-off to it.  Each verb is one entry (cli_verb.h) exported by the
 * file that holds its code; exit statuses are base/exitcode.h's.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "base/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The entries, by the file that holds each verb. */
extern const cli_verb cli_verb_server, cli_verb_reload, cli_verb_version; /* cli_server.c */
extern const cli_verb cli_verb_ls, cli_verb_new, cli_verb_screen, cli_verb_kill, cli_verb_pin, cli_verb_rm,
    cli_verb_resize, cli_verb_attach; /* cli_sessions.c */
extern const cli_verb cli_verb_exec, cli_verb_send, cli_verb_poll; /* cli_exec.c */
extern const cli_verb cli_verb_replay; /* cli_replay.c */
extern const cli_verb cli_verb_sandbox, cli_verb_doctor; /* cli_sandbox.c */
extern const cli_verb cli_verb_policy; /* cli_policy.c */
extern const cli_verb cli_verb_trust; /* cli_trust.c */
extern const cli_verb cli_verb_approvals, cli_verb_approve, cli_verb_deny; /* cli_approvals.c */
extern const cli_verb cli_verb_escalate, cli_verb_hook_check; /* cli_escalate.c */
extern const cli_verb cli_verb_demo; /* cli_demo.c */
extern const cli_verb cli_verb_diff, cli_verb_revert, cli_verb_gc, cli_verb_git_restore,
    cli_verb_hook_mark; /* cli_snap.c */
extern const cli_verb cli_verb_log; /* cli_log.c */
extern const cli_verb cli_verb_export; /* cli_export.c */
extern const cli_verb cli_verb_mcp; /* cli_mcp.c */
extern const cli_verb cli_verb_serve_stdio; /* cli_host.c */

/* The verbs, in the order corral --help lists them. */
static const cli_verb *const verbs[] = {
    &cli_verb_server,
    &cli_verb_reload,
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
    &cli_verb_serve_stdio,
    &cli_verb_attach,
};

extern const cli_verb cli_verb_complete; /* cli_complete.c */

/* The shell hooks' and completions' verbs (src/shell/): internal, never
 * listed. */
static const cli_verb *const internal_verbs[] = {&cli_verb_hook_check, &cli_verb_hook_mark, &cli_verb_complete};

const cli_verb *const *cli_verbs(size_t *n)
{
    *n = sizeof verbs / sizeof *verbs;
    return verbs;
}

static void main_usage(FILE *f)
{
    fprintf(f, "usage: corral [-H HOST] [VERB [ARGS...]]\n\n"
               "corral supervises AI-agent shells: sandboxed terminal sessions you can watch,\n"
               "approve and review.  Verbs:\n\n");
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        fprintf(f, "  corral %s\n", verbs[i]->usage);
    fprintf(f, "\nWithout a verb: the supervisor screen (attach) on a terminal, else the list (ls).\n"
               "-H HOST (or CORRAL_HOST): the verb runs against HOST's server, over ssh; HOST is\n"
               "ssh://[user@]host[:port] or a name of the config's [hosts].\n"
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

/* The verb (NULL: the screen) under -H / CORRAL_HOST, then run. */
static int run_here_or_there(const cli_verb *v, const char *host, int argc, char **argv, const tui_options *o)
{
    int rc = cli_host_prepare(v, host);
    if (rc >= 0)
        return rc;
    if (v)
        return run_verb(v, argc, argv);
    tui_options screen = *o;
    cli_screen_host(&screen.host_name, &screen.host); /* corral -H HOST on a terminal */
    return cli_run_tui(&screen);
}

int cli_main(int argc, char **argv)
{
    const char *host;
    int skip;
    int rc = cli_host_options(argc, argv, &skip, &host);
    if (rc >= 0)
        return rc;
    if (skip) { /* the verb's words follow the global options */
        argv[skip] = argv[0];
        argv += skip;
        argc -= skip;
    }
    if (argc >= 3 && strcmp(argv[1], "--theme") == 0) {
        tui_options o = {.theme = argv[2]};
        if (argc > 3) {
            fprintf(stderr, "corral: --theme goes with the supervisor screen only: corral --theme NAME, or "
                            "corral attach --theme NAME ID\n");
            return EXIT_USAGE;
        }
        return run_here_or_there(NULL, host, 0, NULL, &o);
    }
    if (argc < 2 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
        tui_options o = {0};
        return run_here_or_there(NULL, host, 0, NULL, &o);
    }
    if (argc < 2) { /* not on a terminal: the list, for scripts */
        char *args[] = {"ls", NULL};
        return run_here_or_there(&cli_verb_ls, host, 1, args, NULL);
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
        return run_here_or_there(v, host, argc - 1, argv + 1, NULL);
    /* One line, not the whole usage: what was wrong, and where the list is. */
    char *shown = quote_text_visible(argv[1], strlen(argv[1]));
    fprintf(stderr, "corral: unknown %s '%s' (corral --help lists the verbs and options)\n",
            argv[1][0] == '-' ? "option" : "verb", shown);
    free(shown);
    return EXIT_USAGE;
}
