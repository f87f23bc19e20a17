#!/usr/bin/env python3
# id: F12
# tries: in a linked worktree (.git file -> main/.git/worktrees/ws outside the workspace): rewrite or remove the .git file, write config.worktree and commondir of the worktree gitdir, write the main repository's hooks
# expect: EROFS (EBUSY for removing the pointer); nothing of the main repository changes
# neighbour: git status and git log work in the worktree
# needs: worktree
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F12_worktree.py [INFO.json]
import errno
import os

from attacklib import attempt, git_steps, main


def attack():
    gitdir = open(".git").read().split(":", 1)[1].strip()
    common = os.path.normpath(os.path.join(gitdir, open(os.path.join(gitdir, "commondir")).read().strip()))
    attempt("rewrite .git", lambda: open(".git", "w").write("gitdir: /tmp/evil\n"), errno.EROFS)
    attempt("unlink .git", lambda: os.unlink(".git"), errno.EBUSY)
    attempt("write worktree config.worktree", lambda: open(gitdir + "/config.worktree", "w").close(), errno.EROFS)
    attempt("write worktree commondir", lambda: open(gitdir + "/commondir", "w").write("/tmp\n"), errno.EROFS)
    attempt("write main hooks/pre-commit", lambda: open(common + "/hooks/pre-commit", "w").close(), errno.EROFS)
    attempt("append main config", lambda: open(common + "/config", "a").write("[core]\n"), errno.EROFS)


def neighbour():
    return git_steps(("status", "--short"), ("log", "--oneline"))


if __name__ == "__main__":
    main(attack, neighbour)
