#!/usr/bin/env python3
# id: P11
# tries: userfaultfd(2) (a classic kernel-exploit helper) and /dev/userfaultfd
# expect: EPERM (seccomp); /dev/userfaultfd does not exist (ENOENT)
# neighbour: anonymous mmap, mprotect and madvise work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P11_userfaultfd.py [INFO.json]
import errno
import mmap
import os

from attacklib import attempt, main, sys_call

SYS_userfaultfd = 323


def attack():
    attempt("userfaultfd(O_CLOEXEC)", lambda: sys_call(SYS_userfaultfd, os.O_CLOEXEC), errno.EPERM)
    attempt("open /dev/userfaultfd", lambda: os.open("/dev/userfaultfd", os.O_RDWR), errno.ENOENT)


def neighbour():
    m = mmap.mmap(-1, 1 << 20)
    m[:5] = b"hello"
    m.madvise(mmap.MADV_DONTNEED)
    m.close()
    return None


if __name__ == "__main__":
    main(attack, neighbour)
