/*
 * cli_approvals.c - `corral approvals`, `corral approve`, `corral deny`:
 * the approval queue from a script or another terminal (the same queue the
 * supervisor screen answers; the first answer wins).  Each verb is one
 * entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "base/quote.h"
#include "base/util.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *call(const char *cmd, json_t *fields)
{
    json_object_set_new(fields, "cmd", json_string(cmd));
    return cli_request(fields);
}

/* What each kind of request is, for a reader who has not seen it before. */
static const char *kind_text(const char *kind)
{
    static const char *const kinds[][2] = {
        {"exec", "a command an agent asked to run"},
        {"escalate", "corral escalate, from inside a session"},
        {"command", "a command line typed in a session's shell"},
        {"retry", "run again without the sandbox, which denied it"},
        {"network", "a sandboxed program connecting to a host through corral's proxy"},
    };
    for (size_t i = 0; kind && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kind, kinds[i][0]) == 0)
            return kinds[i][1];
    return "";
}

/* A string of the request as text a terminal cannot act on
 * (client_field); NULL if it is missing or not a string. */
static char *field(json_t *a, const char *key)
{
    return client_field(a, key, NULL);
}

/* A host request: the host, port and protocol, what runs in the session,
 * and what each answer makes. */
static void print_host_request(json_t *a)
{
    char *host = field(a, "host"), *proto = field(a, "protocol"), *running = field(a, "running");
    char *allow = field(a, "network_rule_allow"), *deny = field(a, "network_rule_deny");
    printf("  network access to: %s, port %lld, protocol %s\n", host ? host : "?",
           (long long)json_integer_value(json_object_get(a, "port")), proto ? proto : "?");
    printf("  kind: network (%s)\n", kind_text("network"));
    if (running)
        printf("  running: %s\n", running);
    char *where = field(a, "address");
    if (where)
        printf("  address: %s\n", where);
    free(where);
    char *reason = field(a, "reason");
    printf("  why it asks: %s\n", reason ? reason : "?");
    printf("  approve: this connection; approve --session: this host for the session\n");
    if (allow)
        printf("  approve --persist saves: %s\n", allow);
    if (deny)
        printf("  deny --persist saves: %s (and denies it for the session)\n", deny);
    free(host);
    free(proto);
    free(running);
    free(allow);
    free(deny);
    free(reason);
}

/* One request, every line "  name: value" under a heading line, so that
 * nothing of it is cut or hidden: the complete command line (each word
 * shell-quoted, see quote_argv_display), what kind of request it is, where
 * it runs and with which rights.  Escalated: a line of its own says it
 * runs OUTSIDE the sandbox (in bold red on a colour terminal). */
static void print_request(json_t *a, bool color)
{
    char *client = field(a, "client"), *kind = field(a, "kind");
    printf("request %lld from %s", (long long)json_integer_value(json_object_get(a, "id")), client ? client : "?");
    json_int_t session = json_integer_value(json_object_get(a, "session"));
    if (session) {
        char *name = field(a, "session_name");
        printf(", session %lld%s%s%s", (long long)session, name ? " (" : "", name ? name : "", name ? ")" : "");
        free(name);
    }
    printf(", waiting %.0fs\n", json_number_value(json_object_get(a, "age_seconds")));
    char *waiter = field(a, "waiter");
    if (waiter)
        printf("  who waits: %s\n", waiter);
    free(waiter);
    if (kind && strcmp(kind, "network") == 0) {
        print_host_request(a);
        free(client);
        free(kind);
        return;
    }
    char *cmd = client_approval_command(a);
    printf("  command: %s\n", cmd);
    free(cmd);
    printf("  kind: %s (%s)\n", kind ? kind : "?", kind_text(json_string_value(json_object_get(a, "kind"))));
    json_t *cwd = json_object_get(a, "cwd");
    char *dir = quote_word_display(json_is_string(cwd) ? json_string_value(cwd) : "?");
    printf("  cwd: %s\n", dir);
    free(dir);
    json_t *perm = json_object_get(a, "permissions");
    const char *sandbox = json_string_value(json_object_get(perm, "sandbox"));
    char *shown_sandbox = client_field(perm, "sandbox", "?");
    json_t *write = json_object_get(perm, "write");
    char *roots = json_array_size(write) ? client_quote_argv(write) : xstrdup("none");
    printf("  permissions: sandbox %s; extra write: %s; network: %s\n", shown_sandbox, roots,
           json_is_true(json_object_get(perm, "network")) ? "yes" : "no");
    free(roots);
    free(shown_sandbox);
    if (sandbox && strcmp(sandbox, "escalated") == 0)
        printf("  %sruns OUTSIDE the sandbox: nothing confines what it does%s\n", color ? "\033[1;31m" : "",
               color ? "\033[0m" : "");
    char *reason = field(a, "reason"), *rule = field(a, "rule"), *why = field(a, "justification");
    printf("  why it asks: %s%s%s%s\n", reason ? reason : "?", rule ? " (rule `" : "", rule ? rule : "",
           rule ? "`)" : "");
    if (why)
        printf("  the agent says: %s\n", why);
    free(reason);
    free(rule);
    free(why);
    json_t *risks = json_object_get(a, "risks");
    for (size_t i = 0; i < json_array_size(risks); i++) {
        char *r = client_visible(json_array_get(risks, i), "?");
        printf("%s%s", i ? ", " : "  risks: ", r);
        free(r);
    }
    if (json_array_size(risks))
        printf("\n");
    json_t *prefix = json_object_get(a, "prefix_rule");
    if (json_array_size(prefix)) {
        char *p = client_quote_argv(prefix);
        printf("  approve --persist would always allow: %s\n", p);
        free(p);
    }
    free(client);
    free(kind);
}

