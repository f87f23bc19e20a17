#!/usr/bin/env python3
"""corral log over a large session: a generated events.jsonl of 100k
events as the server writes them (commands with their start, end and diff
record, connections, approvals asked and answered, escalations, resizes),
read by `corral log --json SESSION` beside `jq -c . events.jsonl` in the
same run (jq parses and prints every line once; corral log also joins a
command's three events and an approval's two into one entry each), then
the table and a --grep.  Target: corral log --json no slower than jq.
Prints figures; asserts no times."""
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

from benchlib import CORRAL, arg, median, now, sized

EVENTS = arg(1, 100000, 1000)
RUNS = sized(5, 1)
SID = 4242


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


def line(t, event, **fields):
    return json.dumps(dict(time=iso(t), event=event, **fields), separators=(",", ":")) + "\n"


def generate(path, n):
    """n events of a long agent session; deterministic."""
    rnd = random.Random(14)
    t = 1795938085.0
    ws = "/home/dev/src/project"
    out = [line(t, "created", session=SID, name="codex", command=["bash"], cwd=ws, client="codex",
                profile="workspace-write", kind="user", tty=True, cols=120, rows=40, pid=4321, workspace=ws)]
    cmd = approval = 0
    while len(out) < n:
        t += rnd.random() * 2
        r = rnd.random()
        if r < 0.55:
            cmd += 1
            cmdline = "cargo test -p crate%d -- --nocapture 'name with spaces' # %s" % (cmd, "x" * (cmd % 40))
            d = rnd.random() * 5
            out.append(line(t, "command_started", command=cmd, line=cmdline, cwd=ws))
            out.append(line(t + d, "command_ended", command=cmd, exit_code=cmd % 3, duration_seconds=round(d, 3)))
            out.append(line(t + d + 0.01, "changes", command=cmd, line=cmdline, started=iso(t), workspace=ws,
                            ended=iso(t + d), exit_code=cmd % 3, before="%040x" % cmd, after="%040x" % (cmd + 1),
                            attribution="exclusive", shared_with=[],
                            counts=dict(added=cmd % 4, modified=cmd % 7, deleted=cmd % 2, renamed=0, typechanged=0),
                            lines=dict(added=cmd % 90, removed=cmd % 30),
                            risk=[dict(path=".envrc", marks=["envrc"], detail="new")] if cmd % 50 == 0 else [],
                            not_captured=[]))
        elif r < 0.85:
            host = "registry%d.example.com" % rnd.randrange(20)
            out.append(line(t, "network", session=SID, listener="http", host=host, port=443, protocol="https",
                            decision="allow", reason="approved for the session", address="203.0.113.%d:443" % (
                                rnd.randrange(250)), bytes_to_server=rnd.randrange(1 << 16),
                            bytes_to_client=rnd.randrange(1 << 22), duration_ms=rnd.randrange(5000), close="done"))
        elif r < 0.95:
            approval += 1
            argv = ["bash", "-c", "rm -rf build/%d" % approval]
            out.append(line(t, "approval_requested", kind="command", client="codex", argv=argv, cwd=ws,
                            workspace=ws, tty=True, command="bash -c 'rm -rf build/%d'" % approval, session=SID,
                            line="rm -rf build/%d" % approval, reason="asks", risks=[], id=approval, created=t,
                            age_seconds=0.0, approval=approval))
            out.append(line(t + 1.5, "approval_decided", answer=rnd.choice(["once", "session", "deny"]), by="tui",
                            key="y", approval=approval))
        elif r < 0.97:
            approval += 1
            out.append(line(t, "escalated", argv=["apt-get", "install", "-y", "jq"], cwd=ws, workspace=ws,
                            profile="full", approval=approval, pid=5000 + approval))
            out.append(line(t + 3, "escalation_ended", approval=approval, status=0))
        else:
            out.append(line(t, "resized", cols=rnd.randrange(80, 200), rows=rnd.randrange(24, 60)))
    with open(path, "w") as f:
        f.writelines(out[:n])


def timed(argv, env):
    t0 = now()
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ms = (now() - t0) * 1000
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (argv[0], r.stderr.decode(errors="replace")[-500:]))
    return ms, r.stdout


def main():
    base = tempfile.mkdtemp(prefix="crlbench")
    try:
        state = os.path.join(base, "state")
        d = os.path.join(state, "corral", "sessions", str(SID))
        os.makedirs(d)
        events = os.path.join(d, "events.jsonl")
        generate(events, EVENTS)
        size = os.path.getsize(events)
        env = dict(os.environ, XDG_STATE_HOME=state, XDG_RUNTIME_DIR=os.path.join(base, "run"),
                   XDG_CONFIG_HOME=os.path.join(base, "config"))
        jq = shutil.which("jq")
        ours, theirs = [], []
        entries = 0
        # Alternating runs, so that both see the same machine.
        for _ in range(RUNS):
            ms, out = timed([CORRAL, "log", "--json", str(SID)], env)
            ours.append(ms)
            entries = out.count(b"\n")
            if jq:
                ms, _ = timed([jq, "-c", ".", events], env)
                theirs.append(ms)
        print("%d events (%.1f MB) read into %d timeline entries" % (EVENTS, size / 1e6, entries))
        print("corral log --json over %d events: median %.0f ms (%d runs)" % (EVENTS, median(ours), RUNS))
        if jq:
            print("jq -c . events.jsonl:                median %.0f ms (%d runs)" % (median(theirs), RUNS))
            print("corral log --json / jq: %.2f" % (median(ours) / median(theirs)))
        else:
            print("jq -c . events.jsonl: jq is not installed (bootstrap installs it)")
        ms, _ = timed([CORRAL, "log", str(SID)], env)
        print("corral log (the table):               %.0f ms" % ms)
        ms, out = timed([CORRAL, "log", "--json", "--grep", "crate77", str(SID)], env)
        print("corral log --json --grep crate77:     %.0f ms (%d entries)" % (ms, out.count(b"\n")))
        ms, _ = timed([CORRAL, "log", "--json"], env)
        print("corral log --json (the session list): %.0f ms" % ms)
        print("target: corral log --json no slower than jq -c .")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
