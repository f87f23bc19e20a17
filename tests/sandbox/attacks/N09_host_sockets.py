#!/usr/bin/env python3
# id: N09
# tries: connect to host Unix sockets: one the runner listens on under /run, one in $XDG_RUNTIME_DIR (the D-Bus session bus place), /run/docker.sock, /var/run/dbus/system_bus_socket: from socket(AF_UNIX), and from a socketpair end; list /run and the runtime dir
# expect: socket(AF_UNIX) fails with EPERM (with the network off Unix sockets come only from socketpair); a socketpair end is connected already (EISCONN), or the path is hidden (ENOENT/EACCES: the directories are masked); the host listeners see nothing (runner checks)
# neighbour: an AF_UNIX socketpair passes data
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N09_host_sockets.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, attempt_listdir, main, socketpair_neighbour


def attack():
    paths = [INFO.get("run_socket"), INFO.get("runtime_socket"), "/run/docker.sock", "/var/run/dbus/system_bus_socket"]
    attempt("socket(AF_UNIX, STREAM)", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close(), errno.EPERM)
    a, b = socket.socketpair()
    for path in filter(None, paths):
        attempt("connect a socketpair end to " + path, lambda: a.connect(path), errno.EISCONN, errno.ENOENT,
                errno.EACCES)
    a.close()
    b.close()
    for d in filter(None, ("/run", INFO.get("xdg_runtime"))):
        attempt_listdir(d, d)


if __name__ == "__main__":
    main(attack, socketpair_neighbour)
