#!/usr/bin/env python3
# id: N22
# tries: with loopback working inside the sandbox, reach the host anyway: its TCP listeners on 127.0.0.1 and [::1], a TCP listener on every address of the host at each of its own addresses, a DNS query to a UDP listener there and on the host's 127.0.0.1, a name lookup through the system resolver
# expect: loopback is the sandbox's own: ECONNREFUSED (nothing listens on those ports there); the host's addresses are unreachable (ENETUNREACH); the lookup fails; no listener of the host sees a connection or a datagram (runner checks)
# neighbour: a server and a client inside the sandbox talk over 127.0.0.1 and ::1, TCP and UDP
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N22_loopback_stays_inside.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, blocked, connect_new, escaped, loopback_neighbour, main, udp_exchange

# A DNS query for example.com, type A.
QUERY = (b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
         b"\x07example\x03com\x00\x00\x01\x00\x01")


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def attack():
    if INFO.get("tcp_port"):
        attempt("TCP to the host's 127.0.0.1:%d" % INFO["tcp_port"],
                lambda: connect_new(socket.AF_INET, ("127.0.0.1", INFO["tcp_port"])), errno.ECONNREFUSED)
    if INFO.get("tcp6_port"):
        attempt("TCP to the host's [::1]:%d" % INFO["tcp6_port"],
                lambda: connect_new(socket.AF_INET6, ("::1", INFO["tcp6_port"])), errno.ECONNREFUSED)
    if INFO.get("udp_port"):
        attempt("DNS query to the host's 127.0.0.1:%d" % INFO["udp_port"],
                lambda: udp_exchange(socket.AF_INET, ("127.0.0.1", INFO["udp_port"]), QUERY), errno.ECONNREFUSED)
    addrs = INFO.get("host_addrs") or []
    if not addrs:
        print("NOTE the host has no address but loopback: only loopback was tried")
    for addr in addrs:
        if INFO.get("tcp_any_port"):
            attempt("TCP to the host's %s:%d" % (addr, INFO["tcp_any_port"]),
                    lambda: connect_new(family_of(addr), (addr, INFO["tcp_any_port"])), errno.ENETUNREACH)
        if INFO.get("udp_any_port"):
            attempt("DNS query to the host's %s:%d" % (addr, INFO["udp_any_port"]),
                    lambda: udp_exchange(family_of(addr), (addr, INFO["udp_any_port"]), QUERY), errno.ENETUNREACH)
    try:
        socket.getaddrinfo("example.com", 443)
        escaped.append("resolved example.com")
    except socket.gaierror as e:
        blocked.append("resolve example.com: %s" % (e.args[1] if len(e.args) > 1 else e))


if __name__ == "__main__":
    main(attack, loopback_neighbour)
