#!/usr/bin/env python3
# id: E05
# tries: rewrite corral's configuration and state to widen the next sandbox: the config file, a new policy file, the state directory, ~/.config/corral/config (the default place)
# expect: EROFS or EACCES; the host's files are unchanged (runner checks)
# neighbour: a file in the workspace can be written
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E05_corral_config_write.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, main


def attack():
    home = os.environ["HOME"]
    cfg = os.path.join(INFO.get("xdg_config", home + "/.config"), "corral")
    state = os.path.join(INFO.get("xdg_state", home + "/.local/state"), "corral")
    bad = (errno.EROFS, errno.EACCES, errno.ENOENT)
    attempt("append corral config", lambda: open(cfg + "/config", "a").write("[sandbox]\nprofile = full\n"), *bad)
    attempt("create policy.json", lambda: open(cfg + "/policy.json", "w").write('{"allow": "*"}'), *bad)
    attempt("write state", lambda: open(state + "/sessions.db", "a").write("x"), *bad)
    attempt("write ~/.config/corral/config", lambda: open(home + "/.config/corral/config", "w").close(),
            errno.EROFS, errno.EACCES, errno.ENOENT)


def neighbour():
    open("corral-notes.txt", "w").write("ok\n")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