static int verb_approvals(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool as_json = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        if (ch == 'j')
            as_json = true;
        else if (ch == 'h')
            return cli_print_help(v);
        else
            return EXIT_USAGE;
    }
    json_t *r = call("approvals", json_object());
    if (!r)
        return 1;
    json_t *list = json_object_get(r, "approvals");
    if (as_json) {
        cli_print_json(list, JSON_COMPACT); /* a request from inside a session, made safe */
    } else {
        size_t i;
        json_t *a;
        if (json_array_size(list) == 0) {
            char *policy = client_field(r, "policy", "?");
            printf("no requests waiting (policy %s)\n", policy);
            free(policy);
        }
        const char *nc = getenv("NO_COLOR");
        bool color = isatty(STDOUT_FILENO) && !(nc && *nc);
        json_array_foreach(list, i, a) {
            if (i)
                printf("\n");
            print_request(a, color);
        }
    }
    const char *rules_error = json_string_value(json_object_get(r, "rules_error"));
    if (rules_error) {
        /* One error a line; each may quote a rules file or its name. */
        fprintf(stderr, "corral: some rules were not loaded:\n");
        for (const char *p = rules_error; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = quote_text_visible(p, n);
            fprintf(stderr, "%s\n", line);
            free(line);
            p += n + (p[n] == '\n');
        }
    }
    json_decref(r);
    return 0;
}

const cli_verb cli_verb_approvals = {
    .name = "approvals",
    .usage = "approvals [--json]",
    .help = "List the requests waiting for approval, oldest first: id, who asks, age,\n"
            "the whole command (shell-quoted, never cut; invisible characters escaped as\n"
            "in bash's $'...'), its kind, directory and permissions (and whether it runs\n"
            "OUTSIDE the sandbox), why the policy asks and the agent's reason.\n",
    .run = verb_approvals,
    .where = CLI_REMOTE,
};

static int answer(const cli_verb *v, int argc, char **argv, bool approve)
{
    static const struct option opts[] = {{"session", no_argument, NULL, 's'}, {"persist", no_argument, NULL, 'p'},
                                         {"note", required_argument, NULL, 'n'}, {"stop", no_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'}, {0}};
    const char *scope = "once", *note = NULL, *id_arg = NULL;
    bool persist = false;
    bool stop = false, extra = false;
    int ch;
    /* "-": the id is returned in place (as option 1), so options may come
     * before or after it (corral deny 7 --note X), whatever POSIXLY_CORRECT
     * says. */
    while ((ch = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
        switch (ch) {
        case 1:
            extra = extra || id_arg;
            id_arg = optarg;
            break;
        case 's': scope = "session"; break;
        case 'p': scope = "persist"; persist = true; break;
        case 'n': note = optarg; break;
        case 'S': stop = true; break;
        case 'h': return cli_print_help(v);
        default: /* getopt said what was wrong (e.g. --note without its text) */
            return cli_usage_line(v);
        }
    }
    for (; optind < argc; optind++) { /* after "--" */
        extra = extra || id_arg;
        id_arg = argv[optind];
    }
    char *end = NULL;
    long id = id_arg ? strtol(id_arg, &end, 10) : 0;
    if (extra || !end || *end || id <= 0 || id > INT32_MAX) {
        fprintf(stderr, "corral: give one request id (corral approvals lists them)\n");
        return cli_usage_line(v);
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
        if (persist)
            json_object_set_new(f, "persist", json_true());
    }
    json_t *r = call(approve ? "approve" : "deny", f);
    if (!r)
        return 1;
    char *shown = client_field(r, "answer", "?");
    printf("%s %ld (%s)\n", approve ? "approved" : "denied", id, shown);
    free(shown);
    json_decref(r);
    return 0;
}

static int verb_approve(const cli_verb *v, int argc, char **argv)
{
    return answer(v, argc, argv, true);
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
    .where = CLI_REMOTE,
};

static int verb_deny(const cli_verb *v, int argc, char **argv)
{
    return answer(v, argc, argv, false);
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
    .where = CLI_REMOTE,
};
