#!/usr/bin/env python3
# id: N10
# tries: connect to an abstract Unix socket of the host (the runner listens on \0corral-battery-<token>, like X11's @/tmp/.X11-unix/X0): from socket(AF_UNIX), and from a socketpair end
# expect: EPERM at socket() (Unix sockets come only from socketpair with the network off); a socketpair end is connected already (EISCONN) and abstract names belong to the network namespace (ECONNREFUSED); the host listener sees nothing (runner checks)
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
    attempt("socket(AF_UNIX, STREAM)", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close(), errno.EPERM)
    a, b = socket.socketpair()
    for name in filter(None, (INFO.get("abstract_name"), "/tmp/.X11-unix/X0")):
        attempt("connect a socketpair end to @" + name, lambda: a.connect("\0" + name), errno.ECONNREFUSED,
                errno.EISCONN)
    a.close()
    b.close()


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
