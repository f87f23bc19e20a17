/*
 * tui.h - the supervisor screen (corral with no verb, corral attach,
 * corral demo): see tui.c.  Included by the CLI (src/cli/), which starts it.
 */
#ifndef CORRAL_UI_TUI_H
#define CORRAL_UI_TUI_H

/* What the verb that opens the screen asks of it. */
typedef struct tui_options {
    int attach_id;     /* 0: none */
    const char *theme; /* --theme, or NULL */
    const char *host;      /* corral attach -H: ssh://... added for this run, or NULL */
    const char *host_name; /* how the screen names it */
} tui_options;

/* Run the TUI until detach; returns the exit status. */
int tui_main(const tui_options *opt);

#endif
