#!/usr/bin/env python3
# id: P07
# tries: TIOCLINUX (paste selection, set selection, with and without high bits) on the terminal; open the Linux console devices /dev/tty0, /dev/console, /dev/vcs
# expect: EPERM for TIOCLINUX (seccomp), ENOENT for the console devices
# neighbour: tcgetattr and TIOCGWINSZ on the terminal work
# needs: pty
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P07_tioclinux.py [INFO.json]
import ctypes
import errno
import os

from attacklib import SYS_ioctl, TIOCLINUX, attempt, main, pty_neighbour, sys_call


def attack():
    for sub in (2, 3):  # TIOCL_SETSEL, TIOCL_PASTESEL
        arg = ctypes.create_string_buffer(bytes([sub]) + b"\0" * 15)
        for high in (0, 1 << 32):
            attempt("TIOCLINUX %d|0x%x" % (sub, high), lambda: sys_call(SYS_ioctl, 0, TIOCLINUX | high, arg),
                    errno.EPERM)
    for dev in ("/dev/tty0", "/dev/console", "/dev/vcs", "/dev/tty1"):
        attempt("open " + dev, lambda: os.open(dev, os.O_RDWR), errno.ENOENT)


if __name__ == "__main__":
    main(attack, pty_neighbour)
