#!/usr/bin/env python3
"""Trusted workspaces through the real server and CLI: a workspace's
.corral/rules are ignored until the user runs `corral trust DIR`, then they
judge commands run there (and only there, not in its subdirectories), but
only as they were when the user trusted them: any change (an edit, a file
a sandbox writes) stops them loading, with an error naming the file, until
`corral trust DIR` again; the trust list's changes take effect without a
restart; a broken workspace rules file is reported by `corral approvals`
and `corral doctor`; `corral trust --list/--remove` and its errors; a line
from an older corral (no digest) loads nothing and says why."""
import json
import os
import shutil
import subprocess
import tempfile

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


def rules_error():
    """What `corral approvals` says was not loaded."""
    return w.corral("approvals").stderr


def test_edits_need_trust_again(t):
    team_rules("ask the release manager")
    r, ran = touch()
    t.ok(ran, "an edited workspace rules file stops the workspace's rules loading: the command runs",
         r.stdout + r.stderr)
    want = "%s changed since you trusted it (team.rules changed): review them and run `corral trust %s` again" % (
        RULES_DIR, WS)
    t.ok(want in rules_error(), "corral approvals names the file that changed and what to do", rules_error())
    d = doctor(w.ws)
    t.ok(d.returncode == 1 and want in d.stdout, "so does corral doctor, which exits 1", d.stdout)
    r = w.corral("trust", "--list")
    t.ok(r.stdout.startswith("changed  %s\n" % WS) and want in r.stdout, "corral trust --list shows it changed",
         r.stdout)
    r = w.corral("trust", w.ws)
    t.ok(r.returncode == 0 and "trusted %s again" % WS in r.stdout, "corral trust DIR pins the new rules",
         r.stdout + r.stderr)
    r, ran = touch()
    t.ok(not ran and "ask the release manager" in r.stderr, "and the edited rule applies at once", r.stderr)
    t.ok("not loaded" not in rules_error(), "the error is gone", rules_error())


def test_list_and_duplicates(t):
    r = w.corral("trust", w.ws)
    t.ok(r.returncode == 0 and "trusted already" in r.stdout, "trusting again says so", r.stdout + r.stderr)
    r = w.corral("trust", "--list")
    t.eq(r.stdout, "current  " + WS + "\n", "corral trust --list prints the canonical path once, current")
    with open(TRUSTED) as f:
        lines = [ln for ln in f.read().splitlines() if not ln.startswith("#")]
    t.eq(len(lines), 2, "the trust file holds the directory once, then its one rules file", lines)
    t.ok(lines[0].startswith("sha256:") and lines[0].endswith(" " + WS) and lines[1].startswith("  sha256:")
         and lines[1].endswith(" team.rules"), "each as a SHA-256 digest and the path or name", lines)


def next_rules_event(screen):
    ev = screen.events.pop(0) if screen.events else screen.read_msg()
    while ev.get("event") != "rules":
        ev = screen.events.pop(0) if screen.events else screen.read_msg()
    return ev


