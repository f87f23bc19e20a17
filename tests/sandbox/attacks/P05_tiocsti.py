#!/usr/bin/env python3
# id: P05
# tries: push characters into the terminal's input queue with TIOCSTI (CVE-2017-5226): on stdin (a pty the runner owns) and on a pty of the sandbox's own
# expect: EPERM (seccomp); nothing reaches any input queue (the runner checks its pty)
# neighbour: the terminal works: isatty, TIOCGWINSZ, tcgetattr; a new pty pair passes data
# needs: pty
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P05_tiocsti.py [INFO.json]
import errno
import fcntl
import os

from attacklib import TIOCSTI, attempt, escaped, main, pty_neighbour, stdin_has_input


def attack():
    attempt("TIOCSTI on stdin", lambda: fcntl.ioctl(0, TIOCSTI, b"#"), errno.EPERM)
    master, slave = os.openpty()
    attempt("TIOCSTI on own pty", lambda: fcntl.ioctl(slave, TIOCSTI, b"#"), errno.EPERM)
    os.close(master)
    os.close(slave)
    if stdin_has_input():
        escaped.append("stdin became readable: %r" % os.read(0, 64))


if __name__ == "__main__":
    main(attack, pty_neighbour)
