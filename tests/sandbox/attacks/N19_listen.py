#!/usr/bin/env python3
# id: N19
# tries: offer a service: bind and listen on 127.0.0.1, on an abstract Unix name and on a Unix socket in the workspace
# expect: EPERM for bind (network off denies bind, listen, accept)
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N19_listen.py [INFO.json]
import errno
import socket

from attacklib import attempt, main, socketpair_neighbour


def attack():
    s = attempt("socket(AF_INET)", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), errno.EPERM)
    if s:
        attempt("bind 127.0.0.1:8000", lambda: s.bind(("127.0.0.1", 8000)), errno.EPERM)
    for what, addr in (("abstract", "\0corral-battery-inside"), ("workspace path", "svc.sock")):
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        attempt("bind %s" % what, lambda: u.bind(addr), errno.EPERM)
        u.close()


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
