#!/usr/bin/env python3
# id: N20
# tries: go straight out without a proxy: TCP to 1.1.1.1:443 and to the cloud metadata address 169.254.169.254:80; look for proxy variables to follow
# expect: ENETUNREACH: the sandbox's network namespace routes nothing out; no silent direct path exists
# neighbour: a server and a client inside the sandbox talk over 127.0.0.1 and ::1
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N20_direct_egress.py [INFO.json]
import errno
import os
import socket

from attacklib import attempt, blocked, escaped, connect_new, loopback_neighbour, main


def attack():
    for host, port in (("1.1.1.1", 443), ("169.254.169.254", 80)):
        attempt("connect %s:%d" % (host, port), lambda: connect_new(socket.AF_INET, (host, port)), errno.ENETUNREACH)
    proxies = [v for v in os.environ if v.lower() in ("http_proxy", "https_proxy", "all_proxy")]
    (escaped if proxies else blocked).append("proxy variables: %s" % (proxies or "none"))


if __name__ == "__main__":
    main(attack, loopback_neighbour)
