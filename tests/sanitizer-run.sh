#!/bin/sh
# sanitizer-run.sh - how make check runs each test in a build configured
# with --enable-sanitizers (AddressSanitizer with LeakSanitizer, and UBSan).
#
# Usage: sanitizer-run.sh TEST-COMMAND [ARG...]
#
# The sanitizers' reports go to files in a fresh directory, one per process,
# instead of to stderr: every process the test starts writes there (the test
# program, the CLI, a server in the background whose stderr no test reads),
# and a test that compares a command's stderr exactly never sees a report in
# it.  After the test, each report is appended to the test's log and the
# test fails, whatever its own verdict: a leak at a server's exit or
# undefined behaviour in a CLI whose exit status the test does not look at
# counts as much as one in a unit test.
#
# Processes that do not inherit the test's environment keep the runtime's
# defaults: the session init (started with an empty environment) and the
# sandbox battery's runs (which build their own).  They report on their own
# stderr (a session's terminal, the battery's pipe), and an error ends the
# process all the same, which the test sees.  LeakSanitizer is off in any
# process under the sandbox's seccomp filter (src/cli/main.c says why).
#
# The environment's own ASAN_OPTIONS and UBSAN_OPTIONS come last, so they
# can override these (ASAN_OPTIONS=detect_leaks=0 make check).
set -u

[ $# -gt 0 ] || { echo "usage: $0 TEST-COMMAND [ARG...]" >&2; exit 99; }

reports=$(mktemp -d "${TMPDIR:-/tmp}/corral-sanitizers.XXXXXX") || {
    echo "sanitizer-run.sh: cannot create a directory for sanitizer reports in ${TMPDIR:-/tmp}" >&2
    exit 99
}
# Writable by processes of other users the test may start (reports only:
# a process that cannot open its report file dies without its report).
chmod 1733 "$reports"
trap 'rm -rf "$reports"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fast_unwind_on_malloc=0: a leak's stack goes on through jansson and libuv,
# which are built without frame pointers (a fraction of a second per test).
ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:log_path=$reports/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS

"$@"
status=$?

found=0
for f in "$reports"/*; do
    [ -f "$f" ] || continue
    found=$((found + 1))
    echo "sanitizer-run.sh: report ${f##*/} (the file's suffix is the process id):" >&2
    cat "$f" >&2
done
if [ "$found" -gt 0 ]; then
    echo "sanitizer-run.sh: $found sanitizer report(s) from processes of $*: the test fails" >&2
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
