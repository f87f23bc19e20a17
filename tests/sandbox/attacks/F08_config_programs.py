#!/usr/bin/env python3
# id: F08
# tries: the repository's config names programs of the work tree (core.fsmonitor = tools/fsmonitor, diff.external = tools/difftool, core.sshCommand = tools/ssh): rewrite them, or move tools/ aside and put new ones in place
# expect: EROFS for the programs, EBUSY for moving tools/ (pinned); the host's next git status, git diff and git fetch run nothing planted (runner checks)
# neighbour: editing and git add of a tracked file work
# needs: git-programs
# sandbox-args: -
# host-git: .: status; .: diff; .: fetch -q ssh://127.0.0.1:1/none
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F08_config_programs.py [INFO.json]
import errno
import os

from attacklib import attempt, git_steps, main
from _gitlib import attempt_mkdir_script, attempt_script


def attack():
    for name in ("fsmonitor", "difftool", "ssh"):
        attempt_script("tools/" + name, "program %s named by the git config" % name)
    attempt("move tools aside", lambda: os.rename("tools", "tools.old"), errno.EBUSY, errno.EROFS)
    if os.path.isdir("tools.old"):
        attempt_mkdir_script("tools", "fsmonitor", "replacement fsmonitor program")


def neighbour():
    with open("README", "a") as f:
        f.write("changed in the sandbox\n")
    return git_steps(("add", "README"))


if __name__ == "__main__":
    main(attack, neighbour)
