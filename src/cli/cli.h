/*
 * cli.h - corral's command line (docs/corral.1), as main.c starts it: the
 * verbs and the hand-over of the supervisor screen.  Included by main.c
 * and the files of src/cli/ that define these; the verbs share
 * cli_verb.h.
 */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include "ui/tui.h"

/* Run corral with these arguments; returns the exit status. */
int cli_main(int argc, char **argv);

/* The supervisor screen lives in ui/, which libcorral.a does not link
 * against: main.c hands it over before cli_main runs (the verbs open it
 * with cli_run_tui, cli_verb.h). */
typedef int (*cli_tui_fn)(const tui_options *opt);
void cli_set_tui(cli_tui_fn fn);

#endif
