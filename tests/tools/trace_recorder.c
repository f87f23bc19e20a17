/*
 * trace_recorder.c - the function-entry recorder exectrace.py links into a
 * build compiled with -finstrument-functions: every entry and exit of an
 * instrumented function, as "PID TID E|X ADDRESS" lines appended to the file
 * $CORRAL_TRACE_FILE names (nothing when it is unset).  Compiled without
 * instrumentation; never part of corral itself.
 */
#define _GNU_SOURCE /* gettid */
#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <unistd.h>

#define NO_TRACE __attribute__((no_instrument_function))

static int trace_fd = -2;
static pid_t trace_pid; /* the process that opened it */

NO_TRACE static void record(char kind, void *fn)
{
    if (trace_fd == -2) {
        const char *path = getenv("CORRAL_TRACE_FILE");
        trace_fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
        trace_pid = getpid();
    }
    /* A forked child (a sandbox being set up) moves its fds around: the
     * number may name its launch plan by now.  Only the opener records. */
    if (trace_fd < 0 || getpid() != trace_pid)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "%d %d %c %lx\n", (int)trace_pid, (int)gettid(), kind, (unsigned long)fn);
    if (write(trace_fd, line, (size_t)n) != n)
        trace_fd = -1; /* the trace is cut short, never the program */
}

NO_TRACE void __cyg_profile_func_enter(void *fn, void *site);
NO_TRACE void __cyg_profile_func_exit(void *fn, void *site);

void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record('E', fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    record('X', fn);
}
