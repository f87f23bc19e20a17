#!/bin/sh
# id: P15
# tries: leave processes behind: `setsid -f sleep`, `nohup sleep &`, a double-forked sleep, all detached from the command's output, then exit
# expect: none of them outlives the command (the runner looks for the marked sleeps on the host afterwards)
# neighbour: a background job started by the command runs and can be waited for
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /bin/sh P15_orphan.sh [INFO.sh]
# The sleeps carry a marker duration (ORPHAN_MARKER, 3000.<digits>) the
# runner searches for in the host's process list.
[ -n "$1" ] && . "$1"
marker=${ORPHAN_MARKER:-3000.1}

setsid -f sleep "$marker" </dev/null >/dev/null 2>&1
nohup sleep "$marker" </dev/null >/dev/null 2>&1 &
( (sleep "$marker" </dev/null >/dev/null 2>&1 &) & )

# All three must be running now, or the test proves nothing.
tries=0
while :; do
    n=0
    for f in /proc/[0-9]*/cmdline; do
        tr '\0' ' ' <"$f" 2>/dev/null | grep -q "sleep $marker" && n=$((n + 1))
    done
    [ "$n" -ge 3 ] && break
    tries=$((tries + 1))
    [ "$tries" -gt 200 ] && break
    sleep 0.05
done
if [ "$n" -ge 3 ]; then
    echo "BLOCKED $n detached sleeps started; the host checks that none survives"
else
    echo "ESCAPED only $n of 3 detached sleeps seen running: the test cannot judge"
fi

sleep 0.1 &
if wait $!; then echo "NEIGHBOUR OK"; else echo "NEIGHBOUR BROKEN background job failed"; fi
