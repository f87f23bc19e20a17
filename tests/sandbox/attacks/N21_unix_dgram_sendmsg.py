#!/usr/bin/env python3
# id: N21
# tries: reach a host datagram socket bound in the workspace (ws/host-dgram.sock): sendmsg with its address from an AF_UNIX SOCK_DGRAM socket (plain, with SOCK_CLOEXEC|SOCK_NONBLOCK, with high bits set in the type word), from SOCK_RAW (which AF_UNIX turns into a datagram socket), from one end of a datagram socketpair; sendto and connect+send from a datagram socket
# expect: EPERM for each (network off: AF_UNIX sockets other than stream and seqpacket are refused, as are connect and addressed sendto); nothing arrives at the host socket (runner checks)
# neighbour: sendmsg with SCM_RIGHTS over a SOCK_SEQPACKET socketpair (what corral escalate does on fd 3), also with a destination address, which a connected seqpacket socket ignores
# needs: ws-dgram-socket
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand, with a
# datagram socket of the host bound at ./host-dgram.sock:
#   corral sandbox -- /usr/bin/python3 N21_unix_dgram_sendmsg.py [INFO.json]
import array
import ctypes
import errno
import os
import socket

from attacklib import INFO, attempt, main, sys_call

SYS_socket, SYS_socketpair = 41, 53
SOCK_RAW = 3


def target():
    return os.path.join(INFO.get("ws") or os.getcwd(), "host-dgram.sock")


def send_named(s, path):
    return s.sendmsg([b"escaped"], [], 0, path)


def attack():
    path = target()
    for what, kind in (("SOCK_DGRAM", socket.SOCK_DGRAM),
                       ("SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK",
                        socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK),
                       ("SOCK_RAW", SOCK_RAW)):
        s = attempt("socket(AF_UNIX, %s)" % what, lambda: socket.socket(socket.AF_UNIX, kind), errno.EPERM)
        if s:
            attempt("sendmsg to %s" % path, lambda: send_named(s, path), errno.EPERM)
            s.close()
    # The kernel reads the type as an int: high bits must not help.
    fd = attempt("raw socket(AF_UNIX, SOCK_DGRAM | 1<<32)",
                 lambda: sys_call(SYS_socket, socket.AF_UNIX, (1 << 32) | socket.SOCK_DGRAM, 0), errno.EPERM)
    if fd is not None:
        s = socket.socket(fileno=fd)
        attempt("sendmsg to %s" % path, lambda: send_named(s, path), errno.EPERM)
        s.close()
    pair = attempt("socketpair(AF_UNIX, SOCK_DGRAM)",
                   lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM), errno.EPERM)
    if pair:
        attempt("sendmsg to %s from a datagram socketpair" % path, lambda: send_named(pair[0], path), errno.EPERM)
        attempt("sendto %s from a datagram socketpair" % path, lambda: pair[0].sendto(b"x", path), errno.EPERM)
        for s in pair:
            s.close()
    fds = (ctypes.c_int * 2)()
    if attempt("raw socketpair(AF_UNIX, SOCK_RAW)",
               lambda: sys_call(SYS_socketpair, socket.AF_UNIX, SOCK_RAW, 0, fds), errno.EPERM) is not None:
        s = socket.socket(fileno=fds[0])
        attempt("sendmsg to %s from a SOCK_RAW socketpair" % path, lambda: send_named(s, path), errno.EPERM)
        s.close()
        os.close(fds[1])


def neighbour():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    r, w = os.pipe()
    try:
        a.sendmsg([b"fd"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))])
        msg, anc, _, _ = b.recvmsg(16, socket.CMSG_SPACE(4))
        if msg != b"fd" or not anc:
            return "SCM_RIGHTS over a seqpacket socketpair lost: %r %r" % (msg, anc)
        got = array.array("i")
        got.frombytes(anc[0][2][:4])
        os.write(got[0], b"!")
        if os.read(r, 1) != b"!":
            return "the passed descriptor does not work"
        os.close(got[0])
        # A destination address on a connected seqpacket socket is ignored:
        # the message goes to the peer, not to the host socket.
        a.sendmsg([b"named"], [], 0, target())
        if b.recv(16) != b"named":
            return "sendmsg with an address on a seqpacket socketpair did not reach the peer"
    except OSError as e:
        return "sendmsg on a SOCK_SEQPACKET socketpair failed: %s" % errno.errorcode.get(e.errno, e.errno)
    finally:
        for f in (r, w):
            os.close(f)
        a.close()
        b.close()
    return None


if __name__ == "__main__":
    main(attack, neighbour)
