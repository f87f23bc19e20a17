#!/usr/bin/env python3
# id: F07
# tries: the user's global config sets core.hooksPath = .husky/_ (husky's layout) and .husky/_ does not exist yet: create it with a pre-commit hook, or put a symlink to a hooks directory of the sandbox's in its place
# expect: EROFS (a missing hooks directory is an empty read-only placeholder for the sandbox's lifetime), EBUSY for renaming onto it; the host's next git commit runs nothing planted (runner checks)
# neighbour: git add and git commit work
# needs: git-hookspath-global
# sandbox-args: -
# host-git: .: commit -q --allow-empty -m from-the-host
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F07_hooks_path_missing.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main
from _gitlib import attempt_mkdir_script, write_script


def attack():
    attempt_mkdir_script(".husky/_", "pre-commit", "husky pre-commit hook")
    def swap():
        os.makedirs("/tmp/hooks", exist_ok=True)
        write_script("/tmp/hooks/pre-commit", "hooks behind a symlink")
        os.symlink("/tmp/hooks", ".husky/link")
        os.rename(".husky/link", ".husky/_")
    attempt("rename a symlink onto .husky/_", swap, errno.EBUSY, errno.EROFS, errno.EEXIST, errno.EISDIR)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
