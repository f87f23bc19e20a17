#!/usr/bin/env python3
# id: N19
# tries: offer a service to the host: bind and listen on 127.0.0.1 and [::1] at the very ports the host's listeners hold, and on 0.0.0.0; bind an abstract Unix name and a Unix socket in the workspace
# expect: the IP binds succeed, but in the sandbox's own network namespace: the host's ports are free there (EADDRINUSE would mean the host's namespace), a connection to them reaches this listener, and the host's listeners see nothing (runner checks); Unix sockets: EPERM at socket() (socketpair only with the network off)
# neighbour: a server and a client inside the sandbox talk over 127.0.0.1 and ::1
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N19_listen.py [INFO.json]
import errno
import socket

from attacklib import INFO, attempt, blocked, escaped, loopback_neighbour, main


def own_listener(family, addr):
    """Listen at addr and connect to it: both must stay inside."""
    try:
        srv = socket.socket(family, socket.SOCK_STREAM)
        srv.bind(addr)
        srv.listen(1)
        cli = socket.create_connection(addr[:2], timeout=10)
        conn, _ = srv.accept()
        for s in (cli, conn, srv):
            s.close()
        blocked.append("listen %s: only in the sandbox's own namespace" % (addr[:2],))
    except OSError as e:
        # EADDRINUSE: the host's listener holds this port here, so this is
        # the host's network namespace.
        escaped.append("listen %s: %s" % (addr[:2], errno.errorcode.get(e.errno, e)))


def attack():
    own_listener(socket.AF_INET, ("127.0.0.1", INFO.get("tcp_port") or 8000))
    if INFO.get("tcp6_port"):
        own_listener(socket.AF_INET6, ("::1", INFO["tcp6_port"]))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("0.0.0.0", 0))
    s.listen(1)
    s.close()
    for what in ("an abstract name", "a workspace path"):
        attempt("socket(AF_UNIX) for %s" % what, lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close(),
                errno.EPERM)


if __name__ == "__main__":
    main(attack, loopback_neighbour)
