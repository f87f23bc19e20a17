#!/usr/bin/env python3
# id: E01
# tries: find the host's secrets in the environment: API keys, cloud keys, tokens, passwords the runner put in corral's environment (each holding a canary value), in os.environ and /proc/self/environ
# expect: none of the variables is set and the canary value appears nowhere
# neighbour: the basic variables (PATH, HOME) and CORRAL_SANDBOX are set
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 E01_secret_env.py [INFO.json]
import os

from attacklib import INFO, blocked, escaped, main

NAMES = [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "NPM_TOKEN",
    "DATABASE_PASSWORD",
    "STRIPE_SECRET",
    "MY_SERVICE_CREDENTIALS",
    "SSH_AUTH_SOCK",
]


def attack():
    present = [n for n in NAMES if n in os.environ]
    (escaped if present else blocked).append("secret variables present: %s" % (present or "none"))
    secret = INFO.get("secret", "corral-battery-secret")
    raw = open("/proc/self/environ", "rb").read().decode(errors="replace")
    carriers = [k for k, v in os.environ.items() if secret in v]
    if secret in raw or carriers:
        escaped.append("canary secret visible in %s" % (carriers or "/proc/self/environ"))
    else:
        blocked.append("canary secret absent")


def neighbour():
    missing = [n for n in ("PATH", "HOME", "CORRAL_SANDBOX") if not os.environ.get(n)]
    return "missing %s" % missing if missing else None


if __name__ == "__main__":
    main(attack, neighbour)
