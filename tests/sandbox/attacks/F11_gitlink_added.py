#!/usr/bin/env python3
# id: F11
# tries: a repository five levels down, past the nested-repository search and not yet a gitlink: give it a core.fsmonitor, then add it as a gitlink to the workspace's index in the same command, so the user's next git status at the top looks into it
# expect: the write may succeed inside (the repository is past the search when the command starts), and when the command ends corral sees its config changed and moves the planted key aside: the host's git status at the top runs nothing planted (runner checks)
# neighbour: git status works at the top
# needs: git-deep
# sandbox-args: -
# host-git: .: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_gitlink_added.py [INFO.json]
from attacklib import git, git_steps, main
from _gitlib import fsmonitor_config, plant_anyway

DEEP = "a/b/c/d/deep"


def attack():
    plant_anyway("append a core.fsmonitor to %s/.git/config" % DEEP,
                 lambda: open(DEEP + "/.git/config", "a").write(
                     fsmonitor_config("fsmonitor of a repository gitlinked by the sandbox")))
    sha = git("-C", DEEP, "rev-parse", "HEAD").stdout.strip()
    git("update-index", "--add", "--cacheinfo", "160000,%s,%s" % (sha, DEEP))


def neighbour():
    return git_steps(("status", "--short"))


if __name__ == "__main__":
    main(attack, neighbour)
