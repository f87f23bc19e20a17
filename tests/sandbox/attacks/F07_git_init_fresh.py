#!/usr/bin/env python3
# id: F07
# tries: in a workspace without a repository: git init at the workspace root, then plant .git/hooks; or rename the (placeholder) .git away
# expect: git init fails (the missing .git is an empty read-only placeholder: EROFS), mkdir .git/hooks EROFS, rename EBUSY; afterwards the host has no .git with content (runner checks)
# neighbour: git works where it cannot reach the host's git: init and commit a repository in the private /tmp
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F07_git_init_fresh.py [INFO.json]
import errno
import os

from attacklib import attempt, blocked, escaped, git, git_steps, main


def attack():
    r = git("init", "-q")
    (escaped if r.returncode == 0 else blocked).append("git init: exit %d" % r.returncode)
    attempt("mkdir .git/hooks", lambda: os.makedirs(".git/hooks", exist_ok=True), errno.EROFS, errno.EACCES)
    attempt("rename .git", lambda: os.rename(".git", ".git.aside"), errno.EBUSY, errno.ENOENT)


def neighbour():
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")
    return git_steps(["init", "-q", "/tmp/repo"], ["-C", "/tmp/repo", "commit", "-q", "--allow-empty", "-m", "x"],
                     env=env)


if __name__ == "__main__":
    main(attack, neighbour)
