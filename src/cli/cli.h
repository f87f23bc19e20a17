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
 * against: main.c hands it over before cli_main runs (the verbs open it
 * with cli_run_tui, cli_verb.h). */
typedef int (*cli_tui_fn)(const tui_options *opt);
void cli_set_tui(cli_tui_fn fn);

/* Verbs in files of their own (called by cli_main with their usage/help). */

#endif
