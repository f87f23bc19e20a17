#!/usr/bin/env python3
# id: N10
# tries: connect to an abstract Unix socket of the host (the runner listens on \0corral-battery-<token>, like X11's @/tmp/.X11-unix/X0)
# expect: EPERM (connect denied) or ECONNREFUSED (abstract names are per network namespace); the host listener sees nothing
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N10_abstract_socket.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, main, socketpair_neighbour


def attack():
    for name in filter(None, (INFO.get("abstract_name"), "/tmp/.X11-unix/X0")):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        attempt("connect @" + name, lambda: s.connect("\0" + name), errno.EPERM, errno.ECONNREFUSED)
        s.close()


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
