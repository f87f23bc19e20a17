#!/bin/sh
# id: P16
# tries: exit 7 while a child (sleep 100) still runs and an orphan (sleep 0.2) was just made
# expect: corral exits 7 promptly (the runner checks the status and the 20 s bound); nothing survives
# neighbour: the background child was running when the command exited
# needs: -
# sandbox-args: -
# expect-rc: 7
# timeout: 20
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /bin/sh P16_exit_status.sh; echo $?
sleep 100 &
child=$!
( sleep 0.2 & )
echo "BLOCKED exiting 7 with a running child; the host checks status and teardown"
if kill -0 "$child"; then echo "NEIGHBOUR OK"; else echo "NEIGHBOUR BROKEN background child not running"; fi
exit 7
