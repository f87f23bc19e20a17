#!/usr/bin/env python3
"""`corral policy check` against golden files (tests/integration/golden/policy,
see its README): stdout byte for byte, stderr byte for byte, and the exit
status.  The codex-* cases are `codex execpolicy check` 0.171.0's own
transcripts, so corral prints what Codex
prints.  No server: policy check reads rules files only.

CORRAL_GOLDEN_UPDATE=1 rewrites the golden output of the cases that are
corral's own (never the codex-* ones) from the current binary."""
import os
import shlex
import subprocess

from harness import CORRAL, TIMEOUT, Tap, run_tests

GOLDEN = os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR") or os.path.join(os.path.dirname(__file__), ".."),
                      "integration", "golden", "policy")
UPDATE = os.environ.get("CORRAL_GOLDEN_UPDATE") == "1"

# What Codex 0.171.0 prints on stderr for these
# files: corral's message must carry the same words (after FILE:LINE:COLUMN).
CODEX_MESSAGES = {
    "err-decision": "invalid decision: maybe",
    "err-match": 'expected every example to match at least one rule. rules: ["PrefixRule { pattern: '
                 'PrefixPattern { first: \\"git\\", rest: [Single(\\"status\\")] }, decision: Allow, '
                 'justification: None }"]; unmatched examples: ["git diff"]',
    "err-wildcard": "network_rule host must be a specific host; wildcards are not allowed",
    "err-ask": "invalid decision: ask",
    "err-ftp": "network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ftp)",
    "err-unknown-kwarg": "Found `reviewer` extra named parameter(s)",
}


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def run_case(name):
    with open(os.path.join(GOLDEN, name + ".case")) as f:
        args_line, exit_line = f.read().splitlines()[:2]
    args = shlex.split(args_line)
    r = subprocess.run([CORRAL, "policy", "check"] + args, cwd=GOLDEN, capture_output=True, timeout=TIMEOUT,
                       env=dict(os.environ, LC_ALL="C"))
    return args_line, int(exit_line.split()[1]), r


def write_or_remove(path, data):
    if data:
        with open(path, "wb") as f:
            f.write(data)
    elif os.path.exists(path):
        os.unlink(path)


def test_golden(t):
    names = sorted(n[:-5] for n in os.listdir(GOLDEN) if n.endswith(".case"))
    t.ok(len([n for n in names if n.startswith("codex-")]) == 12, "all 12 Codex transcripts are here",
         names)
    for name in names:
        args, want_exit, r = run_case(name)
        base = os.path.join(GOLDEN, name)
        if UPDATE and not name.startswith("codex-"):
            write_or_remove(base + ".stdout", r.stdout)
            write_or_remove(base + ".stderr", r.stderr)
        want_out, want_err = read(base + ".stdout"), read(base + ".stderr")
        ok = r.returncode == want_exit and r.stdout == want_out and r.stderr == want_err
        t.ok(ok, "%s: corral policy check %s" % (name, args),
             "exit %d (want %d)\nstdout: %r\nwant:   %r\nstderr: %r\nwant:   %r" %
             (r.returncode, want_exit, r.stdout, want_out, r.stderr, want_err))


def test_codex_messages(t):
    for name, msg in sorted(CODEX_MESSAGES.items()):
        _, _, r = run_case(name)
        err = r.stderr.decode()
        t.ok(err.startswith("Error: failed to parse policy at ") and msg in err and r.returncode == 1,
             "%s: exit 1 with Codex's message %r" % (name, msg), err)


def test_positions(t):
    # A broken file is named with the line and column of what is wrong.
    _, _, r = run_case("err-syntax")
    t.ok(b"bad-syntax.rules:4:5: " in r.stderr, "a syntax error names FILE:LINE:COLUMN", r.stderr)
    _, _, r = run_case("err-second-file")
    t.ok(r.stdout == b"" and b"bad-syntax.rules:4:5: " in r.stderr,
         "one broken file among several: nothing is printed on stdout, the broken one is named", r.stderr)


if __name__ == "__main__":
    run_tests(Tap(), [test_golden, test_codex_messages, test_positions])
