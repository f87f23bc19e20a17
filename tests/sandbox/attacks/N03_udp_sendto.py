#!/usr/bin/env python3
# id: N03
# tries: send UDP datagrams: to the host's UDP listener on 127.0.0.1 and to 8.8.8.8:53
# expect: socket(AF_INET, DGRAM) fails with EPERM; nothing arrives at the host listener
# neighbour: messages over an AF_UNIX SOCK_SEQPACKET socketpair with send() (glibc makes it the sendto system call); datagram sockets are refused with the network off (N21)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N03_udp_sendto.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, main


def attack():
    s = attempt("socket(AF_INET, DGRAM)", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), errno.EPERM)
    if s:
        attempt("sendto 127.0.0.1", lambda: s.sendto(b"x", ("127.0.0.1", INFO.get("udp_port", 9))), errno.EPERM,
                errno.ENETUNREACH)
        attempt("sendto 8.8.8.8:53", lambda: s.sendto(b"x", ("8.8.8.8", 53)), errno.EPERM, errno.ENETUNREACH)


def neighbour():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        a.send(b"one")  # glibc's send() is the sendto system call with no address
        a.send(b"two")
    except OSError as e:
        return "send() on a connected AF_UNIX socketpair failed: %s" % errno.errorcode[e.errno]
    got = b.recv(8) + b.recv(8)
    return None if got == b"onetwo" else "messages lost: %r" % got


if __name__ == "__main__":
    main(attack, neighbour)
