#!/usr/bin/env python3
# id: F12
# tries: workspace whose .git is a symlink to a git directory inside the workspace (.git -> .realgit, as some repository tools lay out checkouts): write hooks and config through it, re-point the symlink
# expect: EROFS/EBUSY, or corral refuses to start because it cannot protect the layout; host files unchanged
# neighbour: git add and git commit work
# needs: git-symlink
# sandbox-args: -
# refusal-ok: yes
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F12_git_symlink.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main


def attack():
    def hook():
        with open(".git/hooks/pre-commit", "w") as f:
            f.write("#!/bin/sh\necho pwned\n")
        os.chmod(".git/hooks/pre-commit", 0o755)
    attempt("write .git/hooks/pre-commit", hook, errno.EROFS, errno.EACCES)
    attempt("append .git/config", lambda: open(".git/config", "a").write("[core]\n\tfsmonitor = echo pwned\n"),
            errno.EROFS, errno.EACCES)
    def repoint():
        os.symlink("elsewhere", ".git.new")
        os.rename(".git.new", ".git")
    attempt("re-point the .git symlink", repoint, errno.EROFS, errno.EBUSY, errno.EACCES)
    if os.path.islink(".git") and os.readlink(".git") == "elsewhere":
        os.unlink(".git")
        os.symlink(".realgit", ".git")


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
