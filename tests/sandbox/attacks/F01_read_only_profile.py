#!/usr/bin/env python3
# id: F01
# tries: with --profile read-only, write the workspace: create a file, append to one, remove one, mkdir
# expect: EROFS for each
# neighbour: the workspace is readable and the private /tmp is writable
# needs: -
# sandbox-args: --profile read-only
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F01_read_only_profile.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    attempt("create new.txt", lambda: open("new.txt", "w").close(), errno.EROFS)
    attempt("append file.txt", lambda: open("file.txt", "a").write("x"), errno.EROFS)
    attempt("unlink file.txt", lambda: os.unlink("file.txt"), errno.EROFS)
    attempt("mkdir d", lambda: os.mkdir("d"), errno.EROFS)


def neighbour():
    if open("file.txt").read() != "workspace file\n":
        return "file.txt unreadable"
    open("/tmp/scratch", "w").write("ok")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
