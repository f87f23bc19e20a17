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
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s is valid UTF-8 (the one decoder's verdict, utf8.h). */
static bool valid_utf8(const char *s)
{
    size_t n = strlen(s);
    return utf8_valid_prefix(s, n) == n;
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
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char **files = NULL;
    size_t nfiles = 0;
    bool pretty = false, resolve = false;
    int o, rc = EXIT_USAGE;
    optind = 0;
    while ((o = getopt_long(argc, argv, "+r:h", opts, NULL)) != -1) {
        switch (o) {
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
    if (nfiles == 0) {
        free(files);
        return cli_usage_error(v, "--rules FILE is required (the rules to check against; repeatable)");
    }
    if (optind >= argc) {
        free(files);
        return cli_usage_error(v, "no command given (corral policy check --rules FILE -- CMD [ARG...])");
    }
    for (int i = optind; i < argc; i++) {
        if (!valid_utf8(argv[i])) {
            free(files);
            return cli_usage_error(v, "invalid UTF-8 in the command");
        }
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
    /* The JSON quotes the rules (a justification): its DEL, C1 and
     * invisible characters as \u escapes, the same JSON. */
    char *json = rules_check_json(r, argv + optind, resolve, pretty);
    buf_t shown;
    buf_init(&shown);
    quote_json_append(&shown, json, strlen(json));
    fwrite(shown.data, 1, shown.len, stdout);
    buf_free(&shown);
    free(json);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    rules_free(r);
    free(files);
    return rc;
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
