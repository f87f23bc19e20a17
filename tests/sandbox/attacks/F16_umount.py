#!/usr/bin/env python3
# id: F16
# tries: unmount what hides or protects: umount2 /proc, lazily detach .git/hooks, ~/.ssh's mask and /run
# expect: EPERM; afterwards ~/.ssh/id_test is still unreadable and .git/hooks still read-only
# neighbour: mountinfo still lists the protections
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F16_umount.py [INFO.json]
import errno
import os

from attacklib import attempt, main, sys_call

SYS_umount2 = 166
MNT_DETACH = 2


def attack():
    home = os.environ["HOME"]
    attempt("umount /proc", lambda: sys_call(SYS_umount2, b"/proc", 0), errno.EPERM)
    attempt("detach .git/hooks", lambda: sys_call(SYS_umount2, b".git/hooks", MNT_DETACH), errno.EPERM)
    attempt("detach ~/.ssh", lambda: sys_call(SYS_umount2, (home + "/.ssh").encode(), MNT_DETACH), errno.EPERM)
    attempt("detach /run", lambda: sys_call(SYS_umount2, b"/run", MNT_DETACH), errno.EPERM)
    attempt("then read ~/.ssh/id_test", lambda: open(home + "/.ssh/id_test").read(), errno.EACCES, errno.ENOENT)
    attempt("then write .git/hooks/pre-commit", lambda: open(".git/hooks/pre-commit", "w").close(), errno.EROFS)


def neighbour():
    info = open("/proc/self/mountinfo").read()
    return None if "/.git/hooks " in info else ".git/hooks mount missing from mountinfo"


if __name__ == "__main__":
    main(attack, neighbour)
