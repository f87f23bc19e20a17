#!/usr/bin/env python3
# id: F01
# tries: one command plants in the home what later ones would run (a line in ~/.bashrc and ~/.profile, ~/.local/bin/ls, ~/.pyenv/shims/python, ~/.config/autostart/evil.desktop, core.hooksPath in ~/.gitconfig); the next command of the same workspace looks for them
# expect: the first command's writes land in its own home layer, which goes when it ends: the next command sees the real home, nothing planted; the host's home is unchanged and the host's git runs nothing planted (runner checks)
# neighbour: the home takes writes and reads them back (in the command that made them)
# needs: -
# runs: 2
# sandbox-args: -
# host-git: .: status
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand, twice:
#   corral sandbox -- /usr/bin/python3 F01_home_layer_plant.py [INFO.json]
import os

from attacklib import blocked, escaped
from _gitlib import phases, planted_script

HOME = os.environ["HOME"]
PLANTED = {
    ".bashrc": "\n%s" % planted_script("~/.bashrc line").split("\n", 1)[1],
    ".profile": "\n%s" % planted_script("~/.profile line").split("\n", 1)[1],
    ".local/bin/ls": planted_script("~/.local/bin/ls"),
    ".pyenv/shims/python": planted_script("a pyenv shim"),
    ".config/autostart/evil.desktop": "[Desktop Entry]\nExec=sh -c 'echo planted >> /tmp/x'\n",
    ".gitconfig": "[core]\n\thooksPath = %s/planted-hooks\n" % os.getcwd(),
}


def prepare():
    os.makedirs("planted-hooks", exist_ok=True)
    with open("planted-hooks/post-checkout", "w") as f:
        f.write(planted_script("core.hooksPath from ~/.gitconfig"))
    os.chmod("planted-hooks/post-checkout", 0o755)
    for rel, text in PLANTED.items():
        path = os.path.join(HOME, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write(text)
        os.chmod(path, 0o755)
        with open(path) as f:
            if text not in f.read():
                raise SystemExit("the home layer lost what was written to ~/%s" % rel)


def attack():
    for rel, text in PLANTED.items():
        try:
            with open(os.path.join(HOME, rel)) as f:
                found = text in f.read()
        except FileNotFoundError:
            found = False
        (escaped if found else blocked).append("~/%s: %s" % (rel, "planted by an earlier command" if found
                                                             else "the real one"))


def neighbour():
    path = os.path.join(HOME, "layer-probe.txt")
    with open(path, "w") as f:
        f.write("probe\n")
    with open(path) as f:
        return None if f.read() == "probe\n" else "the home layer reads back wrong"


if __name__ == "__main__":
    phases(prepare, attack, neighbour)
