#!/usr/bin/env python3
# id: N02
# tries: reach the host's TCP listener on [::1]
# expect: socket(AF_INET6) fails with EPERM; no connection reaches the host listener
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N02_tcp_loopback_v6.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, main, socketpair_neighbour


def attack():
    port = INFO.get("tcp6_port") or 22
    s = attempt("socket(AF_INET6, STREAM)", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM), errno.EPERM)
    if s:
        s.settimeout(3)
        attempt("connect [::1]:%d" % port, lambda: s.connect(("::1", port)), errno.ECONNREFUSED, errno.ENETUNREACH,
                errno.EADDRNOTAVAIL)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
