#!/usr/bin/env python3
# id: P02
# tries: open the init's memory and maps: /proc/1/mem read-write and read-only, /proc/1/maps, /proc/1/pagemap
# expect: EACCES or EPERM (init is non-dumpable)
# neighbour: /proc/self/maps and /proc/self/status are readable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P02_proc_mem.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    attempt("open /proc/1/mem r+", lambda: os.open("/proc/1/mem", os.O_RDWR), errno.EACCES, errno.EPERM)
    attempt("open /proc/1/mem r", lambda: os.open("/proc/1/mem", os.O_RDONLY), errno.EACCES, errno.EPERM)
    attempt("read /proc/1/maps", lambda: open("/proc/1/maps").read(), errno.EACCES, errno.EPERM)
    attempt("open /proc/1/pagemap", lambda: os.open("/proc/1/pagemap", os.O_RDONLY), errno.EACCES, errno.EPERM)


def neighbour():
    if "python" not in open("/proc/self/maps").read():
        return "/proc/self/maps lacks the interpreter"
    return None if "Pid:" in open("/proc/self/status").read() else "/proc/self/status unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
