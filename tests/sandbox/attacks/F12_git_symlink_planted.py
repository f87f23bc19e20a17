#!/usr/bin/env python3
# id: F12
# tries: one command makes sub/.git a symlink to a git directory it made four levels down (past the search); the next command in the workspace plants a hook and a core.fsmonitor through the symlink
# expect: the next command still runs sandboxed (a planted .git symlink must not stop sandboxes: corral protects what it points to and warns); EROFS for the hook and the config; the host's git in sub runs nothing planted (runner checks)
# neighbour: git status works at the top
# needs: -
# runs: 2
# sandbox-args: -
# host-git: sub: status; sub: commit -q --allow-empty -m from-the-host
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand, twice:
#   corral sandbox -- /usr/bin/python3 F12_git_symlink_planted.py [INFO.json]
import os

from attacklib import git, main
from _gitlib import attempt_append, attempt_mkdir_script, fsmonitor_config, phases

EVIL = "x/y/z/evil"


def prepare():
    os.makedirs("x/y/z")
    r = git("init", "-q", "--bare", "--template=", EVIL)
    if r.returncode != 0:
        raise SystemExit("git init failed: " + r.stdout)
    os.makedirs("sub")
    os.symlink("../" + EVIL, "sub/.git")


def attack():
    attempt_mkdir_script("sub/.git/hooks", "pre-commit", "hook behind a planted .git symlink")
    attempt_append("sub/.git/config", fsmonitor_config("fsmonitor behind a planted .git symlink"))


def neighbour():
    r = git("-C", "sub", "status", "--short")
    return None if r.returncode in (0, 128) else "git status in sub: exit %d" % r.returncode


if __name__ == "__main__":
    phases(prepare, attack, neighbour)
