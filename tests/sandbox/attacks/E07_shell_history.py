#!/usr/bin/env python3
# id: E07
# tries: read shell and REPL histories in the home (they often hold pasted tokens): ~/.bash_history, ~/.python_history, ~/.lesshst, ~/.viminfo, ~/.zsh_history, ~/.node_repl_history, ~/.psql_history, ~/.mysql_history
# expect: masked: EACCES or ENOENT, no byte (sandbox.md E07)
# neighbour: ordinary dotfiles (~/.profile) are readable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E07_shell_history.py [INFO.json]
import os

from attacklib import attempt_read, main

FILES = [".bash_history", ".python_history", ".lesshst", ".viminfo", ".zsh_history", ".node_repl_history",
         ".psql_history", ".mysql_history"]


def attack():
    home = os.environ["HOME"]
    for rel in FILES:
        attempt_read(rel, os.path.join(home, rel), "read %d bytes")


def neighbour():
    return None if "fake .profile" in open(os.environ["HOME"] + "/.profile").read() else "~/.profile unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
