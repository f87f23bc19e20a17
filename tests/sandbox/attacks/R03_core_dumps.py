#!/usr/bin/env python3
# id: R03
# tries: fill the disk with core dumps: raise RLIMIT_CORE, crash a child with SIGSEGV
# expect: RLIMIT_CORE is 0/0 and cannot be raised (EPERM); no core file appears
# neighbour: setting RLIMIT_CORE to 0 (keeping the limit) works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R03_core_dumps.py [INFO.json]
import errno
import os
import resource
import signal

from attacklib import attempt, blocked, escaped, main, setrlimit


def attack():
    got = resource.getrlimit(resource.RLIMIT_CORE)
    (blocked if got == (0, 0) else escaped).append("RLIMIT_CORE %s" % (got,))
    attempt("raise RLIMIT_CORE", lambda: setrlimit(resource.RLIMIT_CORE, (1 << 30, 1 << 30)), errno.EPERM)
    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGSEGV)
        os._exit(0)
    st = os.waitpid(pid, 0)[1]
    if os.WIFSIGNALED(st) and os.WCOREDUMP(st):
        escaped.append("the crashed child dumped core")
    cores = [f for f in os.listdir(".") if f.startswith("core")]
    (escaped if cores else blocked).append("core files: %s" % (cores or "none"))


def neighbour():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return None


if __name__ == "__main__":
    main(attack, neighbour)
