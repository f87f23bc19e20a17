#!/usr/bin/env python3
# id: P02
# tries: read and write other processes' memory with process_vm_readv (pid 1, a child) and process_vm_writev (a child)
# expect: EPERM (seccomp)
# neighbour: reading the process's own memory through /proc/self/mem works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P02_process_vm.py [INFO.json]
import ctypes
import errno
import os

from attacklib import attempt, blocked_child, main, sys_call

SYS_process_vm_readv, SYS_process_vm_writev = 310, 311


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def attack():
    buf = ctypes.create_string_buffer(64)
    local = IoVec(ctypes.cast(buf, ctypes.c_void_p), 64)
    remote = IoVec(ctypes.cast(buf, ctypes.c_void_p), 64)  # the same address in a forked child
    pid, w = blocked_child()
    for what, nr, target in (("readv pid 1", SYS_process_vm_readv, 1), ("readv child", SYS_process_vm_readv, pid),
                             ("writev child", SYS_process_vm_writev, pid)):
        attempt(what, lambda: sys_call(nr, target, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0), errno.EPERM)
    os.close(w)
    os.waitpid(pid, 0)


def neighbour():
    buf = ctypes.create_string_buffer(b"battery-probe")
    with open("/proc/self/mem", "rb") as f:
        f.seek(ctypes.addressof(buf))
        return None if f.read(13) == b"battery-probe" else "own memory read back wrong"


if __name__ == "__main__":
    main(attack, neighbour)
