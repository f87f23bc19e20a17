#!/usr/bin/env python3
# id: F01
# tries: with [sandbox] home-layer = keep, one command plants shell startup files in the home (~/.bashrc, ~/.profile, ~/.bash_aliases, ~/.zshrc, ~/.inputrc, ~/.config/fish/config.fish) and git's config (~/.gitconfig, ~/.config/git/config) and leaves a note; the next command of the workspace looks for them
# expect: the kept layer carries the note to the next command but none of the planted files: its shells and git start from the real ones; the host's home is unchanged, no discarded layer is left (runner checks)
# neighbour: the note written by the earlier command is there (the layer is kept)
# needs: -
# runs: 2
# sandbox-args: -
# config: [sandbox] home-layer = keep
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py) with home-layer = keep; by hand, twice:
#   corral sandbox -- /usr/bin/python3 F01_home_layer_keep.py [INFO.json]
import os

from attacklib import blocked, escaped
from _gitlib import phases

HOME = os.environ["HOME"]
STARTUP = (".bashrc", ".profile", ".bash_aliases", ".zshrc", ".inputrc", ".config/fish/config.fish", ".gitconfig",
           ".config/git/config")
LINE = "# planted by an earlier sandbox\n"


def prepare():
    for rel in STARTUP:
        path = os.path.join(HOME, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write(LINE)
    with open(os.path.join(HOME, "kept-note.txt"), "w") as f:
        f.write("kept\n")


def attack():
    for rel in STARTUP:
        try:
            with open(os.path.join(HOME, rel)) as f:
                found = LINE in f.read()
        except FileNotFoundError:
            found = False
        (escaped if found else blocked).append("~/%s: %s" % (rel, "carried over" if found else "the real one"))


def neighbour():
    try:
        with open(os.path.join(HOME, "kept-note.txt")) as f:
            return None if f.read() == "kept\n" else "the kept note changed"
    except FileNotFoundError:
        return "the kept layer lost the note of the earlier command"


if __name__ == "__main__":
    phases(prepare, attack, neighbour)
