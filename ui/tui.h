/*
 * tui.h - the supervisor screen (corral with no verb, corral attach,
 * corral demo): see tui.c.
 */
#ifndef CORRAL_UI_TUI_H
#define CORRAL_UI_TUI_H

#include "cli/cli.h"

/* Run the TUI until detach; returns the exit status. */
int tui_main(const cli_tui_options *opt);

#endif
