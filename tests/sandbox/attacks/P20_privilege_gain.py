#!/usr/bin/env python3
# id: P20
# tries: gain privileges in place: capset to raise every capability, raise an ambient capability, clear the securebits, PR_SET_MM, setresuid(0) / setgroups([0]), personality(READ_IMPLIES_EXEC)
# expect: EPERM for each; afterwards CapEff is still 0 and NoNewPrivs still 1
# neighbour: querying and setting a harmless personality works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P20_privilege_gain.py [INFO.json]
import ctypes
import errno
import os

from attacklib import attempt, blocked, escaped, libc, main, sys_call

SYS_capset, SYS_personality = 126, 135
PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, PR_SET_SECUREBITS, PR_SET_MM = 47, 2, 28, 35


class Hdr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def prctl(*args):
    if libc.prctl(*args) != 0:
        raise OSError(ctypes.get_errno(), "prctl")


def attack():
    hdr = Hdr(0x20080522, 0)
    data = (Data * 2)(Data(0xffffffff, 0xffffffff, 0xffffffff), Data(0xffffffff, 0xffffffff, 0xffffffff))
    attempt("capset(all)", lambda: sys_call(SYS_capset, ctypes.byref(hdr), data), errno.EPERM)
    attempt("ambient raise CAP_SYS_ADMIN", lambda: prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 21, 0, 0), errno.EPERM)
    attempt("securebits 0", lambda: prctl(PR_SET_SECUREBITS, 0, 0, 0, 0), errno.EPERM)
    attempt("PR_SET_MM exe file", lambda: prctl(PR_SET_MM, 13, 0, 0, 0), errno.EPERM)
    if os.getuid() != 0:
        # EINVAL: uid 0 is not even mapped in the sandbox's user namespace
        attempt("setresuid(0,0,0)", lambda: os.setresuid(0, 0, 0), errno.EPERM, errno.EINVAL)
    attempt("setgroups([0])", lambda: os.setgroups([0]), errno.EPERM)
    sys_call(SYS_personality, 0x0400000)  # READ_IMPLIES_EXEC: allowed, must not matter
    st = open("/proc/self/status").read()
    for key, want in (("CapEff", "0000000000000000"), ("NoNewPrivs", "1")):
        got = [l.split()[1] for l in st.splitlines() if l.startswith(key + ":")][0]
        (blocked if got == want else escaped).append("%s now %s" % (key, got))


def neighbour():
    cur = sys_call(SYS_personality, 0xffffffff)
    sys_call(SYS_personality, 0)
    return None if sys_call(SYS_personality, 0xffffffff) == 0 and cur >= 0 else "personality not settable"


if __name__ == "__main__":
    main(attack, neighbour)
