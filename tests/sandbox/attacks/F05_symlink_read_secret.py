#!/usr/bin/env python3
# id: F05
# tries: plant symlinks to ~/.ssh/id_test and to the ~/.aws directory, then read through them
# expect: EACCES or ENOENT: the mask lives at the target, whatever path leads there
# neighbour: a symlink to ~/.profile reads fine
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F05_symlink_read_secret.py [INFO.json]
import os

from attacklib import attempt_read, main


def attack():
    home = os.environ["HOME"]
    os.symlink(home + "/.ssh/id_test", "k")
    os.symlink(home + "/.aws", "awsdir")
    for what, path in (("k -> ~/.ssh/id_test", "k"), ("awsdir/credentials", "awsdir/credentials")):
        attempt_read(what, path)


def neighbour():
    os.symlink(os.environ["HOME"] + "/.profile", "p")
    return None if "fake .profile" in open("p").read() else "~/.profile via symlink unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
