#!/usr/bin/env python3
# id: F06
# tries: hard-link host files from outside the workspace into it (~/owned-file, a canary outside, ~/.ssh/id_test, and via /proc/self/fd with AT_SYMLINK_FOLLOW) to write them later
# expect: EXDEV (different mount; EACCES for the masked ~/.ssh); no link appears
# neighbour: a hard link between two workspace files works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F06_hardlink_outside.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, main


def attack():
    home = os.environ["HOME"]
    outside = INFO.get("outside", os.path.dirname(os.getcwd()) + "/outside")
    attempt("link ~/owned-file", lambda: os.link(home + "/owned-file", "hl1"), errno.EXDEV)
    attempt("link outside/canary.txt", lambda: os.link(outside + "/canary.txt", "hl2"), errno.EXDEV)
    attempt("link ~/.ssh/id_test", lambda: os.link(home + "/.ssh/id_test", "hl3"), errno.EXDEV, errno.EACCES,
            errno.ENOENT)
    fd = os.open(home + "/owned-file", os.O_RDONLY)
    attempt("link /proc/self/fd/N (owned-file)", lambda: os.link("/proc/self/fd/%d" % fd, "hl4",
                                                                 follow_symlinks=True), errno.EXDEV)
    os.close(fd)


def neighbour():
    os.link("file.txt", "file-link.txt")
    same = os.stat("file.txt").st_ino == os.stat("file-link.txt").st_ino
    return None if same else "hard link has another inode"


if __name__ == "__main__":
    main(attack, neighbour)
