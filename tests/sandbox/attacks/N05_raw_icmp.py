#!/usr/bin/env python3
# id: N05
# tries: raw and ping sockets: socket(AF_INET, SOCK_RAW, ICMP), socket(AF_INET, SOCK_DGRAM, ICMP), the ping program
# expect: EPERM for the sockets; ping fails
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N05_raw_icmp.py [INFO.json]
import errno
import shutil
import socket
import subprocess

from attacklib import attempt, blocked, escaped, main, socketpair_neighbour


def attack():
    attempt("socket(INET, RAW, ICMP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1), errno.EPERM)
    attempt("socket(INET, DGRAM, ICMP)", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 1), errno.EPERM)
    attempt("socket(INET6, RAW, ICMPV6)", lambda: socket.socket(socket.AF_INET6, socket.SOCK_RAW, 58), errno.EPERM)
    ping = shutil.which("ping")
    if ping:
        r = subprocess.run([ping, "-c1", "-W1", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (escaped if r.returncode == 0 else blocked).append("ping: exit %d" % r.returncode)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
