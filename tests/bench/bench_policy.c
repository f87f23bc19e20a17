/*
 * bench_policy.c - in-process exec-policy throughput (bench_policy.py runs
 * it): load a rules file, then time, per command, the raw prefix match
 * (rules_match), what `corral policy check` computes and prints
 * (rules_check_json), and the server's whole decision (policy_evaluate:
 * script splitting, rules, heuristics, approval policy).  Prints figures;
 * asserts nothing about time.
 *
 * usage: bench_policy RULES_FILE [SECONDS_PER_CASE]
 */
#include "config.h"

#include "policy/policy.h"
#include "policy/rules.h"
#include "policy/rules_ws.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_case {
    const char *label;
    char *argv[8];
} bench_case;

static volatile size_t sink; /* keeps the work from being optimised away */

typedef enum what { RAW_MATCH, CHECK_JSON, EVALUATE } what;

static void run_one(const rules_t *r, const rules_t *builtin, what w, char *const *argv)
{
    static const policy_settings ps = {.approval = APPROVAL_ON_REQUEST};
    if (w == RAW_MATCH) {
        rule_match *m;
        size_t n = rules_match(r, argv, false, &m);
        sink += n + rules_decide(m, n);
        rules_matches_free(m, n);
    } else if (w == CHECK_JSON) {
        char *json = rules_check_json(r, argv, false, false);
        sink += strlen(json);
        free(json);
    } else {
        policy_result pr;
        policy_evaluate(r, builtin, &ps, argv, SANDBOX_DEFAULT, false, &pr);
        sink += pr.verdict + pr.segments;
    }
}

/* Evaluations per second of w on argv, for about secs seconds. */
static double rate(const rules_t *r, const rules_t *builtin, what w, char *const *argv, double secs)
{
    size_t n = 0, batch = 256;
    double t0 = now_sec(), t;
    do {
        for (size_t i = 0; i < batch; i++)
            run_one(r, builtin, w, argv);
        n += batch;
        t = now_sec() - t0;
    } while (t < secs);
    return (double)n / t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_policy RULES_FILE [SECONDS_PER_CASE]\n");
        return 2;
    }
    double secs = argc > 2 ? atof(argv[2]) : 0.5;
    char err[1024];
    rules_t *builtin = rules_new();
    if (rules_load_text(builtin, RULES_BUILTIN_NAME, rules_builtin_text, err, sizeof err) < 0) {
        fprintf(stderr, "bench_policy: %s\n", err);
        return 1;
    }
    /* Loading, timed alone: what the server pays when a file changes. */
    int loads = 0;
    double t0 = now_sec();
    rules_t *r = NULL;
    do {
        rules_free(r);
        r = rules_new();
        if (rules_load_file(r, argv[1], err, sizeof err) < 0) {
            fprintf(stderr, "bench_policy: %s\n", err);
            return 1;
        }
        loads++;
    } while (now_sec() - t0 < secs / 2);
    double load_ms = (now_sec() - t0) * 1000 / loads;
    printf("rules file: %s (%zu prefix rules after expansion); load+parse+example checks: %.3f ms\n", argv[1],
           rules_prefix_count(r), load_ms);

    bench_case cases[] = {
        {"simple, matches (git status)", {"git", "status", NULL}},
        {"simple, no rule (ls -la)", {"ls", "-la", NULL}},
        {"compound (bash -lc 'a && b | c')", {"bash", "-lc", "git status && make build | tee build.log", NULL}},
    };
    static const char *const names[] = {"raw match", "check json", "policy_evaluate"};
    printf("%-36s%20s%20s%20s\n", "command", names[0], names[1], names[2]);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        printf("%-36s", cases[i].label);
        for (int w = RAW_MATCH; w <= EVALUATE; w++) {
            double per_s = rate(r, builtin, (what)w, cases[i].argv, secs);
            printf(" %10.0f/s %4.1fus", per_s, 1e6 / per_s);
        }
        printf("\n");
    }
    /* What the server adds per request before evaluating: picking the
     * rules for the request's directory (a few stat()s when nothing
     * changed).  Here: the current directory, with $XDG_CONFIG_HOME as the
     * caller set it. */
    rules_ws *ws = rules_ws_new();
    size_t n = 0;
    t0 = now_sec();
    double t;
    do {
        for (int i = 0; i < 256; i++)
            sink += rules_prefix_count(rules_ws_for(ws, ".", NULL, NULL));
        n += 256;
        t = now_sec() - t0;
    } while (t < secs);
    printf("%-36s %10.0f/s %4.1fus\n", "rules for a request's cwd (cached)", n / t, 1e6 * t / n);
    rules_ws_free(ws);
    rules_free(r);
    rules_free(builtin);
    return sink == 42 ? 3 : 0;
}
