#!/usr/bin/env python3
# id: P04
# tries: stack an allow-everything seccomp filter on top of corral's, then retry denied calls (unshare(CLONE_NEWUSER), keyctl, ptrace); try to clear no_new_privs
# expect: stacking is allowed but changes nothing: the calls still fail with EPERM; PR_SET_NO_NEW_PRIVS 0 is EINVAL
# neighbour: installing the extra filter itself succeeds (programs such as browsers sandbox themselves this way)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P04_seccomp_stack.py [INFO.json]
import ctypes
import errno
import struct

from attacklib import attempt, libc, main, sys_call

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SYS_unshare, SYS_keyctl, SYS_ptrace = 272, 250, 101


class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_allow_all():
    insn = ctypes.create_string_buffer(struct.pack("<HBBI", 0x06, 0, 0, 0x7fff0000))  # RET ALLOW
    prog = Fprog(1, ctypes.cast(insn, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def attack():
    global stacked
    try:
        install_allow_all()
        stacked = None
    except OSError as e:
        stacked = str(e)
    attempt("unshare(NEWUSER) after stacking", lambda: sys_call(SYS_unshare, 0x10000000), errno.EPERM)
    attempt("keyctl after stacking", lambda: sys_call(SYS_keyctl, 0, -4 % 2**64, 0), errno.EPERM)
    attempt("ptrace(TRACEME) after stacking", lambda: sys_call(SYS_ptrace, 0, 0, 0, 0), errno.EPERM)
    def clear_nnp():
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    attempt("clear no_new_privs", clear_nnp, errno.EINVAL)


def neighbour():
    return stacked and "stacking a filter failed: " + stacked


if __name__ == "__main__":
    main(attack, neighbour)
