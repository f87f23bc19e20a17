#!/usr/bin/env python3
# id: F01
# tries: write next to the workspace: create ../pwn, append to a host canary outside the workspace, mkdir, move a workspace file out, write /var/tmp
# expect: EROFS (EXDEV for the rename out of the workspace mount); the canary is unchanged
# neighbour: mkdir, rename and unlink inside the workspace work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F01_write_outside_ws.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, main


def attack():
    parent = os.path.dirname(os.getcwd())
    outside = INFO.get("outside", parent + "/outside")
    attempt("create ../pwn", lambda: open(parent + "/pwn", "w").close(), errno.EROFS)
    attempt("append outside/canary.txt", lambda: open(outside + "/canary.txt", "a").write("x"), errno.EROFS)
    attempt("mkdir ../newdir", lambda: os.mkdir(parent + "/newdir"), errno.EROFS)
    attempt("rename file.txt to ../moved", lambda: os.rename("file.txt", parent + "/moved"), errno.EXDEV, errno.EROFS)
    attempt("unlink outside/canary.txt", lambda: os.unlink(outside + "/canary.txt"), errno.EROFS)
    attempt("create /var/tmp/pwn", lambda: open("/var/tmp/pwn-corral-battery", "w").close(), errno.EROFS)


def neighbour():
    os.mkdir("d")
    open("d/a", "w").close()
    os.rename("d/a", "d/b")
    os.unlink("d/b")
    os.rmdir("d")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
