#!/usr/bin/env python3
# id: P01
# tries: ptrace the sandbox's pid 1 (corral's init, which holds the launcher's status pipe): PTRACE_ATTACH and PTRACE_SEIZE
# expect: EPERM (seccomp denies ptrace; init is non-dumpable as well)
# neighbour: fork + exec + wait of a child works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P01_ptrace_init.py [INFO.json]
import errno
import os
import subprocess

from attacklib import attempt, main, sys_call

SYS_ptrace = 101
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206


def attack():
    attempt("PTRACE_ATTACH 1", lambda: sys_call(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0), errno.EPERM)
    attempt("PTRACE_SEIZE 1", lambda: sys_call(SYS_ptrace, PTRACE_SEIZE, 1, 0, 0), errno.EPERM)


def neighbour():
    pid = os.fork()
    if pid == 0:
        os.execv("/bin/sh", ["sh", "-c", "exit 4"])
    if os.waitpid(pid, 0)[1] >> 8 != 4:
        return "fork+exec child status wrong"
    return None if subprocess.run(["/bin/true"]).returncode == 0 else "/bin/true failed"


if __name__ == "__main__":
    main(attack, neighbour)
