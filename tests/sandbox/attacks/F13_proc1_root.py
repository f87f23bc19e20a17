#!/usr/bin/env python3
# id: F13
# tries: reach the host through pid 1: list /proc/1/root, read /proc/1/root$HOME/.ssh/id_test, follow /proc/1/cwd, follow or open /proc/1/fd/N, list /proc/1/map_files
# expect: EACCES (pid 1 is corral's non-dumpable init, whose root is the sandbox's anyway)
# neighbour: /proc/self/root and /proc/self/fd work for the command itself
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F13_proc1_root.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    home = os.environ["HOME"]
    attempt("ls /proc/1/root", lambda: os.listdir("/proc/1/root/"), errno.EACCES)
    attempt("read /proc/1/root~/.ssh/id_test", lambda: open("/proc/1/root" + home + "/.ssh/id_test").read(),
            errno.EACCES, errno.ENOENT)
    attempt("readlink /proc/1/cwd", lambda: os.readlink("/proc/1/cwd"), errno.EACCES)
    # Listing /proc/1/fd may show fd numbers (for a root caller the dir is
    # ours); what matters is that none of them can be followed.
    for fd in ("0", "1", "2", "3", "4"):
        attempt("readlink /proc/1/fd/" + fd, lambda: os.readlink("/proc/1/fd/" + fd), errno.EACCES, errno.ENOENT)
        attempt("open /proc/1/fd/" + fd, lambda: os.open("/proc/1/fd/" + fd, os.O_RDONLY), errno.EACCES,
                errno.ENOENT)
    attempt("ls /proc/1/map_files", lambda: os.listdir("/proc/1/map_files"), errno.EACCES, errno.EPERM)


def neighbour():
    if sorted(os.listdir("/proc/self/root/")) != sorted(os.listdir("/")):
        return "/proc/self/root differs from /"
    return None if os.listdir("/proc/self/fd") else "/proc/self/fd empty"


if __name__ == "__main__":
    main(attack, neighbour)
