#!/usr/bin/env python3
# id: N08
# tries: AF_VSOCK (reaches the hypervisor host, ignores network namespaces): socket, socketpair, the family with high bits set; /dev/vsock
# expect: EPERM for the calls, ENOENT for /dev/vsock
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N08_vsock.py [INFO.json]
import ctypes
import errno
import os
import socket

from attacklib import attempt, main, socketpair_neighbour, sys_call

SYS_socket, SYS_socketpair = 41, 53
AF_VSOCK = 40


def attack():
    attempt("socket(VSOCK, STREAM)", lambda: sys_call(SYS_socket, AF_VSOCK, socket.SOCK_STREAM, 0), errno.EPERM)
    attempt("socket(VSOCK|1<<32)", lambda: sys_call(SYS_socket, AF_VSOCK | (1 << 32), socket.SOCK_STREAM, 0),
            errno.EPERM)
    pair = (ctypes.c_int * 2)()
    attempt("socketpair(VSOCK)", lambda: sys_call(SYS_socketpair, AF_VSOCK, socket.SOCK_STREAM, 0, pair), errno.EPERM)
    attempt("open /dev/vsock", lambda: os.open("/dev/vsock", os.O_RDWR), errno.ENOENT)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
