#!/usr/bin/env python3
# id: F19
# tries: make device nodes (block 8:0, char 1:3) in the workspace and in /dev, open /dev/mem, /dev/kmsg, /dev/sda; list /dev
# expect: EPERM (EACCES from Landlock in /dev); /dev holds only null zero full random urandom tty pts ptmx shm fd std*
# neighbour: a FIFO can be made in the workspace; /dev/null and /dev/urandom work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F19_mknod.py [INFO.json]
import errno
import os
import stat

from attacklib import attempt, blocked, escaped, main

ALLOWED = {"null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx", "shm", "fd", "stdin", "stdout",
           "stderr"}


def attack():
    attempt("mknod block 8:0", lambda: os.mknod("blk", stat.S_IFBLK | 0o600, os.makedev(8, 0)), errno.EPERM)
    attempt("mknod char 1:3", lambda: os.mknod("chr", stat.S_IFCHR | 0o666, os.makedev(1, 3)), errno.EPERM)
    attempt("mknod /dev/sda-pwn", lambda: os.mknod("/dev/sda-pwn", stat.S_IFBLK | 0o600, os.makedev(8, 0)),
            errno.EPERM, errno.EACCES)
    for dev in ("/dev/mem", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/vsock", "/dev/kvm"):
        attempt("open " + dev, lambda: os.open(dev, os.O_RDONLY), errno.ENOENT)
    extra = sorted(set(os.listdir("/dev")) - ALLOWED)
    (escaped if extra else blocked).append("/dev extra entries: %s" % (extra or "none"))


def neighbour():
    os.mkfifo("fifo")
    with open("/dev/null", "w") as f:
        f.write("x")
    return None if len(open("/dev/urandom", "rb").read(16)) == 16 else "urandom short read"


if __name__ == "__main__":
    main(attack, neighbour)
