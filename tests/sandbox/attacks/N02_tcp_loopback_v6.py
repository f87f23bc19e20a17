#!/usr/bin/env python3
# id: N02
# tries: reach the host's TCP listener on [::1]
# expect: connect reaches only the sandbox's own loopback: ECONNREFUSED (EADDRNOTAVAIL where IPv6 is off); no connection reaches the host listener (runner checks)
# neighbour: a server and a client inside the sandbox talk over 127.0.0.1 and ::1 (TCP and UDP)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N02_tcp_loopback_v6.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, connect_new, loopback_neighbour, main


def attack():
    port = INFO.get("tcp6_port") or 22
    attempt("connect [::1]:%d" % port, lambda: connect_new(socket.AF_INET6, ("::1", port)), errno.ECONNREFUSED,
            errno.EADDRNOTAVAIL)


if __name__ == "__main__":
    main(attack, loopback_neighbour)
