#!/usr/bin/env python3
# id: F14
# tries: upgrade read-only access through /proc/self/fd: reopen a read-only host file (outside the workspace) for writing, create files through an O_PATH fd of its directory (openat and /proc/self/fd/N/name)
# expect: EROFS: the mount decides, not the path taken
# neighbour: reopening a workspace file through /proc/self/fd for writing works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F14_proc_fd_reopen.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, main


def attack():
    # Not the home: its writes land in the sandbox's home layer.
    outside = INFO.get("outside", os.path.dirname(os.getcwd()) + "/outside")
    fd = os.open(outside + "/canary.txt", os.O_RDONLY)
    attempt("reopen outside/canary.txt O_WRONLY",
            lambda: os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND), errno.EROFS)
    os.close(fd)
    d = os.open(outside, os.O_PATH | os.O_DIRECTORY)
    attempt("openat(outside O_PATH, pwn, O_CREAT)",
            lambda: os.open("pwn", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=d), errno.EROFS, errno.EBADF)
    attempt("open /proc/self/fd/N/pwn O_CREAT",
            lambda: os.open("/proc/self/fd/%d/pwn" % d, os.O_CREAT | os.O_WRONLY, 0o644), errno.EROFS)
    os.close(d)


def neighbour():
    fd = os.open("file.txt", os.O_RDONLY)
    w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"appended\n")
    os.close(w)
    os.close(fd)
    return None if open("file.txt").read().endswith("appended\n") else "append lost"


if __name__ == "__main__":
    main(attack, neighbour)
