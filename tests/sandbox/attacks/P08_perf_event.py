#!/usr/bin/env python3
# id: P08
# tries: perf_event_open: a software counter on this process and a system-wide one on CPU 0
# expect: EPERM (seccomp; not EACCES from perf_event_paranoid)
# neighbour: process CPU accounting (times, getrusage) works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P08_perf_event.py [INFO.json]
import ctypes
import errno
import os
import resource

from attacklib import attempt, main, sys_call

SYS_perf_event_open = 298


def attack():
    attr = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(attr, 0).value = 1  # PERF_TYPE_SOFTWARE
    ctypes.c_uint32.from_buffer(attr, 4).value = 128  # size
    attempt("perf_event_open(self)", lambda: sys_call(SYS_perf_event_open, attr, 0, -1, -1, 0), errno.EPERM)
    attempt("perf_event_open(cpu 0)", lambda: sys_call(SYS_perf_event_open, attr, -1, 0, -1, 0), errno.EPERM)


def neighbour():
    os.times()
    return None if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0 else "getrusage empty"


if __name__ == "__main__":
    main(attack, neighbour)
