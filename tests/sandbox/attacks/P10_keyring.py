#!/usr/bin/env python3
# id: P10
# tries: kernel keyrings (a channel between sandboxes and a store of host secrets): keyctl(GET_KEYRING_ID), keyctl(JOIN_SESSION_KEYRING), add_key, request_key
# expect: EPERM (seccomp)
# neighbour: keeping a secret in memory (memfd) works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P10_keyring.py [INFO.json]
import errno
import os

from attacklib import attempt, main, sys_call

SYS_add_key, SYS_request_key, SYS_keyctl = 248, 249, 250
KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING = -4, -3


def attack():
    attempt("keyctl(GET_KEYRING_ID, user)", lambda: sys_call(SYS_keyctl, 0, KEY_SPEC_USER_KEYRING, 0), errno.EPERM)
    attempt("keyctl(JOIN_SESSION_KEYRING)", lambda: sys_call(SYS_keyctl, 1, None), errno.EPERM)
    attempt("add_key(user)", lambda: sys_call(SYS_add_key, b"user", b"battery", b"secret", 6,
                                              KEY_SPEC_SESSION_KEYRING), errno.EPERM)
    attempt("request_key(user)", lambda: sys_call(SYS_request_key, b"user", b"battery", None, 0), errno.EPERM)


def neighbour():
    fd = os.memfd_create("secret")
    os.write(fd, b"s3cret")
    os.lseek(fd, 0, 0)
    ok = os.read(fd, 6) == b"s3cret"
    os.close(fd)
    return None if ok else "memfd read back wrong"


if __name__ == "__main__":
    main(attack, neighbour)
