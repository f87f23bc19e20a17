#!/usr/bin/env python3
# id: F24
# tries: clone3(2), whose flags live in memory a seccomp filter cannot read: clone3(NULL, 0) and clone3 with CLONE_NEWUSER
# expect: ENOSYS (not EINVAL/EFAULT, which would mean the call is reachable)
# neighbour: glibc falls back to clone: fork, threads and posix_spawn work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F24_clone3.py [INFO.json]
import ctypes
import errno
import os
import signal
import subprocess
import threading

from attacklib import attempt, main, sys_call

SYS_clone3 = 435


def attack():
    attempt("clone3(NULL, 0)", lambda: sys_call(SYS_clone3, None, 0), errno.ENOSYS)
    args = (ctypes.c_uint64 * 11)()
    args[0] = 0x10000000  # CLONE_NEWUSER
    args[4] = signal.SIGCHLD
    def call():
        pid = sys_call(SYS_clone3, ctypes.byref(args), ctypes.sizeof(args))
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    attempt("clone3(NEWUSER)", call, errno.ENOSYS)


def neighbour():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    return None if subprocess.run(["true"]).returncode == 0 else "posix_spawn of true failed"


if __name__ == "__main__":
    main(attack, neighbour)
