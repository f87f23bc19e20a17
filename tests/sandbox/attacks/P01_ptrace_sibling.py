#!/usr/bin/env python3
# id: P01
# tries: ptrace another process of the sandbox: PTRACE_ATTACH/PTRACE_SEIZE a child, PTRACE_TRACEME in a child, strace if installed
# expect: EPERM for every ptrace request
# neighbour: signalling and reaping a child works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P01_ptrace_sibling.py [INFO.json]
import errno
import os
import shutil
import signal
import subprocess

from attacklib import attempt, blocked, blocked_child, escaped, main, sys_call

SYS_ptrace = 101
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206


def attack():
    pid, w = blocked_child()
    attempt("PTRACE_ATTACH child", lambda: sys_call(SYS_ptrace, PTRACE_ATTACH, pid, 0, 0), errno.EPERM)
    attempt("PTRACE_SEIZE child", lambda: sys_call(SYS_ptrace, PTRACE_SEIZE, pid, 0, 0), errno.EPERM)
    os.close(w)
    os.waitpid(pid, 0)
    tm = os.fork()
    if tm == 0:
        try:
            sys_call(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0)
            os._exit(0)
        except OSError as e:
            os._exit(e.errno)
    status = os.waitpid(tm, 0)[1] >> 8
    if status == errno.EPERM:
        blocked.append("PTRACE_TRACEME: EPERM")
    else:
        escaped.append("PTRACE_TRACEME: %s" % (errno.errorcode.get(status, "succeeded")))
    if shutil.which("strace"):
        r = subprocess.run(["strace", "-o", "/dev/null", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (escaped if r.returncode == 0 else blocked).append("strace true: exit %d" % r.returncode)


def neighbour():
    pid, w = blocked_child()
    os.kill(pid, signal.SIGTERM)
    st = os.waitpid(pid, 0)[1]
    os.close(w)
    return None if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGTERM else "child status %d" % st


if __name__ == "__main__":
    main(attack, neighbour)
