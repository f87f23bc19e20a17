#!/usr/bin/env python3
# id: E02
# tries: list the whole environment; look for variables that make programs run code or reach host services (BASH_ENV, ENV, PROMPT_COMMAND, NODE_OPTIONS, PYTHONSTARTUP, PYTHONPATH, LD_LIBRARY_PATH, GIT_CONFIG_*, GIT_SSH_COMMAND, DOCKER_HOST, KUBECONFIG, *_ASKPASS, DISPLAY, WAYLAND_DISPLAY, XDG_RUNTIME_DIR, proxies)
# expect: only allowlisted names: PATH HOME USER LOGNAME SHELL TERM LANG LC_* TZ TMPDIR COLORTERM CORRAL_SANDBOX CORRAL_SESSION
# neighbour: the allowlisted variables keep the runner's values (TERM, LANG, LC_MESSAGES, TZ, COLORTERM)
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E02_env_allowlist.py [INFO.json]
import os

from attacklib import INFO, blocked, escaped, main

ALLOWED = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ", "TMPDIR", "COLORTERM", "CORRAL_SANDBOX",
           "CORRAL_SESSION"}


def attack():
    extra = sorted(n for n in os.environ if n not in ALLOWED and not n.startswith("LC_"))
    (escaped if extra else blocked).append("variables outside the allowlist: %s" % (extra or "none"))


def neighbour():
    want = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_MESSAGES": "C", "TZ": "UTC", "COLORTERM": "truecolor"}
    if not INFO:
        return None
    wrong = {k: os.environ.get(k) for k, v in want.items() if os.environ.get(k) != v}
    return "allowlisted variables changed: %s" % wrong if wrong else None


if __name__ == "__main__":
    main(attack, neighbour)
