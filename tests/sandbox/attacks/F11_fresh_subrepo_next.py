#!/usr/bin/env python3
# id: F11
# tries: one command creates a repository (git init sub, a commit); the next command in the workspace plants its pre-commit hook and a core.fsmonitor in its config
# expect: EROFS: each command plans the protection anew, so a repository made by one command is protected for the next; the host's git in sub runs nothing planted (runner checks)
# neighbour: git status works in sub
# needs: -
# runs: 2
# sandbox-args: -
# host-git: sub: commit -q --allow-empty -m from-the-host; sub: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand, twice:
#   corral sandbox -- /usr/bin/python3 F11_fresh_subrepo_next.py [INFO.json]
from attacklib import git, git_steps, main
from _gitlib import attempt_append, attempt_script, fsmonitor_config, phases


def prepare():
    problem = git_steps(("init", "-q", "sub"), ("-C", "sub", "-c", "user.name=a", "-c", "user.email=a@b", "commit",
                                                "-q", "--allow-empty", "-m", "made in the sandbox"))
    if problem:
        raise SystemExit(problem)


def attack():
    attempt_script("sub/.git/hooks/pre-commit", "hook of a repository made by an earlier command")
    attempt_append("sub/.git/config", fsmonitor_config("fsmonitor of a repository made by an earlier command"))


def neighbour():
    r = git("-C", "sub", "status", "--short")
    return None if r.returncode == 0 else "git status in sub failed: " + r.stdout


if __name__ == "__main__":
    phases(prepare, attack, neighbour)
