#!/usr/bin/env python3
"""`corral demo` without a terminal starts its sessions and says so; the
denial its shell suggests trying is a real sandbox denial (the write is
refused as "Read-only file system" although the host would allow it), and
the write it says works does work, both as root and, run again as a
temporary user, as an unprivileged user."""
import json
import os
import re

from harness import CORRAL, Tap, World, run_tests, wait_until

w = World()
w.start_server()
ENV = {"TMPDIR": w.base}  # the demo's scratch workspace goes under the world


def screen(sid):
    return w.corral("screen", str(sid)).stdout


def test_demo_shell_shows_a_real_denial(t):
    r = w.corral("demo", env=ENV)
    t.eq(r.returncode, 0, "corral demo without a terminal starts the sessions and exits 0", r.stderr)
    t.ok("corral attach" in r.stdout, "and says how to see them", r.stdout)
    sessions = json.loads(w.corral("ls", "--json").stdout)["sessions"]
    shell = [s for s in sessions if s["name"] == "demo-shell"]
    t.eq(len(shell), 1, "the demo's shell session is there", sessions)
    if not shell:
        return
    sid, ws = shell[0]["id"], shell[0]["cwd"]
    text = wait_until(lambda: "workspace is writable" in screen(sid) and screen(sid))
    m = re.search(r"Try: (.+?) +\(denied", text or "")
    t.ok(m, "the shell suggests a command that the sandbox denies", text)
    if not m:
        return
    denied = m.group(1)
    target = os.path.join(ws, denied.split()[-1])
    w.corral("send", "--enter", str(sid), denied)
    out = wait_until(lambda: "Read-only file system" in screen(sid) and screen(sid), timeout=30)
    t.ok(out, "'%s' is refused by the sandbox (Read-only file system)" % denied, screen(sid))
    t.ok(not os.path.exists(target), "and nothing was written on the host", target)
    parent = os.path.dirname(target)
    t.ok(os.access(parent, os.W_OK), "although the host lets this user write there: the denial is the sandbox's",
         parent)
    m = re.search(r"^ +(touch \S+) +\(the workspace is writable", text, re.M)
    t.ok(m, "the shell suggests a write that works", text)
    if m:
        w.corral("send", "--enter", str(sid), m.group(1))
        made = os.path.join(ws, m.group(1).split()[-1])
        t.ok(wait_until(lambda: os.path.exists(made)), "'%s' writes into the workspace" % m.group(1), screen(sid))


def test_as_an_unprivileged_user(t):
    """The same as the temporary user (root only; the user's run skips
    this)."""
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    import sys
    sys.path.insert(0, os.path.join(here, ".."))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, helpers=[os.path.join(here, "harness.py")])


run_tests(Tap(), [test_demo_shell_shows_a_real_denial, test_as_an_unprivileged_user])
