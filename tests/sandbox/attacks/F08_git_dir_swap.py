#!/usr/bin/env python3
# id: F08
# tries: rename the whole .git directory aside (its hooks and config mounts travel with it) and put a copy with a pre-commit hook and core.fsmonitor in its place
# expect: EBUSY (the ancestors of protected paths must be pinned) or another refusal; the host's .git is the same directory with the same hooks and config
# neighbour: git add and git commit work
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F08_git_dir_swap.py [INFO.json]
import errno
import os
import shutil

from attacklib import escaped, git_commit_neighbour, judge_errno, main


def attack():
    try:
        os.rename(".git", ".git.aside")
    except OSError as e:
        judge_errno("rename .git", e, errno.EBUSY, errno.EACCES, errno.EPERM, errno.EROFS)
        return
    escaped.append("rename .git -> .git.aside: succeeded")
    shutil.copytree(".git.aside", ".git", symlinks=True)
    with open(".git/hooks/pre-commit", "w") as f:
        f.write("#!/bin/sh\necho pwned-by-the-sandbox\n")
    os.chmod(".git/hooks/pre-commit", 0o755)
    with open(".git/config", "a") as f:
        f.write("[core]\n\tfsmonitor = echo pwned-by-the-sandbox\n")
    escaped.append("planted .git/hooks/pre-commit and core.fsmonitor for the host's git")


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
