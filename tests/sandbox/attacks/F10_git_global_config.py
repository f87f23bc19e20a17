#!/usr/bin/env python3
# id: F10
# tries: configure git outside the repository: ~/.gitconfig, ~/.config/git/config and attributes, git config --global core.hooksPath, /etc/gitconfig
# expect: the home's files are written in the sandbox's home layer only (EROFS without one: git config --global fails); /etc/gitconfig EROFS (EACCES as a user); the host's files are unchanged (runner checks)
# neighbour: git -c core.hooksPath=... (this process only) works
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F10_git_global_config.py [INFO.json]
import errno
import os

from attacklib import attempt, attempt_home_write, blocked, escaped, git, home_layer, main


def attack():
    home = os.environ["HOME"]
    attempt_home_write("write ~/.gitconfig",
                       lambda: open(home + "/.gitconfig", "w").write("[core]\n\thooksPath = /x\n"), errno.EROFS)
    attempt_home_write("write ~/.config/git/config", lambda: open(home + "/.config/git/config", "w").close(),
                       errno.EROFS)
    attempt_home_write("write ~/.config/git/attributes",
                       lambda: open(home + "/.config/git/attributes", "w").close(), errno.EROFS)
    attempt("write /etc/gitconfig", lambda: open("/etc/gitconfig", "a").close(), errno.EROFS, errno.EACCES)
    r = git("config", "--global", "core.hooksPath", os.getcwd() + "/.githooks")
    if home_layer():
        (blocked if r.returncode == 0 else escaped).append("git config --global: exit %d, in the home layer" %
                                                           r.returncode)
    else:
        (escaped if r.returncode == 0 else blocked).append("git config --global: exit %d" % r.returncode)


def neighbour():
    r = git("-c", "core.hooksPath=/dev/null", "status", "--short")
    return None if r.returncode == 0 else "git -c ... status failed: " + r.stdout


if __name__ == "__main__":
    main(attack, neighbour)
