#!/usr/bin/env python3
# id: P19
# tries: system calls of other ABIs that a native-only filter might not see: x32 (nr | 0x40000000) and the i386 int 0x80 gate (from executable memory), each in a child
# expect: the child is killed by SIGSYS (the filter's bad-architecture action); on a kernel that runs no i386 system calls at all (ia32 emulation off, some paravirtualized guests) int 0x80 faults with SIGSEGV before any filter is asked, which runs nothing either
# neighbour: a native getpid works
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P19_foreign_arch.py [INFO.json]
import ctypes
import mmap
import os
import signal

from attacklib import blocked, escaped, libc, main


def in_child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1]


def x32_getpid():
    libc.syscall(ctypes.c_long(39 | 0x40000000))


def int80_getpid():
    code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])  # mov eax, 20 (i386 getpid); int 0x80; ret
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()


def attack():
    for name, fn in (("x32 getpid", x32_getpid), ("int 0x80 getpid", int80_getpid)):
        st = in_child(fn)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGSYS:
            blocked.append("%s: SIGSYS" % name)
        elif name.startswith("int 0x80") and os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGSEGV:
            # The gate itself faults: this kernel has no i386 entry, so no
            # system call ran (what the filter would have stopped).
            blocked.append("%s: SIGSEGV (the kernel runs no i386 system calls)" % name)
        else:
            escaped.append("%s: child ended with status %d" % (name, st))


def neighbour():
    return None if libc.syscall(ctypes.c_long(39)) == os.getpid() else "native getpid wrong"


if __name__ == "__main__":
    main(attack, neighbour)
