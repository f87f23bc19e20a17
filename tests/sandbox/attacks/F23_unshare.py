#!/usr/bin/env python3
# id: F23
# tries: unshare(2) every namespace type on its own, CLONE_NEWUSER with high bits set (1<<32, 1<<40, 1<<63), and the unshare(1) tool (unshare -Ur true)
# expect: EPERM for every call; unshare -Ur fails
# neighbour: unshare(0) and unshare(CLONE_FILES) (no namespace) still work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F23_unshare.py [INFO.json]
import errno
import subprocess

from attacklib import attempt, blocked, escaped, main, sys_call

SYS_unshare = 272
NS = {"NEWNS": 0x20000, "NEWCGROUP": 0x2000000, "NEWUTS": 0x4000000, "NEWIPC": 0x8000000,
      "NEWUSER": 0x10000000, "NEWPID": 0x20000000, "NEWNET": 0x40000000, "NEWTIME": 0x80}


def attack():
    for name, flag in NS.items():
        attempt("unshare(%s)" % name, lambda: sys_call(SYS_unshare, flag), errno.EPERM)
    for bit in (32, 40, 63):
        attempt("unshare(NEWUSER|1<<%d)" % bit, lambda: sys_call(SYS_unshare, NS["NEWUSER"] | (1 << bit)),
                errno.EPERM)
    r = subprocess.run(["unshare", "-Ur", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (escaped if r.returncode == 0 else blocked).append("unshare -Ur true: exit %d" % r.returncode)


def neighbour():
    sys_call(SYS_unshare, 0)
    sys_call(SYS_unshare, 0x400)  # CLONE_FILES
    return None


if __name__ == "__main__":
    main(attack, neighbour)
