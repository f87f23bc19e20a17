#!/usr/bin/env python3
# id: P18
# tries: open host-wide kernel knobs for writing (never writing anything): /proc/sys/kernel/core_pattern (host code execution), modprobe, vm/drop_caches, /proc/sysrq-trigger, /sys/kernel/uevent_helper
# expect: EACCES, EPERM or EROFS at open (ENOENT where the file does not exist); a root caller is uid 0 of the host, so only Landlock and the read-only /sys keep these closed
# neighbour: reading /proc/sys/kernel/ostype works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P18_proc_sys.py [INFO.json]
import errno
import os

from attacklib import attempt, main

KNOBS = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
         "/proc/sys/kernel/panic", "/proc/sysrq-trigger", "/sys/kernel/uevent_helper",
         "/proc/sys/fs/binfmt_misc/register"]


def attack():
    for path in KNOBS:
        def probe():
            fd = os.open(path, os.O_WRONLY)
            os.close(fd)  # opened for writing is already too much: close without writing
        attempt("open %s for writing" % path, probe, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT)


def neighbour():
    return None if open("/proc/sys/kernel/ostype").read().strip() == "Linux" else "ostype unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
