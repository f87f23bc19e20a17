#!/usr/bin/env python3
# id: R01
# tries: leave the pids limit: open cgroup.procs of the host's cgroup roots for writing (moving out of corral's cgroup), mkdir a new cgroup
# expect: EROFS (the host's /sys is bound read-only) or EACCES; /proc/self/cgroup shows only '/' (cgroup namespace)
# neighbour: /sys/fs/cgroup can be listed
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R01_cgroup_escape.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    roots = ["/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory"]
    for root in roots:
        procs = root + "/cgroup.procs"
        if not os.path.exists(procs):
            continue
        def probe():
            fd = os.open(procs, os.O_WRONLY)
            os.close(fd)  # never write: opening for writing is the escape
        attempt("open %s for writing" % procs, probe, errno.EROFS, errno.EACCES)
        attempt("mkdir %s/corral-battery-escape" % root, lambda: os.mkdir(root + "/corral-battery-escape"),
                errno.EROFS, errno.EACCES)
    # Not an escape by itself, but worth seeing: if the cgroup namespace was
    # made before corral moved the sandbox into its own cgroup, the
    # namespace's root is the launcher's cgroup, and the sandbox's cgroup
    # shows as a child of it (with the launcher's host pid in its name).
    paths = sorted({l.strip().split(":", 2)[2] for l in open("/proc/self/cgroup")})
    if paths != ["/"]:
        print("NOTE cgroup namespace root is above the sandbox's cgroup: /proc/self/cgroup shows %s" % paths)


def neighbour():
    return None if os.listdir("/sys/fs/cgroup") else "/sys/fs/cgroup empty"


if __name__ == "__main__":
    main(attack, neighbour)
