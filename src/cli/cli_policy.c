/*
 * cli_policy.c - `corral policy check`: what the given rules files decide
 * for a command, printed exactly as `codex execpolicy check` prints it
 * (docs/corral.rules.5).  No server.  Exit 0 with the JSON, 1 when a rules
 * file cannot be read or parsed, 2 for usage errors.  The verb is one
 * entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "base/exitcode.h"
#include "base/quote.h"
#include "policy/rules.h"
#include "policy/rules_ws.h"
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* s is valid UTF-8 (the one decoder's verdict, utf8.h). */
static bool valid_utf8(const char *s)
{
    size_t n = strlen(s);
    return utf8_valid_prefix(s, n) == n;
}

static int print_check(const rules_t *r, char *const *cmd, bool resolve, bool pretty)
{
    /* The JSON quotes the rules (a justification): its DEL, C1 and
     * invisible characters as \u escapes, the same JSON. */
    char *json = rules_check_json(r, cmd, resolve, pretty);
    buf_t shown;
    buf_init(&shown);
    quote_json_append(&shown, json, strlen(json));
    fwrite(shown.data, 1, shown.len, stdout);
    buf_free(&shown);
    free(json);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* No --rules: what the server decides for the command run in dir (the
 * current directory by default): the user's rules and, when dir is a
 * trusted workspace, its own (rules_ws.h); corral's built-in rules when
 * none of those matches, as the server consults them.  What was left out
 * (a file with an error, an untrusted workspace's rules) is said on
 * stderr, and makes the status 1 as a bad --rules file does. */
static int check_as_server(const char *dir, char *const *cmd, bool resolve, bool pretty)
{
    char *cwd = dir ? NULL : getcwd(NULL, 0);
    const char *where = dir ? dir : cwd;
    struct stat st;
    if (!where) {
        fprintf(stderr, "corral policy: cannot read the current directory (%s): give -C DIR\n", strerror(errno));
        return 1;
    }
    if (stat(where, &st) < 0 || !S_ISDIR(st.st_mode)) {
        char *shown = quote_text_visible(where, strlen(where));
        fprintf(stderr, "corral policy: %s is not a directory (-C DIR: the directory the command would run in)\n",
                shown);
        free(shown);
        free(cwd);
        return 1;
    }
    rules_ws *c = rules_ws_new();
    char *note = NULL;
    const rules_t *r = rules_ws_for(c, where, &note, NULL);
    const rules_t *builtin = rules_ws_builtin(c);
    char *errors = rules_ws_errors(c);
    bool bad = errors != NULL;
    if (note) {
        char *shown = quote_text_visible(note, strlen(note));
        fprintf(stderr, "corral policy: %s\n", shown);
        free(shown);
    }
    if (errors) {
        char *shown = quote_text_visible(errors, strlen(errors));
        fprintf(stderr, "corral policy: left out, as the server leaves them out:\n%s%s", shown,
                shown[0] && shown[strlen(shown) - 1] == '\n' ? "" : "\n");
        free(shown);
    }
    rule_match *m = NULL;
    size_t n = rules_match(r, cmd, resolve, &m);
    rules_matches_free(m, n);
    if (n == 0)
        fprintf(stderr, "corral policy: none of your rules matches: corral's built-in rules answer\n");
    int rc = print_check(n ? r : builtin, cmd, resolve, pretty);
    free(errors);
    free(note);
    rules_ws_free(c);
    free(cwd);
    return bad ? 1 : rc;
}

static int verb_policy(const cli_verb *v, int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_print_help(v);
    if (argc < 2)
        return cli_usage_error(v, "what should it do? (corral policy check ...)");
    if (strcmp(argv[1], "check") != 0)
        return cli_usage_error(v, "unknown action '%s' (known: check)", argv[1]);
    argv[1] = argv[0]; /* getopt's messages name "corral policy", not "check" */
    argc--, argv++;
    static const struct option opts[] = {{"rules", required_argument, NULL, 'r'},
                                         {"pretty", no_argument, NULL, 'p'},
                                         {"resolve-host-executables", no_argument, NULL, 'R'},
                                         {"cd", required_argument, NULL, 'C'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char **files = NULL;
    size_t nfiles = 0;
    bool pretty = false, resolve = false;
    const char *dir = NULL;
    int o, rc = EXIT_USAGE;
    optind = 0;
    while ((o = getopt_long(argc, argv, "+r:C:h", opts, NULL)) != -1) {
        switch (o) {
        case 'C': dir = optarg; break;
        case 'r':
            files = xrealloc(files, (nfiles + 1) * sizeof *files);
            files[nfiles++] = optarg;
            break;
        case 'p': pretty = true; break;
        case 'R': resolve = true; break;
        case 'h':
            free(files);
            return cli_print_help(v);
        default:
            free(files);
            return cli_option_usage(v);
        }
    }
    if (nfiles && dir) {
        free(files);
        return cli_usage_error(v, "give --rules files or -C DIR, not both (-C answers with the rules the server "
                               "loads for DIR)");
    }
    if (optind >= argc) {
        free(files);
        return cli_usage_error(v, "no command given (corral policy check [-C DIR | --rules FILE] -- CMD [ARG...])");
    }
    for (int i = optind; i < argc; i++) {
        if (!valid_utf8(argv[i])) {
            free(files);
            return cli_usage_error(v, "invalid UTF-8 in the command");
        }
    }
    if (nfiles == 0) {
        free(files);
        return check_as_server(dir, argv + optind, resolve, pretty);
    }
    rules_t *r = rules_new();
    char err[4096];
    rc = 1;
    for (size_t i = 0; i < nfiles; i++) {
        /* A rules file's name and what its parser quotes of it are shown
         * made visible (quote.h): a workspace's files are hostile input. */
        char *name = quote_text_visible(files[i], strlen(files[i]));
        FILE *f = fopen(files[i], "rb");
        if (!f) {
            fprintf(stderr, "Error: failed to read policy at %s\n%s: %s\n", name, name, strerror(errno));
            free(name);
            goto out;
        }
        fclose(f);
        if (rules_load_file(r, files[i], err, sizeof err) < 0) {
            char *why = quote_text_visible(err, strlen(err));
            fprintf(stderr, "Error: failed to parse policy at %s\n%s\n", name, why);
            free(why);
            free(name);
            goto out;
        }
        free(name);
    }
    rc = print_check(r, argv + optind, resolve, pretty);
out:
    rules_free(r);
    free(files);
    return rc;
}

const cli_verb cli_verb_policy = {
    .name = "policy",
    .usage = "policy check [-C DIR | --rules F...] [--pretty] [--resolve-host-executables] -- CMD...",
    .help = "Print what the exec-policy rules decide for a command, exactly as 'codex\n"
            "execpolicy check' does: one JSON line with every matching prefix rule, in\n"
            "order, and the strictest decision (forbidden > prompt > allow);\n"
            "{\"matchedRules\":[]} when none matches.  The command is matched as given\n"
            "(no shell parsing).  Without --rules, the rules are the ones the server loads\n"
            "for a command run in DIR (default: here): yours, the workspace's when it is\n"
            "trusted, corral's built-in ones when none of those matches; what is left out\n"
            "is said on stderr.  A rules file with an error is reported as\n"
            "FILE:LINE:COLUMN and exits 1.  See corral.rules(5).\n\n"
            "  -C, --cd DIR                  the directory the command would run in\n"
            "  -r, --rules F                 a rules file instead (repeatable, loaded in order)\n"
            "      --pretty                  indented JSON\n"
            "      --resolve-host-executables  an absolute program without rules of its own\n"
            "                                uses its basename's, as host_executable() allows\n",
    .run = verb_policy,
};
