#!/usr/bin/env python3
# id: F11
# tries: 25000 directories with 30 repositories among them, more than the nested-repository search used to look at (it then stopped without a word, leaving the repositories past that point writable): write the hooks and config of every one
# expect: EROFS: every repository is found (a fast scan with room for 100000 directories; past its limit corral refuses to start rather than protect less); the host runs nothing planted (runner checks)
# neighbour: git status works in a nested repository
# needs: git-wide
# sandbox-args: -
# host-git: big/d00000: commit -q --allow-empty -m from-the-host; big/d24990: commit -q --allow-empty -m from-the-host
# timeout: 120
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_scan_budget.py [INFO.json]
import os

from attacklib import git, main
from _gitlib import attempt_append, attempt_script, fsmonitor_config


def repositories():
    return sorted(os.path.join("big", d) for d in os.listdir("big") if os.path.isdir(os.path.join("big", d, ".git")))


def attack():
    for repo in repositories():
        attempt_script(repo + "/.git/hooks/pre-commit", "hook of " + repo)
        attempt_append(repo + "/.git/config", fsmonitor_config("fsmonitor of " + repo))


def neighbour():
    r = git("-C", "big/d00000", "status", "--short")
    return None if r.returncode == 0 else "git status in big/d00000 failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
