#!/usr/bin/env python3
# id: F14
# tries: use descriptors inherited from the host: the runner leaves fd 7 (a directory above the workspace: fchdir() way out) and fd 255 (a file outside, open for appending) open when it starts corral
# expect: only fds 0, 1, 2 are open when the command starts; fd 7 and fd 255 are EBADF
# neighbour: new descriptors start at 3 (pipe works)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F14_inherited_fds.py [INFO.json]
import errno
import os

from attacklib import attempt, escaped, main


def attack():
    # Probe every possible descriptor (RLIMIT_NOFILE is 4096) before this
    # process opens any of its own: anything above 2 was inherited.
    extra = []
    for fd in range(3, 4096):
        try:
            os.fstat(fd)
            extra.append(fd)
        except OSError:
            pass
    for fd in extra:
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            target = "?"
        escaped.append("fd %d inherited (%s)" % (fd, target))
    if 7 in extra:
        try:
            os.fchdir(7)
            escaped.append("fchdir(7) then ls ..: %s" % os.listdir(".."))
        except OSError:
            pass
    if 255 in extra:
        try:
            os.write(255, b"pwned by the sandbox\n")
            escaped.append("wrote through fd 255")
        except OSError:
            pass
    attempt("fstat(7)", lambda: os.fstat(7), errno.EBADF)
    attempt("fstat(255)", lambda: os.fstat(255), errno.EBADF)


def neighbour():
    r, w = os.pipe()
    os.write(w, b"x")
    ok = os.read(r, 1) == b"x"
    return None if ok and r == 3 else "pipe got fds %d,%d" % (r, w)


if __name__ == "__main__":
    main(attack, neighbour)
