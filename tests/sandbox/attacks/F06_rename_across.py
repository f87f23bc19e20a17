#!/usr/bin/env python3
# id: F06
# tries: rename tricks: move a workspace file onto .git/hooks/pre-commit, rename inside the read-only hooks, RENAME_EXCHANGE a workspace file with .git/config, move files between home and workspace
# expect: EXDEV (mount boundary), EROFS inside the read-only mount, EBUSY for a mount point; hooks and config unchanged
# neighbour: rename and RENAME_EXCHANGE between two workspace files work
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F06_rename_across.py [INFO.json]
import errno
import os

from attacklib import AT_FDCWD, attempt, main, sys_call

RENAME_EXCHANGE = 2
SYS_renameat2 = 316


def exchange(a, b):
    return sys_call(SYS_renameat2, AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE)


def attack():
    home = os.environ["HOME"]
    open("evil", "w").write("#!/bin/sh\necho pwned\n")
    os.chmod("evil", 0o755)
    attempt("rename evil -> .git/hooks/pre-commit", lambda: os.rename("evil", ".git/hooks/pre-commit"),
            errno.EXDEV, errno.EROFS)
    attempt("rename hooks/pre-commit.sample -> pre-commit",
            lambda: os.rename(".git/hooks/pre-commit.sample", ".git/hooks/pre-commit"), errno.EROFS)
    attempt("exchange evil <-> .git/config", lambda: exchange("evil", ".git/config"), errno.EXDEV, errno.EBUSY)
    attempt("rename file.txt -> ~/file.txt", lambda: os.rename("file.txt", home + "/file.txt"), errno.EXDEV)
    attempt("rename ~/.profile -> ws", lambda: os.rename(home + "/.profile", "profile"), errno.EXDEV, errno.EROFS)


def neighbour():
    open("a", "w").write("a")
    open("b", "w").write("b")
    exchange("a", "b")
    if open("a").read() != "b":
        return "RENAME_EXCHANGE did not swap"
    os.rename("a", "c")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
