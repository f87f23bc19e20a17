#!/usr/bin/env python3
# id: P12
# tries: io_uring (which can open sockets and files past a syscall filter): io_uring_setup, io_uring_enter on a bogus fd, io_uring_register
# expect: EPERM for all three (EBADF from enter would mean the call is reachable)
# neighbour: epoll works for asynchronous I/O
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P12_io_uring.py [INFO.json]
import ctypes
import errno
import os
import select

from attacklib import attempt, main, sys_call

SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register = 425, 426, 427


def attack():
    params = ctypes.create_string_buffer(120)
    attempt("io_uring_setup(4)", lambda: sys_call(SYS_io_uring_setup, 4, params), errno.EPERM)
    attempt("io_uring_enter(99)", lambda: sys_call(SYS_io_uring_enter, 99, 1, 0, 0, None, 0), errno.EPERM)
    attempt("io_uring_register(99)", lambda: sys_call(SYS_io_uring_register, 99, 0, None, 0), errno.EPERM)


def neighbour():
    r, w = os.pipe()
    ep = select.epoll()
    ep.register(r, select.EPOLLIN)
    os.write(w, b"x")
    ready = ep.poll(1)
    ep.close()
    return None if ready and ready[0][0] == r else "epoll saw nothing"


if __name__ == "__main__":
    main(attack, neighbour)
