#!/usr/bin/env python3
# id: N03
# tries: send UDP datagrams: to the host's UDP listener on 127.0.0.1 (and wait for an answer), and to 8.8.8.8:53
# expect: the datagram to 127.0.0.1 stays on the sandbox's own loopback, whose kernel answers ECONNREFUSED (nothing listens there); 8.8.8.8 is unreachable (ENETUNREACH); nothing arrives at the host listener (runner checks)
# neighbour: messages over an AF_UNIX SOCK_SEQPACKET socketpair with send() (glibc makes it the sendto system call); UDP between two sockets inside the sandbox
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N03_udp_sendto.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, loopback_neighbour, main, udp_exchange


def attack():
    port = INFO.get("udp_port", 9)
    attempt("datagram to 127.0.0.1:%d, then an answer" % port,
            lambda: udp_exchange(socket.AF_INET, ("127.0.0.1", port), b"x"), errno.ECONNREFUSED)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attempt("sendto 8.8.8.8:53", lambda: s.sendto(b"x", ("8.8.8.8", 53)), errno.ENETUNREACH)
    s.close()


def neighbour():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        a.send(b"one")  # glibc's send() is the sendto system call with no address
        a.send(b"two")
    except OSError as e:
        return "send() on a connected AF_UNIX socketpair failed: %s" % errno.errorcode[e.errno]
    got = b.recv(8) + b.recv(8)
    if got != b"onetwo":
        return "messages lost: %r" % got
    return loopback_neighbour()


if __name__ == "__main__":
    main(attack, neighbour)
