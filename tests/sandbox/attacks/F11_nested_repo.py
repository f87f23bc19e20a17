#!/usr/bin/env python3
# id: F11
# tries: write the hooks and config of a repository nested in the workspace (vendor/lib/.git), and rename its .git aside
# expect: EROFS/EBUSY: nested repositories' code-running parts are protected too; host files unchanged
# neighbour: git status works in the nested repository
# needs: git-nested
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_nested_repo.py [INFO.json]
import errno
import os

from attacklib import attempt, git, main


def attack():
    g = "vendor/lib/.git"
    def hook():
        with open(g + "/hooks/pre-commit", "w") as f:
            f.write("#!/bin/sh\necho pwned\n")
    attempt("write vendor/lib/.git/hooks/pre-commit", hook, errno.EROFS, errno.EACCES)
    attempt("append vendor/lib/.git/config",
            lambda: open(g + "/config", "a").write("[core]\n\tfsmonitor = echo pwned\n"), errno.EROFS, errno.EACCES)
    attempt("rename vendor/lib/.git", lambda: os.rename(g, g + ".aside"), errno.EBUSY, errno.EACCES)


def neighbour():
    r = git("-C", "vendor/lib", "status", "--short")
    return None if r.returncode == 0 else "git status in vendor/lib failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
