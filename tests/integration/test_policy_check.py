#!/usr/bin/env python3
"""`corral policy check` against golden files (tests/integration/golden/policy,
see its README): stdout byte for byte, stderr byte for byte, and the exit
status.  The codex-* cases are `codex execpolicy check` 0.171.0's own
transcripts, so corral prints what Codex
prints.  No server: policy check reads rules files only.

CORRAL_GOLDEN_UPDATE=1 rewrites the golden output of the cases that are
corral's own (never the codex-* ones) from the current binary."""
import json
import os
import shlex
import subprocess
import tempfile

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


def test_without_rules_as_the_server(t):
    """No --rules: the rules the server loads for a command run in DIR
    (-C, default here): the user's, the workspace's once it is trusted,
    corral's built-in ones when none of those matches."""
    base = tempfile.mkdtemp(prefix="crlpol")
    env = dict(os.environ, LC_ALL="C", XDG_CONFIG_HOME=os.path.join(base, "config"),
               XDG_STATE_HOME=os.path.join(base, "state"), XDG_RUNTIME_DIR=os.path.join(base, "run"))
    os.makedirs(os.path.join(base, "run"))
    os.makedirs(os.path.join(base, "config", "corral", "rules"))
    with open(os.path.join(base, "config", "corral", "rules", "default.rules"), "w") as f:
        f.write('prefix_rule(pattern=["make", "deploy"], decision="forbidden", justification="not from a laptop")\n')
    ws = os.path.join(base, "ws")
    os.makedirs(os.path.join(ws, ".corral", "rules"))
    with open(os.path.join(ws, ".corral", "rules", "ws.rules"), "w") as f:
        f.write('prefix_rule(pattern=["make", "test"], decision="allow")\n')

    def check(*args, cwd=base):
        r = subprocess.run([CORRAL, "policy", "check"] + list(args), cwd=cwd, capture_output=True, text=True,
                           timeout=TIMEOUT, env=env)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = None
        return r, out

    r, out = check("-C", ws, "--", "make", "deploy")
    t.ok(r.returncode == 0 and out and out.get("decision") == "forbidden"
         and out["matchedRules"][0]["prefixRuleMatch"]["justification"] == "not from a laptop",
         "-C DIR: the user's rules decide, with no --rules", r.stdout + r.stderr)
    r, out = check("-C", ws, "--", "make", "test")
    t.ok(out == {"matchedRules": []} and "trust" in r.stderr,
         "an untrusted workspace's rules do not count, and stderr says they were left out", r.stdout + r.stderr)
    subprocess.run([CORRAL, "trust", ws], env=env, capture_output=True, timeout=TIMEOUT)
    r, out = check("--", "make", "test", cwd=ws)
    t.ok(r.returncode == 0 and out and out.get("decision") == "allow",
         "trusted, the workspace's own rules count (the current directory, without -C)", r.stdout + r.stderr)
    r, out = check("-C", ws, "--", "git", "push")
    t.ok(out and out.get("decision") == "prompt" and "built-in rules answer" in r.stderr,
         "where none of those matches, corral's built-in rules answer, as in the server", r.stdout + r.stderr)
    with open(os.path.join(base, "config", "corral", "rules", "broken.rules"), "w") as f:
        f.write("prefix_rule(pattern=[\n")
    r, out = check("-C", ws, "--", "make", "deploy")
    t.ok(r.returncode == 1 and "broken.rules:" in r.stderr and "left out" in r.stderr,
         "a rules file with an error is named, left out as the server leaves it out, and the status is 1",
         r.stdout + r.stderr)
    r, out = check("-C", os.path.join(base, "nope"), "--", "ls")
    t.ok(r.returncode == 1 and "is not a directory" in r.stderr, "a -C that is no directory is said", r.stderr)


if __name__ == "__main__":
    run_tests(Tap(), [test_golden, test_codex_messages, test_positions, test_without_rules_as_the_server])
