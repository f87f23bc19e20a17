/*
 * cli.h - the command-line verbs (docs/corral.1).
 */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include <stdbool.h>

#include "ui/tui.h"

/* Run corral with these arguments; returns the exit status. */
int cli_main(int argc, char **argv);

/* The supervisor screen lives in ui/, which libcorral.a does not link
 * against: main.c hands it over before cli_main runs. */
typedef int (*cli_tui_fn)(const tui_options *opt);
void cli_set_tui(cli_tui_fn fn);
int cli_run_tui(const tui_options *opt);

/* Make a call on c; on a connection failure or an error reply print it
 * ("corral: ...") and return NULL. */
struct client;
struct json_t;
struct json_t *cli_call(struct client *c, struct json_t *req);
/* One request to the server (started when none answers) on a connection of
 * its own, closed after; req is consumed.  The reply, or NULL when it
 * failed (said on stderr). */
struct json_t *cli_request(struct json_t *req);

/* Verbs in files of their own (called by cli_main with their usage/help). */
struct conf;
int cli_load_conf(struct conf *c);
int cli_sandbox(int argc, char **argv, const char *usage, const char *help);
int cli_trust(int argc, char **argv, const char *usage, const char *help);
int cli_doctor(int argc, char **argv, const char *usage, const char *help);
int cli_policy(int argc, char **argv, const char *usage, const char *help);
int cli_demo(int argc, char **argv, const char *usage, const char *help);
int cli_approvals(int argc, char **argv, const char *usage, const char *help);
int cli_approve(int argc, char **argv, const char *usage, const char *help);
int cli_deny(int argc, char **argv, const char *usage, const char *help);
int cli_escalate(int argc, char **argv, const char *usage, const char *help);
int cli_replay(int argc, char **argv, const char *usage, const char *help);
/* corral __hook-check (internal, for the shell hooks). */
int cli_hook_check(int argc, char **argv);

#endif
