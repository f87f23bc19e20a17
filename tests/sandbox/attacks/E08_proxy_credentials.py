#!/usr/bin/env python3
# id: E08
# tries: reuse the host's proxy credentials: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, http_proxy, NO_PROXY carry a user:token pair in corral's environment
# expect: none of them is inherited (with network off there is no proxy; in proxy mode corral sets its own, per-session values)
# neighbour: programs are still found on PATH
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E08_proxy_credentials.py [INFO.json]
import os
import shutil

from attacklib import INFO, blocked, escaped, main


def attack():
    names = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY"]
    present = [n for n in names if n in os.environ]
    (escaped if present else blocked).append("proxy variables present: %s" % (present or "none"))
    secret = INFO.get("secret", "corral-battery-secret")
    if any(secret in v for v in os.environ.values()):
        escaped.append("proxy token visible")


def neighbour():
    return None if shutil.which("sh") and shutil.which("python3") else "PATH lookup failed"


if __name__ == "__main__":
    main(attack, neighbour)
