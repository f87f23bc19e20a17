#!/usr/bin/env python3
# id: R04
# tries: fill the private /tmp: write 64 MiB chunks up to 1.1 GiB
# expect: ENOSPC at the tmpfs size (1 GiB); the file is removed afterwards
# neighbour: after the cleanup /tmp takes a small file again
# needs: -
# sandbox-args: -
# timeout: 120
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 R04_tmp_fill.py [INFO.json]
import errno
import os

from attacklib import blocked, escaped, main

CHUNK = 64 << 20


def attack():
    total = 0
    chunk = b"\xa5" * CHUNK
    failure = None
    with open("/tmp/fill", "wb", buffering=0) as f:
        while total < 1100 << 20:
            try:
                total += f.write(chunk)
            except OSError as e:
                failure = e
                break
    os.unlink("/tmp/fill")
    if failure is None:
        escaped.append("wrote %d MiB without ENOSPC" % (total >> 20))
    elif failure.errno != errno.ENOSPC:
        escaped.append("unexpected %s after %d MiB" % (errno.errorcode[failure.errno], total >> 20))
    else:
        blocked.append("ENOSPC after %d MiB" % (total >> 20))


def neighbour():
    open("/tmp/small", "w").write("ok\n")
    os.unlink("/tmp/small")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
