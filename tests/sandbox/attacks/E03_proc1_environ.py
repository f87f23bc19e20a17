#!/usr/bin/env python3
# id: E03
# tries: read the environment and command line of pid 1 (the sandbox's init; under plain bwrap it kept the pre-clearenv environment with every secret)
# expect: /proc/1/environ is EACCES or empty; the canary secret is in neither file
# neighbour: /proc/self/environ is readable and holds PATH
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E03_proc1_environ.py [INFO.json]
import errno

from attacklib import INFO, blocked, escaped, judge_errno, main


def attack():
    secret = INFO.get("secret", "corral-battery-secret")
    try:
        env = open("/proc/1/environ", "rb").read()
    except OSError as e:
        judge_errno("/proc/1/environ", e, errno.EACCES, errno.EPERM)
    else:
        if secret.encode() in env:
            escaped.append("/proc/1/environ holds the canary secret")
        else:
            (escaped if env else blocked).append("/proc/1/environ: %d bytes" % len(env))
    try:
        cmd = open("/proc/1/cmdline", "rb").read()
        (escaped if secret.encode() in cmd else blocked).append("/proc/1/cmdline: %r" % cmd[:60])
    except OSError as e:
        blocked.append("/proc/1/cmdline: %s" % errno.errorcode[e.errno])


def neighbour():
    return None if b"PATH=" in open("/proc/self/environ", "rb").read() else "own environ lacks PATH"


if __name__ == "__main__":
    main(attack, neighbour)
