#!/usr/bin/env python3
# id: F11
# tries: a repository five levels down (past the nested-repository search) is a gitlink of the workspace's index, so the user's git status looks into it: add a core.fsmonitor to its config, plant a hook, move its .git aside
# expect: EROFS/EBUSY: every repository a gitlink names is protected, however deep; the host's next git status runs nothing planted (runner checks)
# neighbour: git status works in the deep repository
# needs: git-deep-gitlink
# sandbox-args: -
# host-git: .: status; a/b/c/d/deep: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_gitlink_deep.py [INFO.json]
import errno
import os

from attacklib import attempt, git, main
from _gitlib import attempt_append, attempt_script, fsmonitor_config

DEEP = "a/b/c/d/deep"


def attack():
    attempt_append(DEEP + "/.git/config", fsmonitor_config("fsmonitor of a deep gitlinked repository"))
    attempt_script(DEEP + "/.git/hooks/post-checkout", "hook of a deep gitlinked repository")
    attempt("move the deep .git aside", lambda: os.rename(DEEP + "/.git", DEEP + "/.git.old"), errno.EBUSY,
            errno.EROFS)
    if os.path.isdir(DEEP + "/.git.old"):  # moved: put it back for the host's git status (it is planted)
        os.rename(DEEP + "/.git.old", DEEP + "/.git")


def neighbour():
    r = git("-C", DEEP, "status", "--short")
    return None if r.returncode == 0 else "git status in the deep repository failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
