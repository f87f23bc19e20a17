#!/usr/bin/env python3
# id: N06
# tries: link-layer sockets: socket(AF_PACKET, SOCK_RAW, ETH_P_ALL), also with high bits set in the family word
# expect: EPERM
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N06_af_packet.py [INFO.json]
import errno
import socket

from attacklib import attempt, main, socketpair_neighbour, sys_call

SYS_socket = 41


def attack():
    attempt("socket(PACKET, RAW, ALL)", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0x0300), errno.EPERM)
    attempt("socket(PACKET|1<<32, RAW)", lambda: sys_call(SYS_socket, 17 | (1 << 32), socket.SOCK_RAW, 0x0300),
            errno.EPERM)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
