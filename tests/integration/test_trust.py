#!/usr/bin/env python3
"""Trusted workspaces through the real server and CLI: a workspace's
.corral/rules are ignored until the user runs `corral trust DIR`, then they
judge commands run there (and only there, not in its subdirectories); edits
to them and to the trust list take effect without a restart; a broken
workspace rules file is reported by `corral approvals` and `corral doctor`;
`corral trust --list/--remove` and its errors."""
import json
import os
import subprocess

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

w = World()
RULES_DIR = os.path.join(w.ws, ".corral", "rules")
os.makedirs(RULES_DIR)
TEAM = os.path.join(RULES_DIR, "team.rules")
TRUSTED = os.path.join(w.config, "corral", "trusted")
WS = os.path.realpath(w.ws)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def team_rules(justification):
    write(TEAM, 'prefix_rule(pattern=["touch", "made-here"], decision="forbidden",\n'
                '            justification="%s")\n' % justification)


team_rules("the team says no")
w.start_server()


def touch(cwd=None):
    """corral exec of the command the workspace's rule forbids; whether the
    file appeared tells whether it ran."""
    cwd = cwd or w.ws
    target = os.path.join(cwd, "made-here")
    if os.path.exists(target):
        os.unlink(target)
    r = w.corral("exec", "-C", cwd, "--", "touch", "made-here")
    return r, os.path.exists(target)


def exec_code(cwd):
    """The raw protocol's answer: the error code, or None when it ran."""
    c = w.connect("agent")
    r = c.call({"cmd": "exec", "argv": ["touch", "made-here"], "workdir": cwd})
    c.close()
    return (r.get("error") or {}).get("code") if isinstance(r.get("error"), dict) else r.get("code")


def doctor(cwd):
    return subprocess.run([CORRAL, "doctor"], cwd=cwd, env=w.env, capture_output=True, text=True, timeout=120)


def test_untrusted_is_ignored(t):
    r, ran = touch()
    t.ok(r.returncode == 0 and ran, "an untrusted workspace's forbidding rule is not applied: the command runs",
         r.stdout + r.stderr)
    t.ok("not trusted" in w.server_log() and WS in w.server_log(),
         "the server log says the workspace has rules but is not trusted", w.server_log())
    d = doctor(w.ws)
    t.ok("this workspace is not trusted, so its rules are ignored" in d.stdout and "corral trust %s" % WS in d.stdout,
         "corral doctor in it says its rules are ignored and how to trust it", d.stdout)


def test_trust_applies_rules(t):
    r = w.corral("trust", w.ws)
    t.ok(r.returncode == 0 and WS in r.stdout and TEAM in r.stdout, "corral trust DIR says it and lists the rules "
         "files that will load", r.stdout + r.stderr)
    r, ran = touch()
    t.ok(r.returncode == 1 and not ran, "after corral trust the same command is refused and does not run",
         r.stdout + r.stderr)
    t.ok("forbids" in r.stderr and "the team says no" in r.stderr, "with the workspace rule's justification",
         r.stderr)
    t.eq(exec_code(w.ws), "forbidden_by_policy", "the protocol's error code is forbidden_by_policy")
    sub = os.path.join(w.ws, "sub")
    os.makedirs(sub, exist_ok=True)
    r, ran = touch(sub)
    t.ok(r.returncode == 0 and ran, "trust is exact: in a subdirectory the workspace's rules do not apply",
         r.stdout + r.stderr)


def test_edits_take_effect(t):
    team_rules("ask the release manager")
    r, ran = touch()
    t.ok(not ran and "ask the release manager" in r.stderr, "an edited workspace rules file is reloaded at once",
         r.stderr)


def test_list_and_duplicates(t):
    r = w.corral("trust", w.ws)
    t.ok(r.returncode == 0 and "trusted already" in r.stdout, "trusting again says so", r.stdout + r.stderr)
    r = w.corral("trust", "--list")
    t.eq(r.stdout, WS + "\n", "corral trust --list prints the canonical path once")
    with open(TRUSTED) as f:
        t.eq(f.read(), WS + "\n", "the trust file holds one absolute path per line, no duplicates")


def test_broken_workspace_file(t):
    broken = os.path.join(RULES_DIR, "zz-broken.rules")
    screen = w.connect("screen")
    screen.call({"cmd": "subscribe"})
    write(broken, 'prefix_rule(pattern=["ls"],\n    decision="sometimes")\n')
    r, ran = touch()
    ev = screen.events.pop(0) if screen.events else screen.read_msg()
    while ev.get("event") != "rules":
        ev = screen.events.pop(0) if screen.events else screen.read_msg()
    t.ok(broken + ":2:14" in (ev.get("rules_error") or ""), "an attached screen hears of the broken file at once "
         "(a rules event)", ev)
    t.ok(not ran, "the other workspace file still loads: the command is still refused", r.stderr)
    a = w.corral("approvals")
    t.ok("some rules were not loaded" in a.stderr and broken + ":2:14: invalid decision: sometimes" in a.stderr,
         "corral approvals shows the broken file's FILE:LINE:COLUMN error", a.stderr)
    d = doctor(w.ws)
    t.ok(d.returncode == 1 and broken + ":2:14: invalid decision: sometimes" in d.stdout,
         "corral doctor in the workspace names the error and exits 1", "%d\n%s" % (d.returncode, d.stdout))
    t.ok(TEAM in d.stdout, "and lists the workspace file that loads", d.stdout)
    os.unlink(broken)
    touch()
    ev = screen.events.pop(0) if screen.events else screen.read_msg()
    while ev.get("event") != "rules":
        ev = screen.events.pop(0) if screen.events else screen.read_msg()
    t.ok(not ev.get("rules_error"), "and that it is fixed (rules_error null)", ev)
    screen.close()
    a = w.corral("approvals")
    t.ok("not loaded" not in a.stderr, "once it is removed the error is gone", a.stderr)


def test_remove(t):
    r = w.corral("trust", "--remove", w.ws)
    t.ok(r.returncode == 0 and WS in r.stdout, "corral trust --remove DIR", r.stdout + r.stderr)
    t.eq(w.corral("trust", "--list").stdout, "", "the list is empty again")
    r, ran = touch()
    t.ok(r.returncode == 0 and ran, "and the workspace's rules no longer apply", r.stdout + r.stderr)
    r = w.corral("trust", "--remove", w.ws)
    t.ok(r.returncode == 1 and "is not trusted" in r.stderr and WS in r.stderr,
         "removing a directory that is not trusted fails naming it", r.stderr)


def test_errors(t):
    missing = os.path.join(w.base, "no-such-dir")
    r = w.corral("trust", missing)
    t.ok(r.returncode == 1 and ("cannot trust %s: No such file or directory" % missing) in r.stderr,
         "trusting a missing directory fails with the path and the reason", r.stderr)
    r = w.corral("trust", TEAM)
    t.ok(r.returncode == 1 and "not a directory" in r.stderr and TEAM in r.stderr,
         "trusting a file fails, naming it", r.stderr)
    r = w.corral("trust")
    t.ok(r.returncode == 2 and "usage:" in r.stderr, "no directory is a usage error", r.stderr)
    t.ok(not os.path.exists(TRUSTED) or open(TRUSTED).read() == "", "failed calls trust nothing")


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_untrusted_is_ignored, test_trust_applies_rules, test_edits_take_effect,
                          test_list_and_duplicates, test_broken_workspace_file, test_remove, test_errors])
    finally:
        w.cleanup()
