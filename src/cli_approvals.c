/*
 * cli_approvals.c - `corral approvals`, `corral approve`, `corral deny`:
 * the approval queue from a script or another terminal (the same queue the
 * supervisor screen answers; the first answer wins).
 */
#include "config.h"

#include "cli.h"
#include "client.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

static json_t *call(const char *cmd, json_t *fields)
{
    client_t c;
    char err[1024];
    if (client_connect_lazy(&c, getenv("CORRAL_CLIENT") && *getenv("CORRAL_CLIENT") ? getenv("CORRAL_CLIENT")
                                                                                     : "user",
                            true, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        json_decref(fields);
        return NULL;
    }
    json_object_set_new(fields, "cmd", json_string(cmd));
    json_t *r = cli_call(&c, fields);
    client_close(&c);
    return r;
}

/* argv as one line, each word quoted when it needs it. */
static void print_argv(json_t *argv)
{
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a) {
        const char *s = json_string_value(a);
        char *clean = sanitize_text(s ? s : "", strlen(s ? s : ""), 400);
        bool plain = *clean && strspn(clean, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                                   strlen(clean);
        printf("%s%s%s%s", i ? " " : "", plain ? "" : "'", clean, plain ? "" : "'");
        free(clean);
    }
}

int cli_approvals(int argc, char **argv, const char *usage, const char *help)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool as_json = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
        if (ch == 'j')
            as_json = true;
        else if (ch == 'h')
            return printf("usage: corral %s\n\n%s", usage, help), 0;
        else
            return EXIT_USAGE;
    }
    json_t *r = call("approvals", json_object());
    if (!r)
        return 1;
    json_t *list = json_object_get(r, "approvals");
    if (as_json) {
        char *s = json_dumps(list, JSON_COMPACT);
        printf("%s\n", s);
        free(s);
    } else {
        size_t i;
        json_t *a;
        if (json_array_size(list) == 0)
            printf("no requests waiting (policy %s)\n", json_string_value(json_object_get(r, "policy")));
        json_array_foreach(list, i, a) {
            printf("%-5lld %-12s %4.0fs  ", (long long)json_integer_value(json_object_get(a, "id")),
                   json_string_value(json_object_get(a, "client")),
                   json_number_value(json_object_get(a, "age_seconds")));
            print_argv(json_object_get(a, "argv"));
            const char *reason = json_string_value(json_object_get(a, "reason"));
            const char *why = json_string_value(json_object_get(a, "justification"));
            printf("\n      %s%s%s\n", reason ? reason : "", why ? "; the agent says: " : "", why ? why : "");
        }
    }
    const char *rules_error = json_string_value(json_object_get(r, "rules_error"));
    if (rules_error)
        fprintf(stderr, "corral: some rules were not loaded:\n%s", rules_error);
    json_decref(r);
    return 0;
}

static int answer(int argc, char **argv, const char *usage, const char *help, bool approve)
{
    static const struct option opts[] = {{"session", no_argument, NULL, 's'}, {"persist", no_argument, NULL, 'p'},
                                         {"note", required_argument, NULL, 'n'}, {"stop", no_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'}, {0}};
    const char *scope = "once", *note = NULL;
    bool stop = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (ch) {
        case 's': scope = "session"; break;
        case 'p': scope = "persist"; break;
        case 'n': note = optarg; break;
        case 'S': stop = true; break;
        case 'h': printf("usage: corral %s\n\n%s", usage, help); return 0;
        default: return EXIT_USAGE;
        }
    }
    char *end = NULL;
    long id = optind < argc ? strtol(argv[optind], &end, 10) : 0;
    if (optind + 1 != argc || !end || *end || id <= 0) {
        fprintf(stderr, "corral: give one request id (corral approvals lists them)\nusage: corral %s\n", usage);
        return EXIT_USAGE;
    }
    if (approve && (note || stop)) {
        fprintf(stderr, "corral: --note and --stop go with deny\n");
        return EXIT_USAGE;
    }
    json_t *f = json_pack("{s:i}", "approval", (int)id);
    if (approve)
        json_object_set_new(f, "scope", json_string(scope));
    else {
        if (note)
            json_object_set_new(f, "note", json_string(note));
        json_object_set_new(f, "stop", json_boolean(stop));
    }
    json_t *r = call(approve ? "approve" : "deny", f);
    if (!r)
        return 1;
    printf("%s %ld (%s)\n", approve ? "approved" : "denied", id, json_string_value(json_object_get(r, "answer")));
    json_decref(r);
    return 0;
}

int cli_approve(int argc, char **argv, const char *usage, const char *help)
{
    return answer(argc, argv, usage, help, true);
}

int cli_deny(int argc, char **argv, const char *usage, const char *help)
{
    return answer(argc, argv, usage, help, false);
}
