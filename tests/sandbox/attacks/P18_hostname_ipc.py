#!/usr/bin/env python3
# id: P18
# tries: change the host name and domain name; reach the host's System V shared memory (the runner creates a segment with a known key) and list /proc/sysvipc/shm
# expect: EPERM for sethostname/setdomainname; the name inside is 'corral'; the host segment is invisible (ENOENT); the host's name is unchanged (runner checks)
# neighbour: a private System V segment can be created and removed
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P18_hostname_ipc.py [INFO.json]
import ctypes
import errno
import os
import socket

from attacklib import INFO, attempt, blocked, escaped, libc, main, sys_call

SYS_sethostname, SYS_setdomainname = 170, 171
IPC_CREAT, IPC_RMID, IPC_PRIVATE = 0o1000, 0, 0


def attack():
    attempt("sethostname(evil)", lambda: sys_call(SYS_sethostname, b"evil", 4), errno.EPERM)
    attempt("setdomainname(evil)", lambda: sys_call(SYS_setdomainname, b"evil", 4), errno.EPERM)
    name = socket.gethostname()
    host = INFO.get("host_hostname")
    (escaped if host and name == host and host != "corral" else blocked).append("host name here: %s" % name)
    key = INFO.get("shm_key")
    if key:
        def find():
            r = libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), 0)
            if r < 0:
                raise OSError(ctypes.get_errno(), "shmget")
            return r
        attempt("shmget(host key)", find, errno.ENOENT)
        listed = [l for l in open("/proc/sysvipc/shm").read().splitlines()[1:] if l.split() and
                  int(l.split()[0]) == key]
        (escaped if listed else blocked).append("host key in /proc/sysvipc/shm: %s" % bool(listed))


def neighbour():
    sid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(4096), IPC_CREAT | 0o600)
    if sid < 0:
        return "shmget(IPC_PRIVATE) failed: %s" % os.strerror(ctypes.get_errno())
    libc.shmctl(sid, IPC_RMID, None)
    return None


if __name__ == "__main__":
    main(attack, neighbour)
