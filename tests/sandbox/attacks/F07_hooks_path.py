#!/usr/bin/env python3
# id: F07
# tries: the repository's config sets core.hooksPath = .githooks (a directory of the work tree, as many projects do): plant .githooks/pre-commit, rewrite the existing post-commit hook, move .githooks aside and make a new one, point core.hooksPath elsewhere
# expect: EROFS for writes in the read-only hooks directory, EBUSY for moving it (a mount point), git config fails; the host's next git commit runs nothing planted (runner checks)
# neighbour: git add and git commit work
# needs: git-hookspath
# sandbox-args: -
# host-git: .: commit -q --allow-empty -m from-the-host
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F07_hooks_path.py [INFO.json]
import errno
import os

from attacklib import attempt, blocked, escaped, git, git_commit_neighbour, main
from _gitlib import DENIED, attempt_mkdir_script, attempt_script


def attack():
    attempt_script(".githooks/pre-commit", "core.hooksPath pre-commit hook")
    attempt_script(".githooks/post-commit", "core.hooksPath post-commit hook")
    attempt("move .githooks aside", lambda: os.rename(".githooks", ".githooks.old"), errno.EBUSY, errno.EROFS)
    if os.path.isdir(".githooks.old"):  # it moved: the new one is ours
        attempt_mkdir_script(".githooks", "pre-commit", "replacement hooks directory")
    r = git("config", "core.hooksPath", "hooks-of-the-sandbox")
    (blocked if r.returncode != 0 else escaped).append("git config core.hooksPath: exit %d" % r.returncode)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
