#!/usr/bin/env python3
# id: F08
# tries: rewrite .git/config: append core.fsmonitor, rename it aside, unlink it, rename a file over it, git config
# expect: EROFS for writes, EBUSY for rename/unlink of the mount point, git config fails; config unchanged
# neighbour: git config --get reads the repository's config; git status works
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F08_git_config.py [INFO.json]
import errno
import os
import subprocess

from attacklib import attempt, blocked, escaped, git, main


def attack():
    attempt("append .git/config", lambda: open(".git/config", "a").write("[core]\n\tfsmonitor = touch /x\n"),
            errno.EROFS)
    attempt("rename .git/config aside", lambda: os.rename(".git/config", ".git/c.bak"), errno.EBUSY)
    attempt("unlink .git/config", lambda: os.unlink(".git/config"), errno.EBUSY)
    open(".git/evil-config", "w").write("[core]\n\tfsmonitor = touch /x\n")
    attempt("rename a file over .git/config", lambda: os.rename(".git/evil-config", ".git/config"), errno.EBUSY)
    r = git("config", "core.fsmonitor", "touch /tmp/x")
    if r.returncode == 0:
        escaped.append("git config core.fsmonitor: succeeded")
    else:
        blocked.append("git config core.fsmonitor: exit %d" % r.returncode)


def neighbour():
    r = subprocess.run(["git", "config", "--get", "user.name"], stdout=subprocess.PIPE, text=True)
    if r.stdout.strip() != "Battery":
        return "git config --get user.name gave %r" % r.stdout
    r = git("status", "--short")
    return None if r.returncode == 0 else "git status failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
