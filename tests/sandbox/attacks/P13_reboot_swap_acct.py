#!/usr/bin/env python3
# id: P13
# tries: machine-wide switches: reboot(CAD_OFF), swapon/swapoff, acct, syslog(READ_ALL) of the kernel log, vhangup, iopl, ioperm, quotactl, fanotify_init
# expect: EPERM for every call (seccomp)
# neighbour: reading the clock works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P13_reboot_swap_acct.py [INFO.json]
import ctypes
import errno
import time

from attacklib import attempt, main, sys_call

SYS = {"reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "syslog": 103, "vhangup": 153, "iopl": 172,
       "ioperm": 173, "quotactl": 179, "fanotify_init": 300}


def attack():
    attempt("reboot(CAD_OFF)", lambda: sys_call(SYS["reboot"], 0xfee1dead, 672274793, 0, None), errno.EPERM)
    attempt("swapon", lambda: sys_call(SYS["swapon"], b"/nonexistent", 0), errno.EPERM)
    attempt("swapoff", lambda: sys_call(SYS["swapoff"], b"/nonexistent"), errno.EPERM)
    attempt("acct(NULL)", lambda: sys_call(SYS["acct"], None), errno.EPERM)
    buf = ctypes.create_string_buffer(4096)
    attempt("syslog(READ_ALL)", lambda: sys_call(SYS["syslog"], 3, buf, 4096), errno.EPERM)
    attempt("vhangup", lambda: sys_call(SYS["vhangup"]), errno.EPERM)
    attempt("iopl(3)", lambda: sys_call(SYS["iopl"], 3), errno.EPERM)
    attempt("ioperm(0x80)", lambda: sys_call(SYS["ioperm"], 0x80, 1, 1), errno.EPERM)
    attempt("quotactl", lambda: sys_call(SYS["quotactl"], 0x800007, b"/", 0, None), errno.EPERM)
    attempt("fanotify_init", lambda: sys_call(SYS["fanotify_init"], 0, 0), errno.EPERM)


def neighbour():
    return None if time.time() > 0 and time.monotonic() > 0 else "no clock"


if __name__ == "__main__":
    main(attack, neighbour)
