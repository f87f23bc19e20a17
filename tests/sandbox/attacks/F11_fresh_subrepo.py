#!/usr/bin/env python3
# id: F11
# tries: create a new repository in a subdirectory of the workspace (git init sub) and give it a pre-commit hook and a core.fsmonitor: the user's next git command in sub/ runs them on the host
# expect: the writes succeed inside (no mount can protect a repository that did not exist when the sandbox was planned), and when the command ends corral moves the planted config keys and hooks aside: no active hook is left in sub, and the host's git status and commit in sub run nothing planted (runner checks)
# neighbour: ordinary subdirectories and files can be made
# needs: -
# sandbox-args: -
# host-git: sub: status; sub: -c user.name=u -c user.email=u@e commit -q --allow-empty -m from-the-host
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_fresh_subrepo.py [INFO.json]
import os

from attacklib import blocked, git, main
from _gitlib import fsmonitor_config, plant_anyway, write_script


def attack():
    os.mkdir("sub")
    r = git("init", "-q", "sub")
    if r.returncode != 0:
        blocked.append("git init sub: exit %d" % r.returncode)
        return
    plant_anyway("write sub/.git/hooks/pre-commit",
                 lambda: write_script("sub/.git/hooks/pre-commit", "pre-commit hook of a repository the sandbox made"))
    plant_anyway("append a core.fsmonitor to sub/.git/config",
                 lambda: open("sub/.git/config", "a").write(fsmonitor_config("fsmonitor of a repository the sandbox made")))


def neighbour():
    os.makedirs("src/pkg")
    open("src/pkg/mod.py", "w").write("x = 1\n")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
