#!/usr/bin/env python3
# id: F11
# tries: a repository five levels down, past the nested-repository search and not yet a gitlink: give it a core.fsmonitor, then add it as a gitlink to the workspace's index in the same command, so the user's next git status at the top looks into it
# expect: blocked; today the write succeeds: the next command's plan protects the repository (the gitlink is in the index then), but the host can run git before it
# neighbour: git status works at the top
# needs: git-deep
# sandbox-args: -
# host-git: .: status
# known-gap: a repository deeper than the search that a command makes reachable through a gitlink in that same command is protected only from the next command on; the per-command diff is to flag new gitlinks
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_gitlink_added.py [INFO.json]
from attacklib import git, git_steps, main
from _gitlib import attempt_append, fsmonitor_config

DEEP = "a/b/c/d/deep"


def attack():
    attempt_append(DEEP + "/.git/config", fsmonitor_config("fsmonitor of a repository gitlinked by the sandbox"))
    sha = git("-C", DEEP, "rev-parse", "HEAD").stdout.strip()
    git("update-index", "--add", "--cacheinfo", "160000,%s,%s" % (sha, DEEP))


def neighbour():
    return git_steps(("status", "--short"))


if __name__ == "__main__":
    main(attack, neighbour)
