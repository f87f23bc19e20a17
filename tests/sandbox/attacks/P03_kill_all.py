#!/usr/bin/env python3
# id: P03
# tries: kill(-1, SIGKILL): every process the caller may signal
# expect: only the sandbox's own processes die (init survives, the caller survives); the host `sleep` the runner started lives on (runner checks)
# neighbour: the sandbox's own child was killed by it (signals inside work)
# needs: host-sleep
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P03_kill_all.py [INFO.json]
import os
import signal

from attacklib import blocked, blocked_child, main


def attack():
    global child, child_status
    child, w = blocked_child()
    os.kill(-1, signal.SIGKILL)
    child_status = os.waitpid(child, 0)[1]
    os.close(w)
    alive = [d for d in os.listdir("/proc") if d.isdigit()]
    blocked.append("kill(-1, SIGKILL) returned; processes left here: %s (the host decides the rest)" % alive)


def neighbour():
    st = child_status
    return None if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL else "own child not killed (%d)" % st


if __name__ == "__main__":
    main(attack, neighbour)
