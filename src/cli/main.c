/*
 * main.c - corral's entry point: the internal session init when the server
 * starts a session through us, otherwise the command-line verbs.
 */
#include "config.h"

#include <string.h>
#include <sys/prctl.h>

#include "cli/cli.h"
#include "sandbox/init.h"
#include "snap/snap_storeproc.h"
#include "snap/snap_worker.h"
#include "ui/tui.h"

#if defined(__SANITIZE_ADDRESS__)
#define CORRAL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORRAL_ASAN 1
#endif
#endif

#ifdef CORRAL_ASAN
#include <sanitizer/lsan_interface.h>

/* Built with --enable-sanitizers.  LeakSanitizer's check at exit stops the
 * process's threads with ptrace to read their registers and stacks; a
 * sandbox's seccomp filter refuses ptrace (sandbox/filter.c), and the check
 * then ends in "LeakSanitizer has encountered a fatal error", exit status 1
 * and unflushed stdout instead of a leak report.  So the check is off in any
 * process under a seccomp filter (the session init once its filter is in
 * place, corral escalate run from inside a session) and on everywhere else
 * (the server, the CLI, corral sandbox before its child is confined).  The
 * runtime calls this when it is about to check, so the answer is the
 * process's state at exit. */
int __lsan_is_turned_off(void)
{
    return prctl(PR_GET_SECCOMP) != 0;
}
#endif

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
    if (argc >= 2 && strcmp(argv[1], "__snapworker") == 0) {
        prctl(PR_SET_NAME, "corral-reader");
        return snap_worker_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "__snapstore") == 0) {
        prctl(PR_SET_NAME, "corral-store");
        return snap_storeproc_main(argc - 1, argv + 1);
    }
    prctl(PR_SET_NAME, "corral");
    /* No setlocale: nothing here depends on the locale, and loading it
     * costs 0.15 ms at every start (corral starts twice per command). */
    cli_set_tui(tui_main);
    return cli_main(argc, argv);
}
