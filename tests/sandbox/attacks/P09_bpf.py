#!/usr/bin/env python3
# id: P09
# tries: bpf(2): BPF_MAP_CREATE (array map) and BPF_PROG_LOAD (socket filter)
# expect: EPERM (seccomp)
# neighbour: classic BPF on a socket (SO_ATTACH_FILTER on an AF_UNIX socketpair) works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P09_bpf.py [INFO.json]
import ctypes
import errno
import os
import socket
import struct

from attacklib import attempt, main, sys_call

SYS_bpf = 321


def attack():
    attr = ctypes.create_string_buffer(struct.pack("<IIII", 2, 4, 4, 1) + b"\0" * 112)  # ARRAY, 4, 4, 1 entry
    attempt("BPF_MAP_CREATE", lambda: sys_call(SYS_bpf, 0, attr, 128), errno.EPERM)
    insn = ctypes.create_string_buffer(struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0))
    lic = ctypes.create_string_buffer(b"GPL")
    prog = ctypes.create_string_buffer(struct.pack("<IIQQ", 1, 2, ctypes.addressof(insn), ctypes.addressof(lic))
                                       + b"\0" * 104)
    attempt("BPF_PROG_LOAD", lambda: sys_call(SYS_bpf, 5, prog, 128), errno.EPERM)


def neighbour():
    a, b = socket.socketpair()
    insn = ctypes.create_string_buffer(struct.pack("<HBBI", 0x06, 0, 0, 0xffff))  # accept everything
    a.setsockopt(socket.SOL_SOCKET, 26, struct.pack("HxxxxxxQ", 1, ctypes.addressof(insn)))  # SO_ATTACH_FILTER
    os.write(b.fileno(), b"x")
    return None if os.read(a.fileno(), 1) == b"x" else "filtered socket lost data"


if __name__ == "__main__":
    main(attack, neighbour)
