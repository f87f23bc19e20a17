#!/usr/bin/env python3
# id: F12
# tries: workspace whose .git is a file (gitdir: a directory inside the workspace): rewrite, rename and remove the .git file, write the target's hooks and config
# expect: EROFS for writes, EBUSY for rename/unlink of the pointer; host pointer, hooks and config unchanged
# neighbour: git add and git commit work (objects go to the target gitdir)
# needs: gitfile
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F12_gitfile.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main


def attack():
    attempt("rewrite .git", lambda: open(".git", "w").write("gitdir: /tmp/evil\n"), errno.EROFS)
    attempt("rename .git", lambda: os.rename(".git", "gitfile.aside"), errno.EBUSY)
    attempt("unlink .git", lambda: os.unlink(".git"), errno.EBUSY)
    def hook():
        with open(".repo/hooks/pre-commit", "w") as f:
            f.write("#!/bin/sh\necho pwned\n")
    attempt("write .repo/hooks/pre-commit", hook, errno.EROFS)
    attempt("append .repo/config", lambda: open(".repo/config", "a").write("[core]\n\tfsmonitor = x\n"),
            errno.EROFS)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
