#!/usr/bin/env python3
# id: N20
# tries: go straight out without a proxy: TCP to 1.1.1.1:443 and to the cloud metadata address 169.254.169.254:80; look for proxy variables to follow
# expect: socket() fails with EPERM: no silent direct path exists
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N20_direct_egress.py [INFO.json]
import errno
import socket

from attacklib import attempt, main, socketpair_neighbour


def attack():
    for host, port in (("1.1.1.1", 443), ("169.254.169.254", 80)):
        s = attempt("socket for %s" % host, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), errno.EPERM)
        if s:
            s.settimeout(3)
            attempt("connect %s:%d" % (host, port), lambda: s.connect((host, port)), errno.ENETUNREACH,
                    errno.EPERM)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
