#!/usr/bin/env python3
# id: E06
# tries: plant a project-local corral policy: write .corral/config and .corral/sandbox.json at the workspace root, rename or remove the .corral directory
# expect: EROFS for writes, EBUSY for rename/rmdir (.corral is a read-only mount, made empty for the run if absent); the placeholder is gone and empty after the run (runner checks)
# neighbour: listing .corral works (it is empty)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E06_project_policy.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    attempt("write .corral/config", lambda: open(".corral/config", "w").write("[sandbox]\nprofile = full\n"),
            errno.EROFS)
    attempt("write .corral/sandbox.json", lambda: open(".corral/sandbox.json", "w").write('{"write": ["/"]}'),
            errno.EROFS)
    attempt("mkdir .corral/x", lambda: os.mkdir(".corral/x"), errno.EROFS)
    attempt("rename .corral", lambda: os.rename(".corral", ".corral.aside"), errno.EBUSY)
    attempt("rmdir .corral", lambda: os.rmdir(".corral"), errno.EBUSY)


def neighbour():
    return None if os.listdir(".corral") == [] else ".corral not empty"


if __name__ == "__main__":
    main(attack, neighbour)
