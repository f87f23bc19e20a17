#!/usr/bin/env python3
# id: F07
# tries: in a repository whose .git/hooks does not exist (git init with an empty template), create .git/hooks/pre-commit
# expect: EROFS/EACCES: an absent hooks directory must be pre-blocked like a present one; the host gets no hooks
# neighbour: git add and git commit work
# needs: git-nohooks
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F07_git_hooks_missing.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main


def attack():
    # EEXIST: corral put an empty read-only hooks directory there; the hook
    # write below is what must fail.
    attempt("mkdir .git/hooks", lambda: os.mkdir(".git/hooks"), errno.EROFS, errno.EACCES, errno.EPERM,
            errno.EEXIST)
    if os.path.isdir(".git/hooks"):
        def write_hook():
            with open(".git/hooks/pre-commit", "w") as f:
                f.write("#!/bin/sh\necho pwned\n")
            os.chmod(".git/hooks/pre-commit", 0o755)
        attempt("write .git/hooks/pre-commit", write_hook, errno.EROFS, errno.EACCES)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
