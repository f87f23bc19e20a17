#!/usr/bin/env python3
# id: R03
# tries: write past RLIMIT_FSIZE (4 GiB) in the workspace with SIGXFSZ ignored: pwrite at 4 GiB, ftruncate to 4 GiB + 1 (sparse, so no disk is used)
# expect: EFBIG for both; RLIMIT_FSIZE reads 4 GiB
# neighbour: a byte at offset 4 GiB - 1 can be written (the limit is exact)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R03_file_size.py [INFO.json]
import errno
import os
import resource
import signal

from attacklib import attempt, blocked, escaped, main

LIMIT = 4 << 30


def attack():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    got = resource.getrlimit(resource.RLIMIT_FSIZE)
    (blocked if got == (LIMIT, LIMIT) else escaped).append("RLIMIT_FSIZE %s" % (got,))
    fd = os.open("big", os.O_CREAT | os.O_WRONLY, 0o644)
    attempt("pwrite at 4 GiB", lambda: os.pwrite(fd, b"x", LIMIT), errno.EFBIG)
    attempt("ftruncate 4 GiB + 1", lambda: os.ftruncate(fd, LIMIT + 1), errno.EFBIG)
    os.close(fd)
    os.unlink("big")


def neighbour():
    fd = os.open("edge", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.pwrite(fd, b"x", LIMIT - 1)
    finally:
        os.close(fd)
        os.unlink("edge")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
