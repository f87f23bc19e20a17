#!/usr/bin/env python3
# id: F08
# tries: the repository's config includes shared.gitconfig of the work tree, and (includeIf onbranch:main) branch.gitconfig, which does not exist: add core.fsmonitor to the first, create the second with one, rename a file over the first
# expect: EROFS (included files are read-only, a missing one an empty read-only placeholder), EBUSY for the rename; the host's next git status runs no fsmonitor (runner checks)
# neighbour: git add and git commit work
# needs: git-include
# sandbox-args: -
# host-git: .: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F08_config_include.py [INFO.json]
import errno
import os

from attacklib import attempt, git_commit_neighbour, main
from _gitlib import attempt_append, fsmonitor_config


def attack():
    attempt_append("shared.gitconfig", fsmonitor_config("fsmonitor of an included config file"))
    attempt_append("branch.gitconfig", fsmonitor_config("fsmonitor of a conditionally included file"))
    def swap():
        with open("evil.gitconfig", "w") as f:
            f.write(fsmonitor_config("fsmonitor of a config renamed into place"))
        os.rename("evil.gitconfig", "shared.gitconfig")
    attempt("rename a file over shared.gitconfig", swap, errno.EBUSY, errno.EROFS)


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
