#!/usr/bin/env python3
# id: P06
# tries: TIOCSTI with high bits set in the 64-bit request word (CVE-2019-10063): the kernel ignores bits 32-63, so the filter must compare only the low 32 bits
# expect: EPERM for every variant
# neighbour: TIOCGWINSZ with the same high bits set still works (the rule is precise)
# needs: pty
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P06_tiocsti_highbits.py [INFO.json]
import ctypes
import errno
import os

from attacklib import SYS_ioctl, TIOCGWINSZ, TIOCSTI, attempt, escaped, main, pty_neighbour, stdin_has_input, sys_call


def attack():
    c = ctypes.c_char(b"#")
    for high in (1 << 32, 0xffffffff << 32, 1 << 63):
        attempt("TIOCSTI|0x%x on stdin" % high, lambda: sys_call(SYS_ioctl, 0, TIOCSTI | high, ctypes.byref(c)),
                errno.EPERM)
    if stdin_has_input():
        escaped.append("stdin became readable: %r" % os.read(0, 64))


def neighbour():
    ws = ctypes.create_string_buffer(8)
    sys_call(SYS_ioctl, 0, TIOCGWINSZ | (1 << 32), ws)
    return pty_neighbour()


if __name__ == "__main__":
    main(attack, neighbour)
