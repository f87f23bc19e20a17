#!/usr/bin/env python3
# id: F20
# tries: see and touch the host's /tmp and /dev/shm (where corral keeps its placeholder registry): look for canaries the runner made there, write files into both
# expect: the host canaries are invisible (ENOENT); files written here never appear on the host (runner checks)
# neighbour: /tmp and /dev/shm are writable inside
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F20_private_tmp_shm.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, blocked, escaped, main


def attack():
    tmp_canary = INFO.get("host_tmp_canary")
    shm_name = INFO.get("devshm_name")
    if tmp_canary:
        attempt("read host " + tmp_canary, lambda: open(tmp_canary).read(), errno.ENOENT)
    if shm_name:
        attempt("read host /dev/shm/" + shm_name, lambda: open("/dev/shm/" + shm_name).read(), errno.ENOENT)
    visible = [n for n in os.listdir("/dev/shm")]
    (escaped if visible else blocked).append("/dev/shm entries: %s" % (visible or "none"))
    token = INFO.get("token", "manual")
    for d in ("/tmp", "/dev/shm"):
        with open("%s/corral-battery-%s-inside" % (d, token), "w") as f:
            f.write("written inside the sandbox\n")
    blocked.append("wrote /tmp and /dev/shm files (the host must not see them)")


def neighbour():
    token = INFO.get("token", "manual")
    for d in ("/tmp", "/dev/shm"):
        if not os.path.exists("%s/corral-battery-%s-inside" % (d, token)):
            return "file in %s vanished" % d
    return None


if __name__ == "__main__":
    main(attack, neighbour)
