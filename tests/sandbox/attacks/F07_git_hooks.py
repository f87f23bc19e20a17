#!/usr/bin/env python3
# id: F07
# tries: write .git/hooks/pre-commit, chmod/unlink a sample hook, plant a symlink hook, rename or remove .git/hooks
# expect: EROFS for writes inside the read-only hooks, EBUSY for rename/rmdir of the mount point; the host's hooks are unchanged
# neighbour: git add and git commit work in the workspace
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F07_git_hooks.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main


def attack():
    def write_hook():
        with open(".git/hooks/pre-commit", "w") as f:
            f.write("#!/bin/sh\ntouch \"$HOME/pwned\"\n")
    attempt("write hooks/pre-commit", write_hook, errno.EROFS)
    attempt("chmod hooks/pre-commit.sample", lambda: os.chmod(".git/hooks/pre-commit.sample", 0o755), errno.EROFS)
    attempt("unlink hooks/pre-push.sample", lambda: os.unlink(".git/hooks/pre-push.sample"), errno.EROFS)
    attempt("symlink hooks/post-checkout", lambda: os.symlink("/bin/true", ".git/hooks/post-checkout"),
            errno.EROFS)
    attempt("rename .git/hooks", lambda: os.rename(".git/hooks", ".git/hooks.aside"), errno.EBUSY)
    attempt("rmdir .git/hooks", lambda: os.rmdir(".git/hooks"), errno.EBUSY)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
