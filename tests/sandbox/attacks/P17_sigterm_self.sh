#!/bin/sh
# id: P17
# tries: the command kills itself with SIGTERM
# expect: corral exits 143 (128 + SIGTERM), the signal status propagated through the sandbox's init
# neighbour: signals to itself work (a process of the sandbox can signal another)
# needs: -
# sandbox-args: -
# expect-rc: 143
# timeout: 20
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /bin/sh P17_sigterm_self.sh; echo $?
echo "BLOCKED killing itself with SIGTERM; the host checks exit status 143"
echo "NEIGHBOUR OK"
kill -TERM $$
sleep 5
echo "ESCAPED still alive after SIGTERM"
