#!/usr/bin/env python3
# id: F11
# tries: create a new repository in a subdirectory of the workspace (git init sub) and give it a pre-commit hook and a core.fsmonitor: the user's next git command in sub/ runs them on the host
# expect: blocked, or at least never left behind unnoticed (sandbox.md F11: nested repositories' hooks protected); the host must not end up with sub/.git/hooks/pre-commit
# neighbour: ordinary subdirectories and files can be made
# needs: -
# known-gap: a new repository made inside the sandbox gets writable hooks; mounts cannot stop it (docs/sandbox.md); the per-command diff is to flag it
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_fresh_subrepo.py [INFO.json]
import errno
import os

from attacklib import attempt, blocked, git, main


def attack():
    os.mkdir("sub")
    r = git("init", "-q", "sub")
    if r.returncode != 0:
        blocked.append("git init sub: exit %d" % r.returncode)
        return
    def hook():
        with open("sub/.git/hooks/pre-commit", "w") as f:
            f.write("#!/bin/sh\necho pwned-by-the-sandbox\n")
        os.chmod("sub/.git/hooks/pre-commit", 0o755)
    attempt("write sub/.git/hooks/pre-commit", hook, errno.EROFS, errno.EACCES, errno.EPERM)
    attempt("append sub/.git/config", lambda: open("sub/.git/config", "a").write("[core]\n\tfsmonitor = echo x\n"),
            errno.EROFS, errno.EACCES, errno.EPERM)


def neighbour():
    os.makedirs("src/pkg")
    open("src/pkg/mod.py", "w").write("x = 1\n")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
