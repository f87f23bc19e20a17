#!/usr/bin/env python3
# id: N07
# tries: netlink: socket(AF_NETLINK, NETLINK_ROUTE) to change interfaces; look at the interfaces the sandbox has
# expect: EPERM at socket() (network off allows only AF_UNIX); /proc/net/dev shows only lo (a private network namespace)
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N07_netlink.py [INFO.json]
import errno
import socket

from attacklib import attempt, blocked, escaped, main, socketpair_neighbour


def attack():
    s = attempt("socket(NETLINK, ROUTE)", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0), errno.EPERM)
    if s:
        s.close()
    ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
    (blocked if ifaces == ["lo"] else escaped).append("interfaces: %s" % ifaces)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
