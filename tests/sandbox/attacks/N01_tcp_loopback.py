#!/usr/bin/env python3
# id: N01
# tries: reach a TCP listener of the host on 127.0.0.1 (the runner's, port in INFO): socket(AF_INET), connect
# expect: connect reaches only the sandbox's own loopback, where nothing listens on that port: ECONNREFUSED; the host listener sees no connection (runner checks)
# neighbour: a server and a client inside the sandbox talk over 127.0.0.1 and ::1 (TCP and UDP)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N01_tcp_loopback.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, connect_new, loopback_neighbour, main


def attack():
    port = INFO.get("tcp_port", 22)
    attempt("connect 127.0.0.1:%d" % port, lambda: connect_new(socket.AF_INET, ("127.0.0.1", port)),
            errno.ECONNREFUSED)


if __name__ == "__main__":
    main(attack, loopback_neighbour)
