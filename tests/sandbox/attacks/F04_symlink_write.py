#!/usr/bin/env python3
# id: F04
# tries: plant symlinks in the workspace to ~/.profile, to a host file outside the workspace and to /etc/passwd, then write through them
# expect: EROFS (EACCES where the target is not ours), or for ~/.profile the sandbox's home layer; the targets are unchanged (runner checks)
# neighbour: a symlink to a workspace file can be written through
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F04_symlink_write.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, attempt_home_write, main


def attack():
    home = os.environ["HOME"]
    outside = INFO.get("outside", os.path.dirname(os.getcwd()) + "/outside")
    targets = (("~/.profile", home + "/.profile", attempt_home_write, (errno.EROFS,)),
               ("outside/canary.txt", outside + "/canary.txt", attempt, (errno.EROFS,)),
               ("/etc/passwd", "/etc/passwd", attempt, (errno.EROFS, errno.EACCES)))
    for i, (what, target, judge, expected) in enumerate(targets):
        link = "link%d" % i
        os.symlink(target, link)
        judge("append via link to " + what, lambda: open(link, "a").write("pwned\n"), *expected)


def neighbour():
    os.symlink("file.txt", "inner-link")
    with open("inner-link", "a") as f:
        f.write("more\n")
    return None if open("file.txt").read().endswith("more\n") else "write through inner link lost"


if __name__ == "__main__":
    main(attack, neighbour)
