#!/usr/bin/env python3
# id: F12
# tries: the workspace is a main repository whose linked worktree lives outside it: point that worktree's commondir (in .git/worktrees/wt) at a copy of the repository with a core.fsmonitor, give it a config.worktree, plant a new linked worktree in .git/worktrees
# expect: EROFS: .git/worktrees is read-only and so are each worktree's commondir, gitdir and config.worktree; the host's next git status in the outside worktree runs nothing planted (runner checks)
# neighbour: git status and git log work
# needs: git-worktree-main
# sandbox-args: -
# host-git: {outside}/wt: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F12_worktree_pointers.py [INFO.json]
import os

from attacklib import attempt, git, git_steps, main
from _gitlib import DENIED, attempt_append, fsmonitor_config

WT = ".git/worktrees/wt"


def attack():
    # A copy of the repository the sandbox controls, with an fsmonitor.
    git("clone", "-q", "--bare", ".", "evil.git")
    if os.path.isdir("evil.git"):
        with open("evil.git/config", "a") as f:
            f.write(fsmonitor_config("fsmonitor of a redirected common dir"))
    evil = os.path.abspath("evil.git")
    def redirect():
        with open(WT + "/commondir", "w") as f:
            f.write(evil + "\n")
    attempt("point %s/commondir at evil.git" % WT, redirect, *DENIED)
    attempt_append(WT + "/config.worktree", fsmonitor_config("fsmonitor of config.worktree"))
    attempt("plant .git/worktrees/evil", lambda: os.makedirs(".git/worktrees/evil"), *DENIED)


def neighbour():
    return git_steps(("status", "--short"), ("log", "--oneline"))


if __name__ == "__main__":
    main(attack, neighbour)
