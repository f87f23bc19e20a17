#!/usr/bin/env python3
# id: F25
# tries: enter namespaces with setns (mnt, user, net of our own process) and use the new mount API: open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr
# expect: EPERM for every call
# neighbour: namespace links in /proc/self/ns are readable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F25_setns_mountapi.py [INFO.json]
import errno
import os

from attacklib import AT_FDCWD, attempt, main, sys_call

SYS = {"setns": 308, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
       "fspick": 433, "mount_setattr": 442}


def attack():
    for ns in ("mnt", "user", "net"):
        fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
        attempt("setns(%s)" % ns, lambda: sys_call(SYS["setns"], fd, 0), errno.EPERM)
        os.close(fd)
    attempt("open_tree(/, CLONE)", lambda: sys_call(SYS["open_tree"], AT_FDCWD, b"/", 1), errno.EPERM)
    attempt("move_mount", lambda: sys_call(SYS["move_mount"], -1, b"", -1, b"", 0), errno.EPERM)
    attempt("fsopen(tmpfs)", lambda: sys_call(SYS["fsopen"], b"tmpfs", 0), errno.EPERM)
    attempt("fsconfig", lambda: sys_call(SYS["fsconfig"], -1, 0, None, None, 0), errno.EPERM)
    attempt("fsmount", lambda: sys_call(SYS["fsmount"], -1, 0, 0), errno.EPERM)
    attempt("fspick(/)", lambda: sys_call(SYS["fspick"], AT_FDCWD, b"/", 0), errno.EPERM)
    attempt("mount_setattr", lambda: sys_call(SYS["mount_setattr"], -1, b"", 0, None, 0), errno.EPERM)


def neighbour():
    return None if os.readlink("/proc/self/ns/mnt").startswith("mnt:") else "ns link unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
