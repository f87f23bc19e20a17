#!/usr/bin/env python3
# id: F23
# tries: raw clone(2) with namespace flags (NEWUSER, NEWNET, NEWPID, NEWNS) and with NEWUSER plus high bits (legacy clone drops bits 32-63, so the filter must mask them)
# expect: EPERM for every call
# neighbour: fork, threads and subprocesses work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F23_clone_ns.py [INFO.json]
import errno
import os
import signal
import subprocess
import threading

from attacklib import attempt, main, sys_call

SYS_clone = 56
FLAGS = {"NEWUSER": 0x10000000, "NEWNET": 0x40000000, "NEWPID": 0x20000000, "NEWNS": 0x20000}


def clone(flags):
    pid = sys_call(SYS_clone, flags | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def attack():
    for name, flag in FLAGS.items():
        attempt("clone(%s)" % name, lambda: clone(flag), errno.EPERM)
    for bit in (32, 40):
        attempt("clone(NEWUSER|1<<%d)" % bit, lambda: clone(FLAGS["NEWUSER"] | (1 << bit)), errno.EPERM)


def neighbour():
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    if os.waitpid(pid, 0)[1] >> 8 != 3:
        return "fork child status wrong"
    box = []
    t = threading.Thread(target=lambda: box.append(1))
    t.start()
    t.join()
    if box != [1]:
        return "thread did not run"
    return None if subprocess.run(["true"]).returncode == 0 else "subprocess true failed"


if __name__ == "__main__":
    main(attack, neighbour)
