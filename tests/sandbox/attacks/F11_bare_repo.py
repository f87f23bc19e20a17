#!/usr/bin/env python3
# id: F11
# tries: a bare repository in the workspace (remote.git, used as a local remote): plant its pre-receive hook and a core.fsmonitor in its config, or move it aside and put a copy with hooks in its place
# expect: EROFS for its hooks and config, EBUSY for moving it (pinned); the host's next git push into it runs nothing planted (runner checks)
# neighbour: git push into the bare repository works
# needs: git-bare
# sandbox-args: -
# host-git: .: push -q remote.git HEAD:refs/heads/from-the-host
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_bare_repo.py [INFO.json]
import errno
import os

from attacklib import attempt, git_steps, main
from _gitlib import attempt_append, attempt_script, fsmonitor_config


def attack():
    attempt_script("remote.git/hooks/pre-receive", "pre-receive hook of a bare repository")
    attempt_append("remote.git/config", fsmonitor_config("fsmonitor of a bare repository"))
    attempt("move remote.git aside", lambda: os.rename("remote.git", "remote.old"), errno.EBUSY, errno.EROFS)
    if os.path.isdir("remote.old"):  # moved: put it back for the host's push (its hooks are planted)
        os.rename("remote.old", "remote.git")


def neighbour():
    return git_steps(("push", "-q", "remote.git", "HEAD:refs/heads/from-the-sandbox"))


if __name__ == "__main__":
    main(attack, neighbour)
