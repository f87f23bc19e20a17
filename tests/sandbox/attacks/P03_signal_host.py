#!/usr/bin/env python3
# id: P03
# tries: signal host processes: SIGKILL a host `sleep` the runner started (its host pid), its process group, probe the runner itself with signal 0, pidfd_open the host pid, look at /proc/<host pid>
# expect: ESRCH / ENOENT (another pid namespace); the host `sleep` is still alive afterwards (runner checks)
# neighbour: signalling a child of the sandbox works
# needs: host-sleep
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P03_signal_host.py [INFO.json]
import errno
import os
import signal

from attacklib import INFO, attempt, blocked, blocked_child, main, sys_call

SYS_pidfd_open = 434


def attack():
    host = INFO.get("host_sleep_pid")
    runner = INFO.get("runner_pid")
    if not host:
        blocked.append("no host pid given (run by hand): nothing to try")
        return
    attempt("kill(host sleep, SIGKILL)", lambda: os.kill(host, signal.SIGKILL), errno.ESRCH)
    attempt("kill(-host pgrp, SIGKILL)", lambda: os.kill(-host, signal.SIGKILL), errno.ESRCH)
    attempt("kill(runner, 0)", lambda: os.kill(runner, 0), errno.ESRCH)
    attempt("pidfd_open(host sleep)", lambda: sys_call(SYS_pidfd_open, host, 0), errno.ESRCH)
    attempt("stat /proc/<host pid>", lambda: os.stat("/proc/%d" % host), errno.ENOENT)


def neighbour():
    pid, w = blocked_child()
    os.kill(pid, signal.SIGKILL)
    st = os.waitpid(pid, 0)[1]
    os.close(w)
    return None if os.WIFSIGNALED(st) else "child survived SIGKILL"


if __name__ == "__main__":
    main(attack, neighbour)
