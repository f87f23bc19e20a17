#!/usr/bin/env python3
# id: R05
# tries: exhaust descriptors: open /dev/null until it fails; raise RLIMIT_NOFILE's hard limit
# expect: EMFILE after about 4093 opens (RLIMIT_NOFILE 4096); raising the hard limit fails with EPERM
# neighbour: after closing them, opening works again
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R05_nofile.py [INFO.json]
import errno
import os
import resource

from attacklib import attempt, blocked, escaped, main, setrlimit


def attack():
    fds = []
    failure = None
    while len(fds) < 100000:
        try:
            fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as e:
            failure = e
            break
    for fd in fds:
        os.close(fd)
    if failure is None or failure.errno != errno.EMFILE or not 4000 <= len(fds) <= 4096:
        escaped.append("opened %d, then %s" % (len(fds), failure))
    else:
        blocked.append("EMFILE after %d" % len(fds))
    attempt("raise RLIMIT_NOFILE to 8192", lambda: setrlimit(resource.RLIMIT_NOFILE, (8192, 8192)), errno.EPERM)


def neighbour():
    os.close(os.open("/dev/null", os.O_RDONLY))
    return None


if __name__ == "__main__":
    main(attack, neighbour)
