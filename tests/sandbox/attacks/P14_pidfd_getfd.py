#!/usr/bin/env python3
# id: P14
# tries: steal descriptors with pidfd_getfd: from pid 1 (holds the launcher's status pipe) and from a child
# expect: EPERM (seccomp) for pidfd_getfd
# neighbour: pidfd_open and pidfd_send_signal on the sandbox's own child work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P14_pidfd_getfd.py [INFO.json]
import errno
import os
import signal

from attacklib import attempt, blocked, blocked_child, main, sys_call

SYS_pidfd_open, SYS_pidfd_getfd, SYS_pidfd_send_signal = 434, 438, 424


def attack():
    try:
        init = sys_call(SYS_pidfd_open, 1, 0)
    except OSError as e:
        blocked.append("pidfd_open(1): %s" % errno.errorcode[e.errno])
        init = None
    if init is not None:
        for fd in (0, 4):
            attempt("pidfd_getfd(init, %d)" % fd, lambda: sys_call(SYS_pidfd_getfd, init, fd, 0), errno.EPERM)
        os.close(init)
    pid, w = blocked_child()
    pfd = sys_call(SYS_pidfd_open, pid, 0)
    attempt("pidfd_getfd(child, 0)", lambda: sys_call(SYS_pidfd_getfd, pfd, 0, 0), errno.EPERM)
    os.close(pfd)
    os.close(w)
    os.waitpid(pid, 0)


def neighbour():
    pid, w = blocked_child()
    pfd = sys_call(SYS_pidfd_open, pid, 0)
    sys_call(SYS_pidfd_send_signal, pfd, signal.SIGTERM, None, 0)
    st = os.waitpid(pid, 0)[1]
    os.close(pfd)
    os.close(w)
    return None if os.WIFSIGNALED(st) else "child not signalled through its pidfd"


if __name__ == "__main__":
    main(attack, neighbour)
