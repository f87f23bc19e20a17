#!/usr/bin/env python3
# id: F21
# tries: gain privileges through set-user-ID programs: run /usr/bin/passwd and /usr/bin/su (set-uid root) until they prompt, then read their credentials; make a set-uid copy of python in the workspace and run it
# expect: the effective uid stays ours and CapEff stays 0 (no_new_privs, nosuid mounts)
# neighbour: ordinary programs run (id -u prints our uid)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F21_setuid.py [INFO.json]
import os
import select
import shutil
import subprocess
import sys

from attacklib import blocked, escaped, main


def creds(pid):
    status = {}
    for line in open("/proc/%d/status" % pid):
        key, _, val = line.partition(":")
        status[key] = val.split()
    return int(status["Uid"][1]), int(status["CapEff"][0], 16)


def wait_prompt(p):
    # an interactive setuid program prints a prompt, then waits for input
    buf = b""
    while b":" not in buf:
        r, _, _ = select.select([p.stdout], [], [], 10)
        if not r:
            return False
        chunk = os.read(p.stdout.fileno(), 256)
        if not chunk:
            return False
        buf += chunk
    return True


def attack():
    me = os.geteuid()
    for prog in ("/usr/bin/passwd", "/usr/bin/su"):
        if not os.path.exists(prog):
            continue
        p = subprocess.Popen([prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            if wait_prompt(p):
                euid, caps = creds(p.pid)
                bad = euid != me or caps != 0
                (escaped if bad else blocked).append("%s: euid %d, CapEff %x" % (prog, euid, caps))
            else:
                blocked.append("%s: ended without prompting" % prog)
        finally:
            p.kill()
            p.wait()
    shutil.copy(os.path.realpath(sys.executable), "suid-python")
    os.chmod("suid-python", 0o4755)
    out = subprocess.run(["./suid-python", "-c", "import os; s=open('/proc/self/status').read();"
                          "print(os.geteuid(), [l.split()[1] for l in s.splitlines() if l.startswith('CapEff')][0])"],
                         stdout=subprocess.PIPE, text=True).stdout.split()
    bad = int(out[0]) != me or int(out[1], 16) != 0
    (escaped if bad else blocked).append("set-uid copy: euid %s, CapEff %s" % (out[0], out[1]))


def neighbour():
    out = subprocess.run(["id", "-u"], stdout=subprocess.PIPE, text=True).stdout.strip()
    return None if out == str(os.getuid()) else "id -u printed %r" % out


if __name__ == "__main__":
    main(attack, neighbour)
