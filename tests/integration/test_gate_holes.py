#!/usr/bin/env python3
"""The holes a review found in the approval boundary, each tried from
inside a sandbox against a real server, as an attacker would: paths sent
from a sandbox are resolved on the server (a symlink inside the workspace
is refused, a claimed cwd never becomes the workspace), "always" never
saves a rule for an interpreter, an escalation keeps the session's own deny
entries and still runs when deny entries keep a sandbox, and an empty
message does not close a session's channel.  Each test is named after the
hole it closes."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

w = World()
w.start_server()
mon = w.connect("monitor")
mon.call({"cmd": "subscribe"})
# Outside every writable root; the sandbox sees it read-only.
outside = tempfile.mkdtemp(prefix="corral-holes-", dir="/var/tmp")


def next_approval(kind=None, proc=None, conn=None):
    """The next approval event of kind; None if proc (the requester)
    ends first without one."""
    conn = conn or mon
    waited = 0.0
    while True:
        if conn.events:
            m = conn.events.pop(0)
        else:
            try:
                m = conn.read_msg(timeout=0.5)
            except TimeoutError:
                waited += 0.5
                if (proc is not None and proc.poll() is not None) or waited > TIMEOUT:
                    return None
                continue
        if m.get("event") == "approval" and (kind is None or m["approval"]["kind"] == kind):
            return m["approval"]


def exec_bg(world, *args):
    return subprocess.Popen([CORRAL, "exec"] + list(args), env=world.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def pending():
    return json.loads(w.corral("approvals", "--json").stdout)


# A request straight on the session channel (fd 3), as code in the sandbox
# can send it: its reply states, one per line.
RAW_ASK = r'''
import array, json, socket, sys
chan = socket.socket(fileno=3)
req = json.loads(sys.argv[1])
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
chan.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), 0, 1, 2]))])
b.close()
a.settimeout(60)
while True:
    m = a.recv(65536)
    if not m:
        break
    r = json.loads(m)
    print("state:", r["state"], r.get("message", ""), r.get("status", ""), flush=True)
    if r["state"] not in ("pending", "running"):
        break
'''


def raw_ask_script():
    path = os.path.join(w.ws, "raw_ask.py")
    with open(path, "w") as f:
        f.write(RAW_ASK)
    return path


# ---- item 1: paths from the sandbox are resolved on the server -------------------------

def test_symlink_write_root_repointed_after_session_approval(t):
    out = os.path.join(w.ws, "out")
    os.makedirs(out, exist_ok=True)
    script = raw_ask_script()
    raw = json.dumps({"verb": "escalate", "cwd": w.ws, "argv": ["touch", out + "/pwned"], "write": [out]})
    # One session: "for this session" answers belong to it.  Approved
    # once for the session while out is a directory, then out is made a
    # symlink to outside and the identical request comes again.
    p = exec_bg(w, "-C", w.ws, "--yield", "30000", "--", "sh", "-c",
                "corral escalate -w {o} -- true; echo first=$?; rm -r {o}; ln -s {x} {o}; "
                "python3 {s} '{r}'; corral escalate -w {o} -- touch {o}/pwned; echo second=$?"
                .format(o=out, x=outside, s=script, r=raw))
    a = next_approval("escalate")
    t.eq(a["permissions"]["write"], [out], "the dialog shows the resolved write root")
    w.corral("approve", "--session", str(a["id"]))
    text, _ = p.communicate(timeout=TIMEOUT)
    t.ok("first=0" in text and "second=126" in text, "re-pointed to outside, the identical request is refused",
         text)
    t.ok("state: failed" in text and "symlink" in text and "writable root" in text,
         "saying a symlink inside the workspace was refused, also when sent raw on the channel", text)
    t.ok(not os.path.exists(os.path.join(outside, "pwned")), "and nothing was written outside")
    t.eq(pending(), [], "nobody was asked about it")
    os.unlink(out)


def test_write_root_swapped_while_asked(t):
    out = os.path.join(w.ws, "swapped")
    os.makedirs(out, exist_ok=True)
    p = exec_bg(w, "-C", w.ws, "--yield", "30000", "--", "sh", "-c",
                "corral escalate -w {o} -- touch {o}/pwned; echo status=$?".format(o=out))
    a = next_approval("escalate", p)
    # While a human reads the dialog, the directory becomes a symlink (as
    # code in the sandbox could make it: it is in the workspace).
    os.rmdir(out)
    os.symlink(outside, out)
    w.corral("approve", str(a["id"]))
    text, _ = p.communicate(timeout=TIMEOUT)
    t.ok("status=126" in text and "changed since it was asked" in text,
         "approved after a swap, it does not run, and says why", text)
    t.ok(not os.path.exists(os.path.join(outside, "pwned")), "nothing was written where the symlink points")
    os.unlink(out)


def make_repo():
    repo = tempfile.mkdtemp(prefix="corral-repo-", dir="/var/tmp")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "config", "user.email", "t@example.com"], check=True)
    subprocess.run(["git", "-C", repo, "config", "user.name", "t"], check=True)
    with open(os.path.join(repo, "f"), "w") as f:
        f.write("x\n")
    return repo


def host_commit_runs_no_hook(repo, marker):
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True, capture_output=True)
    subprocess.run(["git", "-C", repo, "commit", "-qm", "c"], capture_output=True)
    return not os.path.exists(marker)


def test_build_link_to_git_hooks(t):
    repo = make_repo()
    marker = os.path.join(outside, "hook-ran")
    hook = "printf '#!/bin/sh\\ntouch %s\\n' > {d}/pre-commit; chmod +x {d}/pre-commit" % marker
    r = w.corral("exec", "-C", repo, "--", "sh", "-c",
                 "ln -s .git/hooks build; corral escalate -w %s/build -- sh -c \"%s\"; echo status=$?"
                 % (repo, hook.format(d=repo + "/build")))
    t.ok("status=126" in r.stdout and "symlink" in r.stdout, "build -> .git/hooks is refused as a write root",
         r.stdout)
    t.eq(pending(), [], "without asking anyone")
    # Named directly, .git/hooks stays read-only even when approved.
    p = exec_bg(w, "-C", repo, "--yield", "30000", "--", "sh", "-c",
                "corral escalate -w %s/.git/hooks -- sh -c \"%s\"; echo status=$?"
                % (repo, hook.format(d=repo + "/.git/hooks")))
    a = next_approval("escalate", p)
    if a:
        t.ok("touches .git" in a["risks"], "the dialog flags a write root in .git", a["risks"])
        w.corral("approve", str(a["id"]))
    out, _ = p.communicate(timeout=TIMEOUT)
    t.ok(not os.path.exists(os.path.join(repo, ".git", "hooks", "pre-commit")),
         "approved, the extra write root still does not open git's hooks", out)
    t.ok(host_commit_runs_no_hook(repo, marker), "the host's own git commit runs no planted hook")
    shutil.rmtree(repo, ignore_errors=True)


def test_claimed_cwd_never_becomes_the_workspace(t):
    script = raw_ask_script()
    inner = os.path.join(w.ws, "inner")
    os.makedirs(inner, exist_ok=True)
    req = {"verb": "escalate", "cwd": outside, "argv": ["touch", os.path.join(outside, "claimed")],
           "write": [inner]}
    p = exec_bg(w, "-C", w.ws, "--yield", "30000", "--", "python3", script, json.dumps(req))
    a = next_approval("escalate")
    t.eq((a["cwd"], a["workspace"]), (outside, os.path.realpath(w.ws)),
         "the dialog shows the claimed cwd as resolved, and the session's workspace")
    w.corral("approve", str(a["id"]))
    out, _ = p.communicate(timeout=TIMEOUT)
    t.ok(not os.path.exists(os.path.join(outside, "claimed")),
         "approved for a wider sandbox, the claimed cwd did not become writable", out)


# ---- item 5: one filter for every rule derived from a request ----------------------------

def test_always_from_hook_check_skips_no_filter(t):
    script = raw_ask_script()
    req = {"verb": "check", "cwd": w.ws, "shell": "bash", "line": "python3"}
    p = exec_bg(w, "-C", w.ws, "--approval-policy", "unless-trusted", "--yield", "30000", "--", "python3", script,
                json.dumps(req))
    w.corral("approve", str(next_approval("exec", p)["id"]))  # unless-trusted asks about the script itself
    a = next_approval("command", p)
    t.ok("prefix_rule" not in a and "would allow any program" in a.get("prefix_rule_refused", ""),
         "a typed python3 offers no 'always' rule, and says why", a)
    r = w.corral("approve", "--persist", str(a["id"]))
    t.ok(r.returncode != 0 and "cannot be offered" in r.stderr, "approve --persist is refused", r.stderr)
    rules = os.path.join(w.config, "corral", "rules", "default.rules")
    t.ok(not os.path.exists(rules) or "python3" not in open(rules).read(), "no python3 rule was saved")
    w.corral("deny", str(a["id"]))
    p.communicate(timeout=TIMEOUT)
    p = exec_bg(w, "-C", w.ws, "--sandbox-permissions", "require_escalated", "--", "python3", "-c", "print(1)")
    a = next_approval("exec")
    t.ok(a["argv"][0] == "python3", "python3 -c asking to leave the sandbox still asks")
    w.corral("deny", str(a["id"]))
    p.communicate(timeout=TIMEOUT)


# ---- items 6 and 7: escalations keep deny entries, and run when they do ------------------

def test_escalate_keeps_session_deny_entries(t):
    secret = os.path.join(w.ws, "secret")
    os.makedirs(secret, exist_ok=True)
    with open(os.path.join(secret, "key"), "w") as f:
        f.write("TOPSECRET-6\n")
    p = exec_bg(w, "-C", w.ws, "--deny", secret, "--yield", "30000", "--", "sh", "-c",
                "corral escalate -- sh -c 'echo ran-outside; cat %s/key'; echo status=$?" % secret)
    a = next_approval("escalate", p)
    t.ok(a and a["permissions"].get("keeps_sandbox"), "the dialog says deny entries keep a sandbox", a)
    if a:
        w.corral("approve", str(a["id"]))
    out, _ = p.communicate(timeout=TIMEOUT)
    t.ok("ran-outside" in out, "approved, the escalation runs", out)
    t.ok("TOPSECRET-6" not in out, "and the session's own --deny entry still hides the secret", out)


def test_escalation_keeping_sandbox_runs_on_debian(t):
    cw = World(config="[sandbox]\n\tdeny = ~/.corral-test-nothing-here\n")
    cw.start_server()
    cm = cw.connect("monitor")
    cm.call({"cmd": "subscribe"})
    try:
        target = os.path.join(outside, "kept")
        p = exec_bg(cw, "-C", cw.ws, "--yield", "30000", "--", "sh", "-c",
                    "corral escalate -- touch %s; echo status=$?" % target)
        a = next_approval("escalate", p, cm)
        if a:
            cw.corral("approve", str(a["id"]))
        out, _ = p.communicate(timeout=TIMEOUT)
        t.ok("status=0" in out and os.path.exists(target),
             "an approved escalation that keeps the sandbox (deny entries configured) runs", out)
    finally:
        cm.close()
        cw.cleanup()


# ---- item 9: the workspace is never $HOME (or above it) unless asked ----------------------

def test_home_workspace_refused(t):
    home = os.path.realpath(os.path.expanduser("~"))
    r = w.corral("exec", "-C", home, "--", "touch", os.path.join(home, ".corral-test-bashrc"))
    t.ok(r.returncode != 0 and "--allow-home-workspace" in r.stderr and home in r.stderr,
         "an exec with the home directory as its workspace is refused, naming it and the way out", r.stderr)
    t.ok(not os.path.exists(os.path.join(home, ".corral-test-bashrc")), "and nothing ran")
    r = w.corral("exec", "-C", "/", "--", "true")
    t.ok(r.returncode != 0 and "--allow-home-workspace" in r.stderr, "so is /", r.stderr)
    r = w.corral("new", "-C", home, "--", "true")
    t.ok(r.returncode != 0 and "--allow-home-workspace" in r.stderr, "and a new session there", r.stderr)
    r = w.corral("exec", "-C", home, "--allow-home-workspace", "--", "true")
    t.ok("exited with code 0" in r.stdout, "--allow-home-workspace says the user wants it", r.stdout + r.stderr)
    r = w.corral("exec", "-C", home, "--profile", "read-only", "--", "true")
    t.ok("exited with code 0" in r.stdout, "a read-only sandbox there is fine", r.stdout + r.stderr)


# ---- item 11: a zero-length message does not close the channel ----------------------------

EMPTY_THEN_ASK = r'''
import array, json, socket
chan = socket.socket(fileno=3)
chan.send(b"")
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
req = {"verb": "escalate", "cwd": "/", "argv": ["true"]}
chan.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), 0, 1, 2]))])
b.close()
a.settimeout(20)
print("reply:", a.recv(65536).decode())
'''


def test_zero_length_message_keeps_channel(t):
    script = os.path.join(w.ws, "empty.py")
    with open(script, "w") as f:
        f.write(EMPTY_THEN_ASK)
    p = exec_bg(w, "-C", w.ws, "--yield", "30000", "--", "python3", script)
    a = next_approval("escalate")
    w.corral("deny", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok('"pending"' in out, "after an empty message the channel still takes requests", out + err)


def test_as_an_unprivileged_user(t):
    """The same attacks from an ordinary user's sandbox (root in a user
    namespace is still uid 0 for permission checks; an ordinary user takes
    other paths through the kernel): run as root, this file runs itself
    again as a temporary user."""
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, helpers=[os.path.join(here, "harness.py")])


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_symlink_write_root_repointed_after_session_approval,
                          test_write_root_swapped_while_asked, test_build_link_to_git_hooks,
                          test_claimed_cwd_never_becomes_the_workspace, test_always_from_hook_check_skips_no_filter,
                          test_escalate_keeps_session_deny_entries, test_escalation_keeping_sandbox_runs_on_debian,
                          test_home_workspace_refused,
                          test_zero_length_message_keeps_channel, test_as_an_unprivileged_user])
    finally:
        shutil.rmtree(outside, ignore_errors=True)
        mon.close()
        w.cleanup()
