#!/usr/bin/env python3
"""Nobody is left guessing: a command that waits for a human says which
request and how to answer it (also `corral send` of a line the shell hook
asks about), a command the sandbox stopped is told what was refused and how
to ask for it, and a declined retry carries the user's answer and note to
the agent.  Real server, real sandboxes, answered with the CLI."""
import json
import os
import shutil
import subprocess
import tempfile

from harness import CORRAL, TIMEOUT, Tap, World, read_jsonl, run_tests

RULES = '''prefix_rule(pattern=["touch", "deployed"], decision="prompt", justification="deploys")
'''

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server()
mon = w.connect("monitor")
mon.call({"cmd": "subscribe"})
outside = tempfile.mkdtemp(prefix="corral-wait-", dir="/var/tmp")


def next_approval(kind=None):
    while True:
        m = mon.events.pop(0) if mon.events else mon.read_msg()
        if m.get("event") == "approval" and (kind is None or m["approval"]["kind"] == kind):
            return m["approval"]


def bg(*args):
    return subprocess.Popen([CORRAL] + list(args), env=w.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_send_says_what_it_waits_for(t):
    r = w.corral("new", "-n", "hooked", "-C", w.ws, "--", "bash")
    sid = int(r.stdout.split()[0])
    # The shell first reads its startup files (slow ones too), then the line.
    mon.call({"cmd": "watch", "session": sid})
    mon.type_line(sid, "echo ready-$((40+2))")
    mon.screen_until(sid, "ready-42")
    p = bg("send", "--enter", "--yield", "3000", str(sid), "touch deployed; echo sent-ran")
    a = next_approval("command")
    w.corral("approve", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("waiting for a human to approve request %d" % a["id"] in err and "corral approve %d" % a["id"] in err,
         "corral send of a line the hook asks about says which request it waits for and how to answer", err)
    t.ok("sent-ran" in out, "answered, the line runs and send shows it", out)
    w.corral("kill", str(sid))


def test_keys_typed_at_the_dialog_stay_out_of_the_shell(t):
    """A key that reaches the session as its typed line comes to wait for a
    person (typed the moment the dialog opened, before it took the keys) is
    not left in the shell's input line once the line is answered; what is
    typed while the person decides (an agent's next line) is kept."""
    r = w.corral("new", "-n", "typist", "-C", w.ws, "--", "bash")
    sid = int(r.stdout.split()[0])
    mon.call({"cmd": "watch", "session": sid})
    mon.type_line(sid, "echo ready-$((40+2))")
    mon.screen_until(sid, "ready-42")
    # The "y" comes right behind the line, before anyone could see a dialog.
    mon.call({"cmd": "input", "session": sid, "data": "touch deployed; echo line-$((6*7))\ry"})
    a = next_approval("command")
    # Once the question is out, what is typed is kept.
    mon.call({"cmd": "input", "session": sid, "data": "echo kept-$((2+3))\r"})
    w.corral("approve", str(a["id"]))
    mon.screen_until(sid, "line-42")
    seen = mon.screen_until(sid, "kept-5")
    t.ok("yecho" not in seen and "command not found" not in seen,
         "the key typed as the dialog opened is dropped, and the line typed while the person decided runs as "
         "typed", seen)
    os.unlink(os.path.join(w.ws, "deployed"))
    w.corral("kill", str(sid))


def test_refusal_is_explained(t):
    target = os.path.join(outside, "sub", "file")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # No screen in this world's second server: no retry, the advice comes at once.
    lone = World()
    lone.start_server()
    try:
        r = lone.corral("exec", "-C", lone.ws, "--", "touch", target)
        t.ok("exited with code 1" in r.stdout, "a write outside the workspace fails in the sandbox", r.stdout)
        t.ok("corral: the sandbox refused to write %s" % target in r.stdout and
             "--add-write %s" % os.path.dirname(target) in r.stdout and "corral escalate -w" in r.stdout,
             "and one line says what was refused and how to ask for it", r.stdout)
        sid = json.loads(lone.corral("ls", "--json").stdout)["sessions"][0]["id"]
        events = read_jsonl(os.path.join(lone.session_dir(sid), "events.jsonl"))
        denied = [e for e in events if e["event"] == "sandbox_denied"]
        t.ok(denied and denied[0].get("path") == target and "--add-write" in denied[0].get("advice", ""),
             "the same line goes to the session's events", events)
        r = lone.corral("exec", "-C", lone.ws, "--", "unshare", "-U", "true")
        t.ok("refused a system call" in r.stdout, "a call the filter refused is explained too", r.stdout)
        repo = os.path.join(lone.ws, "repo")
        subprocess.run(["git", "init", "-q", repo], check=True)
        r = lone.corral("exec", "-C", repo, "--", "touch", ".git/hooks/pre-push")
        t.ok("keeps %s/.git/hooks/pre-push read-only" % os.path.realpath(repo) in r.stdout and
             "no extra write root opens it" in r.stdout, "a protected path says no write root opens it", r.stdout)
        r = lone.corral("exec", "-C", lone.ws, "--", "sh", "-c", "echo 'Permission denied (publickey).' >&2; exit 1")
        t.ok("corral:" not in r.stdout, "a failure that is not the sandbox's gets no advice", r.stdout)
    finally:
        lone.cleanup()


def test_declined_retry_carries_the_note(t):
    target = os.path.join(outside, "retried")
    p = bg("exec", "-C", w.ws, "--", "touch", target)
    a = next_approval("retry")
    w.corral("deny", "--note", "write it in the workspace instead", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("Read-only file system" in out, "the first run's reply stands", out)
    t.ok("the retry without the sandbox was not run: the user denied it. Note from the user: write it in the "
         "workspace instead" in out, "with the answer and the user's note, where the agent reads it", out)
    t.ok("--add-write %s" % outside in out, "and how to ask for the write instead", out)
    p = bg("exec", "-C", w.ws, "--", "touch", target)
    a = next_approval("retry")
    w.corral("deny", "--stop", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("asks you to stop and wait" in out, "n (stop) says so, unlike d", out)


def test_pending_exec_names_itself(t):
    p = bg("exec", "-C", w.ws, "--", "touch", "deployed")
    a = next_approval("exec")
    w.corral("deny", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("waiting for a human to approve request %d" % a["id"] in err, "an exec waiting for a human says so", err)


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_send_says_what_it_waits_for, test_keys_typed_at_the_dialog_stay_out_of_the_shell,
                          test_refusal_is_explained,
                          test_declined_retry_carries_the_note, test_pending_exec_names_itself])
    finally:
        shutil.rmtree(outside, ignore_errors=True)
        mon.close()
        w.cleanup()
