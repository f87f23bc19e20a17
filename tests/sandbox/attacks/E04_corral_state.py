#!/usr/bin/env python3
# id: E04
# tries: read corral's own state: the state directory (sessions, approvals), the config directory, the runtime directory (session sockets, tokens) -- paths from the runner, since the XDG variables are not passed in
# expect: EACCES or ENOENT; no canary byte
# neighbour: another application's config (~/.config/other-app) is readable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E04_corral_state.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt_listdir, blocked, escaped, judge_errno, main


def attack():
    secret = INFO.get("secret", "corral-battery-secret")
    home = os.environ["HOME"]
    files = [os.path.join(INFO.get("xdg_state", home + "/.local/state"), "corral", "sessions.db"),
             os.path.join(INFO.get("xdg_config", home + "/.config"), "corral", "approvals.json"),
             os.path.join(INFO.get("xdg_runtime", "/run/user/%d" % os.getuid()), "corral", "session-token")]
    for path in files:
        try:
            data = open(path, "rb").read()
        except OSError as e:
            judge_errno(os.path.basename(path), e, errno.EACCES, errno.ENOENT)
            continue
        bad = secret.encode() in data or b"corral-battery-secret" in data
        (escaped if bad else blocked).append("%s: %d bytes" % (os.path.basename(path), len(data)))
    for d in files:
        d = os.path.dirname(d)
        attempt_listdir(d, d)


def neighbour():
    path = os.environ["HOME"] + "/.config/other-app/settings.ini"
    return None if "colour" in open(path).read() else "other app's config unreadable"


if __name__ == "__main__":
    main(attack, neighbour)
