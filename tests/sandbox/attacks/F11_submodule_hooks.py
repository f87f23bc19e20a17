#!/usr/bin/env python3
# id: F11
# tries: write the hooks and config of a submodule's git directory (.git/modules/lib): `git submodule update` on the host runs lib's post-checkout hook
# expect: EROFS: submodule git directories are protected like the top one; host files unchanged
# neighbour: git status works in the submodule
# needs: git-submodule
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_submodule_hooks.py [INFO.json]
import errno
import os

from attacklib import attempt, git, main


def attack():
    g = ".git/modules/lib"
    def hook():
        with open(g + "/hooks/post-checkout", "w") as f:
            f.write("#!/bin/sh\necho pwned\n")
        os.chmod(g + "/hooks/post-checkout", 0o755)
    attempt("write .git/modules/lib/hooks/post-checkout", hook, errno.EROFS, errno.EACCES)
    attempt("append .git/modules/lib/config",
            lambda: open(g + "/config", "a").write("[core]\n\tfsmonitor = echo pwned\n"), errno.EROFS, errno.EACCES)


def neighbour():
    r = git("-C", "lib", "status", "--short")
    return None if r.returncode == 0 else "git status in lib failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
