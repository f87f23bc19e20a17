#!/usr/bin/env python3
# id: F11
# tries: plant a submodule: a git directory under .git/modules/lib with a post-checkout hook, a .gitmodules entry and a gitlink; the user's git submodule update --init on the host takes up the planted git directory (it is "found locally") and runs its hook
# expect: EROFS: .git/modules cannot get new entries (read-only, an empty placeholder when absent); the host's git submodule update runs nothing planted (runner checks)
# neighbour: git add and git commit work
# needs: git
# sandbox-args: -
# host-git: .: submodule update --init
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F11_submodule_planted.py [INFO.json]
import os

from attacklib import attempt, git, git_commit_neighbour, main
from _gitlib import DENIED, write_script

GITDIR = ".git/modules/lib"


def plant():
    """The rest of the plant, once .git/modules/lib could be made."""
    src = "/tmp/lib-src"
    git("init", "-q", src)
    git("-C", src, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "lib")
    os.rmdir(GITDIR)
    git("clone", "-q", "--bare", src, GITDIR)
    sha = git("--git-dir", GITDIR, "rev-parse", "HEAD").stdout.strip()
    git("--git-dir", GITDIR, "config", "core.bare", "false")
    git("--git-dir", GITDIR, "config", "core.worktree", "../../../lib")
    write_script(GITDIR + "/hooks/post-checkout", "post-checkout hook of a planted submodule git directory")
    with open(".gitmodules", "w") as f:
        f.write('[submodule "lib"]\n\tpath = lib\n\turl = https://example.invalid/lib.git\n')
    git("update-index", "--add", "--cacheinfo", "160000,%s,lib" % sha)
    git("add", ".gitmodules")


def attack():
    attempt("create %s" % GITDIR, lambda: os.makedirs(GITDIR), *DENIED)
    if os.path.isdir(GITDIR):
        plant()


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
