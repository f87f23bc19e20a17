#!/usr/bin/env python3
# id: N11
# tries: use the user's SSH agent and session bus: look for SSH_AUTH_SOCK and DBUS_SESSION_BUS_ADDRESS, connect to the agent socket the runner listens on, ssh-add -l
# expect: the variables are unset; socket(AF_UNIX) fails with EPERM (a socketpair end cannot connect: EISCONN, or the socket is hidden: ENOENT/EACCES); ssh-add cannot reach an agent
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N11_ssh_agent.py [INFO.json]
import errno
import os
import shutil
import socket
import subprocess

from attacklib import INFO, attempt, blocked, escaped, main, socketpair_neighbour


def attack():
    for var in ("SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "GPG_AGENT_INFO"):
        (escaped if var in os.environ else blocked).append("%s %s" % (var, "set" if var in os.environ else "unset"))
    path = INFO.get("ssh_sock")
    if path:
        attempt("socket(AF_UNIX) for the agent", lambda: socket.socket(socket.AF_UNIX).close(), errno.EPERM)
        a, b = socket.socketpair()
        attempt("connect a socketpair end to the agent", lambda: a.connect(path), errno.EISCONN, errno.ENOENT,
                errno.EACCES)
        a.close()
        b.close()
        if shutil.which("ssh-add"):
            r = subprocess.run(["ssh-add", "-l"], env=dict(os.environ, SSH_AUTH_SOCK=path),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            (escaped if r.returncode in (0, 1) else blocked).append("ssh-add -l: exit %d" % r.returncode)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
