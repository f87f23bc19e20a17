#!/usr/bin/env python3
# id: P03
# tries: count the processes visible in /proc and look for the host `sleep` the runner started
# expect: only a handful of sandbox pids (init, this command); the host pid is absent
# neighbour: /proc/self/stat is readable and shows a small pid
# needs: host-sleep
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P03_proc_view.py [INFO.json]
import os

from attacklib import INFO, blocked, escaped, main


def attack():
    pids = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
    host = INFO.get("host_sleep_pid")
    if len(pids) > 10:
        escaped.append("%d processes visible: %s" % (len(pids), pids[:20]))
    else:
        blocked.append("%d processes visible: %s" % (len(pids), pids))
    if host and host in pids and host > 10:
        escaped.append("host pid %d visible" % host)
    cmd = open("/proc/1/cmdline", "rb").read().split(b"\0")[0]
    (blocked if b"corral" in cmd else escaped).append("pid 1 is %r" % cmd.decode(errors="replace"))


def neighbour():
    pid = int(open("/proc/self/stat").read().split()[0])
    return None if pid == os.getpid() and pid < 100 else "pid %d" % pid


if __name__ == "__main__":
    main(attack, neighbour)
