#!/usr/bin/env python3
"""The admin socket admits only its own user: the server refuses a peer of
another uid (SO_PEERCRED), and the 0700 directory keeps other users from
even reaching the socket.  Needs root to have two users; skipped otherwise."""
import errno
import os
import shutil
import socket

from harness import CORRAL, Client, Tap, World, run_tests

NOBODY = 65534


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def test_other_uid_refused(t):
    if os.geteuid() != 0:
        t.skip("a client of another uid is refused", "needs root to run a server as another user")
        t.skip("another user cannot reach the socket directory", "needs root")
        return
    w = World()
    try:
        # The server runs as nobody, from a copy of the binary nobody can read.
        bindir = os.path.join(w.base, "bin")
        os.makedirs(bindir)
        binary = os.path.join(bindir, "corral")
        shutil.copy(CORRAL, binary)
        os.chmod(bindir, 0o755)
        os.chmod(binary, 0o755)
        for d in (w.runtime, w.state, w.config):
            os.chown(d, NOBODY, NOBODY)
        w.env["HOME"] = w.base
        import harness
        saved = harness.CORRAL
        harness.CORRAL = binary
        try:
            w.start_server(preexec=as_nobody)
        finally:
            harness.CORRAL = saved
        # Root can traverse the 0700 directory, so the server itself must
        # refuse the connection.
        c = Client(w.socket_path)
        r = c.read_msg()
        t.eq(r.get("error"), {"code": "forbidden",
                              "message": "connection refused: peer uid 0 is not the server's uid %d" % NOBODY},
             "a client of another uid is refused with a reason")
        try:
            more = c.sock.recv(100)
        except OSError:
            more = b""
        t.eq(more, b"", "and disconnected")
        c.close()
        t.ok("peer uid 0" in w.server_log(), "the refusal is logged")
    finally:
        w.cleanup()

    # The other direction: nobody cannot reach root's socket at all.
    w = World()
    try:
        w.start_server()
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                as_nobody()
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(w.socket_path)
                code = 0
            except PermissionError:
                code = 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        t.eq(os.waitstatus_to_exitcode(status), 1, "another user cannot reach the socket directory (EACCES)")
    finally:
        w.cleanup()


try:
    run_tests(Tap(), [test_other_uid_refused])
finally:
    pass