def test_broken_workspace_file(t):
    broken = os.path.join(RULES_DIR, "zz-broken.rules")
    screen = w.connect("screen")
    screen.call({"cmd": "subscribe"})
    write(broken, 'prefix_rule(pattern=["ls"],\n    decision="sometimes")\n')
    r, ran = touch()
    ev = next_rules_event(screen)
    t.ok("(zz-broken.rules added)" in (ev.get("rules_error") or ""), "an attached screen hears at once that a file "
         "was added since the workspace was trusted (a rules event)", ev)
    r = w.corral("trust", w.ws)
    t.ok(r.returncode == 0 and broken + ":2:14: invalid decision: sometimes" in r.stderr,
         "corral trust shows the broken file's error as it pins it", r.stdout + r.stderr)
    r, ran = touch()
    ev = next_rules_event(screen)
    t.ok(broken + ":2:14" in (ev.get("rules_error") or ""), "then the broken file's FILE:LINE:COLUMN error "
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
    w.corral("trust", w.ws)
    touch()
    ev = next_rules_event(screen)
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
    t.ok(not os.path.exists(TRUSTED) or all(ln.startswith("#") for ln in open(TRUSTED).read().splitlines()),
         "failed calls trust nothing")


def test_sandbox_cannot_grant_itself(t):
    """Issue 9 item 3: a trusted directory deep below a writable root (here
    a subdirectory of the session's workspace, trusted on its own, further
    down than the three levels within which agent configuration is kept
    read-only) has a .corral the sandbox can write.  An allow rule written
    there from inside the sandbox must not let the next escalation run
    outside unasked."""
    app = os.path.join(w.ws, "deep", "down", "below", "app")
    app_rules = os.path.join(app, ".corral", "rules")
    os.makedirs(app_rules, exist_ok=True)
    write(os.path.join(app_rules, "team.rules"), 'prefix_rule(pattern=["make", "deploy"], decision="forbidden")\n')
    APP = os.path.realpath(app)
    r = w.corral("trust", app)
    t.ok(r.returncode == 0, "the user trusts WS/deep/down/below/app with its team rules", r.stdout + r.stderr)
    outside = tempfile.mkdtemp(prefix="corral-trust-", dir="/var/tmp")
    marker = os.path.join(outside, "escaped")
    granted = os.path.join(app_rules, "zz-granted.rules")
    rule = 'prefix_rule(pattern=["touch", "%s"], decision="allow")' % marker
    r = w.corral("exec", "-C", w.ws, "--", "sh", "-c",
                 "printf '%%s\\n' '%s' > deep/down/below/app/.corral/rules/zz-granted.rules" % rule)
    t.ok(r.returncode == 0 and os.path.exists(granted), "a sandboxed command in the workspace can write "
         "deep/down/below/app/.corral/rules (it is deep below a writable root)", r.stdout + r.stderr)

    def escalate():
        return w.corral("exec", "-C", app, "--approval-policy", "never", "--sandbox-permissions",
                        "require_escalated", "--justification", "test", "--", "touch", marker)
    r = escalate()
    t.ok(r.returncode != 0 and not os.path.exists(marker), "the next escalation is not allowed by the rule it "
         "wrote: it is refused and nothing ran outside", r.stdout + r.stderr)
    want = "%s changed since you trusted it (zz-granted.rules added)" % os.path.join(APP, ".corral", "rules")
    t.ok(want in rules_error() and "corral trust %s" % APP in rules_error(),
         "the error names the file and how to trust it again", rules_error())
    r = w.corral("trust", app)
    t.ok(r.returncode == 0 and granted.replace(app, APP) in r.stdout, "the user reviews it and trusts WS/app again",
         r.stdout + r.stderr)
    r = escalate()
    t.ok(r.returncode == 0 and os.path.exists(marker), "now the rule loads and the escalation runs unasked",
         r.stdout + r.stderr)
    w.corral("trust", "--remove", app)
    shutil.rmtree(outside, ignore_errors=True)


def test_trusted_before_digests(t):
    """A trust file from an older corral holds bare paths: such a workspace
    loads nothing until it is trusted again, and says so."""
    with open(TRUSTED, "w") as f:
        f.write(WS + "\n")
    r, ran = touch()
    t.ok(ran, "a workspace trusted before digests does not load its rules", r.stdout + r.stderr)
    t.ok("%s was trusted before corral pinned trust" % WS in rules_error() and "corral trust %s" % WS in rules_error(),
         "and the error says to run corral trust again", rules_error())
    r = w.corral("trust", "--list")
    t.ok(r.stdout.startswith("unpinned " + WS), "corral trust --list shows it unpinned", r.stdout)
    w.corral("trust", w.ws)
    r, ran = touch()
    t.ok(not ran, "trusted again, its rules load", r.stdout + r.stderr)


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_untrusted_is_ignored, test_trust_applies_rules, test_edits_need_trust_again,
                          test_list_and_duplicates, test_broken_workspace_file, test_remove, test_errors,
                          test_sandbox_cannot_grant_itself, test_trusted_before_digests])
    finally:
        w.cleanup()
