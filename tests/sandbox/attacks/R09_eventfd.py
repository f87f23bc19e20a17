#!/usr/bin/env python3
# id: R09
# tries: exhaust kernel objects that need no file: eventfds until it fails
# expect: EMFILE at RLIMIT_NOFILE (4096)
# neighbour: an eventfd counts (write then read)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R09_eventfd.py [INFO.json]
import errno
import os

from attacklib import blocked, escaped, main


def attack():
    fds = []
    failure = None
    while len(fds) < 100000:
        try:
            fds.append(os.eventfd(0))
        except OSError as e:
            failure = e
            break
    for fd in fds:
        os.close(fd)
    if failure is None or failure.errno != errno.EMFILE or len(fds) > 4096:
        escaped.append("made %d eventfds, then %s" % (len(fds), failure))
    else:
        blocked.append("EMFILE after %d eventfds" % len(fds))


def neighbour():
    fd = os.eventfd(0)
    os.eventfd_write(fd, 3)
    n = os.eventfd_read(fd)
    os.close(fd)
    return None if n == 3 else "eventfd read %d" % n


if __name__ == "__main__":
    main(attack, neighbour)
