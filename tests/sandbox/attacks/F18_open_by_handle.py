#!/usr/bin/env python3
# id: F18
# tries: the 'shocker' escape: name_to_handle_at on /etc/passwd, open_by_handle_at with a forged handle of the root inode
# expect: EPERM for both (seccomp)
# neighbour: stat of a file works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F18_open_by_handle.py [INFO.json]
import ctypes
import errno
import os
import struct

from attacklib import AT_FDCWD, attempt, main, sys_call

SYS_name_to_handle_at, SYS_open_by_handle_at = 303, 304


def attack():
    buf = ctypes.create_string_buffer(struct.pack("<Ii", 128, 0) + b"\0" * 128)
    mount_id = ctypes.c_int(0)
    attempt("name_to_handle_at /etc/passwd",
            lambda: sys_call(SYS_name_to_handle_at, AT_FDCWD, b"/etc/passwd", buf, ctypes.byref(mount_id), 0),
            errno.EPERM)
    # handle_bytes 8, type 1 (FILEID_INO32_GEN): inode 2 (a filesystem root), generation 0
    forged = ctypes.create_string_buffer(struct.pack("<IiII", 8, 1, 2, 0))
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    attempt("open_by_handle_at(root inode)", lambda: sys_call(SYS_open_by_handle_at, root, forged, os.O_RDONLY),
            errno.EPERM)
    os.close(root)


def neighbour():
    return None if os.stat("/etc/passwd").st_ino > 0 else "stat failed"


if __name__ == "__main__":
    main(attack, neighbour)
