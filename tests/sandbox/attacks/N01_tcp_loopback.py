#!/usr/bin/env python3
# id: N01
# tries: reach a TCP listener of the host on 127.0.0.1 (the runner's, port in INFO): socket(AF_INET), connect
# expect: socket() fails with EPERM (seccomp, network off); had it worked, connect would find only the sandbox's own loopback (ECONNREFUSED/ENETUNREACH); the host listener sees no connection (runner checks)
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N01_tcp_loopback.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, main, socketpair_neighbour


def attack():
    port = INFO.get("tcp_port", 22)
    s = attempt("socket(AF_INET, STREAM)", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), errno.EPERM)
    if s:
        s.settimeout(3)
        attempt("connect 127.0.0.1:%d" % port, lambda: s.connect(("127.0.0.1", port)), errno.ECONNREFUSED,
                errno.ENETUNREACH)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
