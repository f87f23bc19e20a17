#!/usr/bin/env python3
# id: P13
# tries: load or unload kernel code: init_module, finit_module, delete_module, kexec_load, kexec_file_load
# expect: EPERM (seccomp; ENOSYS would mean the filter missed them on this module-less kernel)
# neighbour: uname works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P13_modules_kexec.py [INFO.json]
import ctypes
import errno
import os

from attacklib import attempt, main, sys_call

SYS = {"init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320}


def attack():
    image = ctypes.create_string_buffer(64)
    attempt("init_module", lambda: sys_call(SYS["init_module"], image, 64, b""), errno.EPERM)
    fd = os.open("/dev/null", os.O_RDONLY)
    attempt("finit_module", lambda: sys_call(SYS["finit_module"], fd, b"", 0), errno.EPERM)
    attempt("delete_module", lambda: sys_call(SYS["delete_module"], b"battery", 0), errno.EPERM)
    attempt("kexec_load", lambda: sys_call(SYS["kexec_load"], 0, 0, None, 0), errno.EPERM)
    attempt("kexec_file_load", lambda: sys_call(SYS["kexec_file_load"], fd, fd, 0, b"", 0), errno.EPERM)
    os.close(fd)


def neighbour():
    return None if os.uname().sysname == "Linux" else "uname odd"


if __name__ == "__main__":
    main(attack, neighbour)
