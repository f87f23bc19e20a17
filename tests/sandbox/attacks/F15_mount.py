#!/usr/bin/env python3
# id: F15
# tries: mount a tmpfs on /mnt, bind the home over a workspace directory, remount / read-write, change propagation
# expect: EPERM (seccomp, and no capabilities)
# neighbour: /proc/self/mountinfo is readable and shows the workspace mount
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F15_mount.py [INFO.json]
import errno
import os

from attacklib import attempt, main, sys_call

SYS_mount = 165
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def attack():
    os.mkdir("mnt")
    attempt("mount tmpfs /mnt", lambda: sys_call(SYS_mount, b"none", b"/mnt", b"tmpfs", 0, None), errno.EPERM)
    attempt("bind ~ onto ./mnt", lambda: sys_call(SYS_mount, os.environ["HOME"].encode(), b"mnt", None, MS_BIND,
                                                  None), errno.EPERM)
    attempt("remount / rw", lambda: sys_call(SYS_mount, None, b"/", None, MS_REMOUNT | MS_BIND, None), errno.EPERM)
    attempt("make / private", lambda: sys_call(SYS_mount, None, b"/", None, MS_REC | MS_PRIVATE, None), errno.EPERM)


def neighbour():
    info = open("/proc/self/mountinfo").read()
    return None if " " + os.getcwd() + " " in info else "workspace mount not in mountinfo"


if __name__ == "__main__":
    main(attack, neighbour)
