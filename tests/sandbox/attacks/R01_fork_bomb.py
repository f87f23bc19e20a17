#!/usr/bin/env python3
# id: R01
# tries: a bounded fork bomb: fork children that wait on a pipe, up to 1500
# expect: fork fails with EAGAIN near 1024 processes (cgroup pids.max 1024 as root, RLIMIT_NPROC 1024 per user namespace otherwise); all children are gone afterwards
# neighbour: once the children are reaped, fork works again
# needs: -
# sandbox-args: -
# timeout: 120
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R01_fork_bomb.py [INFO.json]
import errno
import os

from attacklib import blocked, escaped, main


def attack():
    r, w = os.pipe()
    pids = []
    failure = None
    for _ in range(1500):
        try:
            pid = os.fork()
        except OSError as e:
            failure = e
            break
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # until the parent closes the pipe
            os._exit(0)
        pids.append(pid)
    os.close(w)
    os.close(r)
    for pid in pids:
        os.waitpid(pid, 0)
    if failure is None:
        escaped.append("made %d processes without hitting a limit" % len(pids))
    elif failure.errno != errno.EAGAIN:
        escaped.append("fork failed after %d with unexpected %s" % (len(pids), errno.errorcode[failure.errno]))
    elif not 900 <= len(pids) <= 1100:
        escaped.append("EAGAIN after %d processes: not the 1024 limit" % len(pids))
    else:
        blocked.append("EAGAIN after %d children" % len(pids))


def neighbour():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return None


if __name__ == "__main__":
    main(attack, neighbour)
