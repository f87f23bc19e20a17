#!/usr/bin/env python3
# id: F17
# tries: chroot("/tmp") and pivot_root(".", ".") / pivot_root into /tmp
# expect: EPERM
# neighbour: chdir between directories works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F17_chroot_pivot.py [INFO.json]
import errno
import os

from attacklib import attempt, main, sys_call

SYS_pivot_root = 155


def attack():
    attempt("chroot /tmp", lambda: os.chroot("/tmp"), errno.EPERM)
    attempt("pivot_root . .", lambda: sys_call(SYS_pivot_root, b".", b"."), errno.EPERM)
    os.makedirs("/tmp/new/old")
    attempt("pivot_root /tmp/new /tmp/new/old", lambda: sys_call(SYS_pivot_root, b"/tmp/new", b"/tmp/new/old"),
            errno.EPERM)


def neighbour():
    here = os.getcwd()
    os.chdir("/tmp")
    os.chdir(here)
    return None if os.getcwd() == here else "chdir back failed"


if __name__ == "__main__":
    main(attack, neighbour)
