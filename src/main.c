/*
 * main.c - corral's entry point: the internal session init when the server
 * starts a session through us, otherwise the command-line verbs.
 */
#include "config.h"

#include <string.h>
#include <sys/prctl.h>

#include "cli.h"
#include "init.h"
#include "tui.h"

int main(int argc, char **argv)
{
    /* Started as /proc/self/exe, the kernel would name us "exe" in ps. */
    if (argc >= 2 && strcmp(argv[1], "__init") == 0) {
        prctl(PR_SET_NAME, "corral-init");
        return init_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "__sandbox-init") == 0) {
        prctl(PR_SET_NAME, "corral-init");
        return sandbox_init_main(argc - 1, argv + 1);
    }
    prctl(PR_SET_NAME, "corral");
    /* No setlocale: nothing here depends on the locale, and loading it
     * costs 0.15 ms at every start (corral starts twice per command). */
    cli_set_tui(tui_main);
    return cli_main(argc, argv);
}
