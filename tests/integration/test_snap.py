#!/usr/bin/env python3
"""Workspace snapshots through real sessions (docs/snapshots.md): every kind
of change a command makes shows in its diff; interactive bash and zsh lines
get their own; the snapshot before a command is taken before it starts;
commands running at the same time in one workspace are marked shared with
each other; revert restores byte for byte and refuses on conflict; the
patch undoes the change with git apply -R; a new git hook is risk-marked;
snapshotting writes nothing into the workspace or its .git and runs none
of its git filters or fsmonitor; and the protocol refuses what it should."""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time

from harness import (CORRAL, TIMEOUT, Tap, World, parent_of, placeholders_held, read_jsonl, reader_pids, run_tests,
                     store_pids, wait_until)

w = World(config="[snapshots]\nmax-file-size = 1M\nmax-new-files = 1000\nkeep-open = 3s\n[sandbox]\nkeep-warm = 1s\n")
w.start_server()
mon = w.connect("monitor")
mon.call({"cmd": "subscribe"})


def git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT)


def fresh_ws(name):
    d = os.path.join(w.base, name)
    os.makedirs(d)
    return d


def run(ws, script, profile=None):
    """An exec of sh -c script in ws; returns its session id."""
    req = {"cmd": "exec", "argv": ["sh", "-c", script], "workdir": ws, "yield_time_ms": 30000}
    if profile:
        req["profile"] = profile
    r = mon.call(req)
    if "error" in r or r.get("exit_code") is None:
        raise RuntimeError("exec failed: %r" % r)
    return r["session_id"] if "session_id" in r else session_of(r)


def session_of(reply):
    # The reply of a finished exec does not carry the id: the newest session.
    ls = mon.call({"cmd": "ls"})["sessions"]
    return max(ls, key=lambda s: s["use"])["id"]


def diff(sid, cmd=None, fmt="files", **more):
    req = {"cmd": "diff", "session": sid, "format": fmt}
    if cmd is not None:
        req["command"] = cmd
    req.update(more)
    return mon.call(req)


def files_of(r):
    return {f["path"]: f for f in r.get("files", [])}


def record(sid, n):
    """The command's record in the session's events.jsonl."""
    for ev in read_jsonl(os.path.join(w.session_dir(sid), "events.jsonl")):
        if ev["event"] == "changes" and ev["command"] == n:
            return ev
    return None


def cooled():
    """Wait until no sandbox holds a placeholder: an agent's commands start
    from a pre-built sandbox, which keeps the empty directories and files
    it protects missing names with (.codex, .git/commondir ...) in the
    workspace until keep-warm (1 s here) has passed after the last command
    (docs/sandbox.md, "Pre-built sandboxes").  What is compared after it is
    the workspace as the user finds it then."""
    return wait_until(lambda: not placeholders_held(w.base), timeout=TIMEOUT)


def digest(root):
    """Names, kinds, modes, sizes, contents, link targets and file times
    under root (directory times aside: a sandbox's mount points come and
    go in the workspace while it runs)."""
    h = hashlib.sha256()
    for d, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for n in sorted(names + dirs):
            p = os.path.join(d, n)
            st = os.lstat(p)
            h.update(("%s %o %d\n" % (os.path.relpath(p, root), st.st_mode, 0 if os.path.isdir(p) else st.st_size)).encode())
            if os.path.islink(p):
                h.update(os.readlink(p).encode())
            elif os.path.isfile(p):
                h.update(str(st.st_mtime_ns).encode())
                with open(p, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def test_every_change_kind(t):
    ws = fresh_ws("kinds")
    with open(os.path.join(ws, ".gitignore"), "w") as f:
        f.write("*.log\n")
    for name, text in [("mod.txt", "one\ntwo\n"), ("gone.txt", "bye\n"), ("run.sh", "echo\n"), ("fd", "file\n"),
                       ("long.txt", "".join("line %d\n" % i for i in range(100))), ("keep.log", "x\n")]:
        with open(os.path.join(ws, name), "w") as f:
            f.write(text)
    os.makedirs(os.path.join(ws, "dirfile"))
    with open(os.path.join(ws, "dirfile", "in"), "w") as f:
        f.write("in\n")
    os.symlink("mod.txt", os.path.join(ws, "link"))
    os.makedirs(os.path.join(ws, "lib"))
    git("init", "-q", cwd=os.path.join(ws, "lib"))
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=os.path.join(ws, "lib"))
    script = ("printf 'one\\nTWO\\nthree\\n' > mod.txt && rm gone.txt && chmod +x run.sh && echo new > new.txt && "
              "ln -s new.txt link2 && ln -sfn long.txt link && rm fd && mkdir fd && echo y > fd/y && "
              "rm -r dirfile && echo f > dirfile && mv long.txt moved.txt && printf 'a\\0b' > blob.bin && "
              "head -c 2000000 /dev/zero > big.dat && echo more >> keep.log && "
              "mkdir -p node_modules/pkg && i=0; while [ $i -lt 3000 ]; do echo $i > node_modules/pkg/f$i.js; "
              "i=$((i+1)); done && cd lib && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two")
    sid = run(ws, script)
    r = diff(sid)
    f = files_of(r)
    t.ok("error" not in r, "the command's diff is there", r)
    t.eq(f.get("mod.txt", {}).get("status"), "M", "modified: M")
    t.eq((f.get("mod.txt", {}).get("added"), f.get("mod.txt", {}).get("removed")), (2, 1), "with its lines +2 -1")
    t.eq(f.get("gone.txt", {}).get("status"), "D", "deleted: D")
    t.eq(f.get("new.txt", {}).get("status"), "A", "created: A")
    t.ok(f.get("run.sh", {}).get("new_mode") == 0o100755 and "exec-bit" in f.get("run.sh", {}).get("risk", []),
         "chmod +x: the mode, marked exec-bit", f.get("run.sh"))
    t.eq(f.get("link2", {}).get("new_mode"), 0o120000, "a symlink created: mode 120000")
    t.eq((f.get("link", {}).get("old_target"), f.get("link", {}).get("new_target")), ("mod.txt", "long.txt"),
         "a symlink retargeted: both targets")
    t.ok(f.get("fd", {}).get("status") == "D" and f.get("fd/y", {}).get("status") == "A", "file to directory")
    t.ok(f.get("dirfile/in", {}).get("status") == "D" and f.get("dirfile", {}).get("status") == "A",
         "directory to file")
    t.ok(f.get("moved.txt", {}).get("status", "").startswith("R") and f["moved.txt"].get("old_path") == "long.txt",
         "a rename: R with the old path", f.get("moved.txt"))
    t.ok(f.get("blob.bin", {}).get("binary"), "a binary file is marked binary", f.get("blob.bin"))
    t.ok(f.get("big.dat", {}).get("large") and f["big.dat"].get("new_size") == 2000000,
         "a file above the size cap: recorded by size, not captured", f.get("big.dat"))
    t.ok(f.get("lib", {}).get("new_mode") == 0o160000 and "gitlink" in f.get("lib", {}).get("risk", []),
         "a nested repository's HEAD moving: the gitlink changes", f.get("lib"))
    t.ok("keep.log" not in f, "an ignored file is not in the diff")
    t.ok(not any(p.startswith("node_modules/") for p in f), "node_modules is not captured")
    missed = {m["path"]: m["reason"] for m in r["changes"]["not_captured"]}
    t.ok(missed.get("node_modules/") == "excluded" and missed.get("big.dat") == "too large",
         "the record names what was not captured and why", missed)
    rec = record(sid, 1)
    t.ok(rec and rec["counts"]["added"] >= 5 and rec["counts"]["renamed"] == 1 and rec["attribution"] == "exclusive"
         and rec["before"] and rec["after"] and rec["before"] != rec["after"],
         "events.jsonl has the command's record: ids, counts, attribution", rec)


def test_the_before_precedes_the_command(t):
    ws = fresh_ws("early")
    for i in range(3000):
        with open(os.path.join(ws, "f%04d.txt" % i), "w") as f:
            f.write("file %d\n" % i)
    sid = run(ws, "echo early > early.txt")
    f = files_of(diff(sid))
    t.eq(f.get("early.txt", {}).get("status"), "A",
         "a command that writes at once: the write is in its diff (the first snapshot was taken before it ran)")
    rec = record(sid, 1)
    t.ok(rec and not rec.get("late"), "and it did not start before its snapshot", rec)


def test_the_new_file_cap_is_for_what_a_command_makes(t):
    """More files under one directory than [snapshots] max-new-files (1000
    here) that were there before the session are snapshotted all the same:
    the cap is for what a command makes (a dependency install), never for
    what existed."""
    ws = fresh_ws("bigdirs")
    os.makedirs(os.path.join(ws, "vendor"))
    for i in range(1500):
        with open(os.path.join(ws, "vendor", "f%04d.h" % i), "w") as f:
            f.write("header %d\n" % i)
    sid = run(ws, "echo changed >> vendor/f0007.h; mkdir gen; i=0; while [ $i -lt 1500 ]; do echo $i > gen/g$i; "
              "i=$((i+1)); done")
    r = diff(sid)
    f = files_of(r)
    missed = {m["path"]: m for m in r.get("changes", {}).get("not_captured", [])}
    t.eq(f.get("vendor/f0007.h", {}).get("status"), "M",
         "a file of a big directory that was there before the session: its change is in the diff", r)
    t.ok("vendor/" not in missed and "vendor" not in missed, "and the directory is not reported as not captured",
         missed)
    t.ok(missed.get("gen", missed.get("gen/", {})).get("reason") == "new-file cap" and
         not any(p.startswith("gen/") for p in f),
         "1500 files the command made in one directory: left out, and the record says why", missed)
    # What was left out is marked wherever the counts are shown.
    r = w.corral("diff", str(sid), "--list")
    t.ok(r.returncode == 0 and "(1 not captured)" in r.stdout, "corral diff --list marks the command's counts with "
         "what its snapshots left out", r.stdout + r.stderr)
    r = w.corral("log")
    row = [l for l in r.stdout.splitlines() if l.lstrip().startswith(str(sid) + " ")]
    t.ok(len(row) == 1 and "(1 not captured)" in row[0], "so does corral log's list of sessions", r.stdout)
    r = w.corral("log", "--json")
    mine = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{") and json.loads(l).get("id") == sid]
    t.ok(mine and mine[0]["changes"].get("not_captured") == 1, "and its JSON", mine)
    r = w.corral("log", str(sid))
    t.ok("(1 not captured)" in r.stdout, "and the session's own log, on the command's line", r.stdout)
    ls = {x["id"]: x for x in mon.call({"cmd": "ls"})["sessions"]}
    t.eq(ls.get(sid, {}).get("changes", {}).get("not_captured"), 1,
         "the session's summary (the screen's sidebar) carries the count", ls.get(sid))
    sid = run(ws, "echo again >> vendor/f1234.h")
    t.eq({p: x["status"] for p, x in files_of(diff(sid)).items()}, {"vendor/f1234.h": "M"},
         "the next command's change in the big directory is in its diff, nothing else")


def digest_content(root):
    """Contents and modes only (git apply and revert rewrite files: their
    times change)."""
    out = []
    for d, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            st = os.lstat(p)
            if os.path.islink(p):
                out.append((os.path.relpath(p, root), st.st_mode, "-> " + os.readlink(p)))
            else:
                with open(p, "rb") as f:
                    out.append((os.path.relpath(p, root), st.st_mode, hashlib.sha256(f.read()).hexdigest()))
        out.extend((os.path.relpath(os.path.join(d, n), root), "dir") for n in dirs)
    return sorted(out, key=str)


def test_revert(t):
    ws = fresh_ws("revert")
    with open(os.path.join(ws, "keep.txt"), "w") as f:
        f.write("keep\n")
    with open(os.path.join(ws, "mod.txt"), "wb") as f:
        f.write(b"exact\r\nbytes\x00\xff\n")
    with open(os.path.join(ws, "del.txt"), "w") as f:
        f.write("deleted\n")
    os.chmod(os.path.join(ws, "mod.txt"), 0o640)
    os.symlink("keep.txt", os.path.join(ws, "ln"))
    original = digest_content(ws)
    sid = run(ws, "echo changed > mod.txt && rm del.txt && echo created > new.txt && mkdir -p sub/deep && "
                  "echo x > sub/deep/x && ln -sfn mod.txt ln && chmod +x keep.txt")
    r = w.corral("revert", "--dry-run", str(sid), "1")
    t.ok(r.returncode == 0 and "would remove new.txt" in r.stdout and "would recreate del.txt" in r.stdout,
         "revert --dry-run lists what it would do", r.stdout + r.stderr)
    t.ok(os.path.exists(os.path.join(ws, "new.txt")), "and does nothing")
    r = w.corral("revert", str(sid), "1")
    t.ok(r.returncode == 0 and "reverted command 1" in r.stdout, "revert undoes the command", r.stdout + r.stderr)
    cooled()
    now = digest_content(ws)
    t.eq(now, original, "byte for byte: contents, modes, symlink target; created files and directories gone",
         "\n".join(sorted(os.listdir(ws))))
    lst = w.corral("diff", str(sid), "--list").stdout
    t.ok("by user: corral revert %d 1" % sid in lst, "the revert is listed with its diff, as an action and by whom",
         lst)
    log = w.corral("log", str(sid), "--color", "never").stdout
    t.ok(re.search(r"#2 +action .*by user: corral revert %d 1" % sid, log), "corral log shows it as an action by "
         "the client that did it, not as a command the session ran", log)
    rows = [json.loads(l) for l in w.corral("log", "--json", "--all").stdout.splitlines() if l.strip()]
    mine = [r for r in rows if r.get("id") == sid]
    t.ok(mine and mine[0].get("commands") == 1, "and the session's command count leaves the action out", mine)
    f = files_of(diff(sid, 2))
    t.ok(f.get("new.txt", {}).get("status") == "D" and f.get("del.txt", {}).get("status") == "A",
         "its diff is the command's, reversed", f)
    # A file changed again after the command: nothing is done.
    sid2 = run(ws, "echo first > conflict.txt && echo one > other.txt")
    run(ws, "echo second > conflict.txt")
    r = w.corral("revert", str(sid2), "1")
    t.ok(r.returncode == 1 and "conflict: conflict.txt" in r.stderr and "nothing was reverted" in r.stderr,
         "a file changed again later: refused with the conflict list", r.stdout + r.stderr)
    t.ok(open(os.path.join(ws, "other.txt")).read() == "one\n" and
         open(os.path.join(ws, "conflict.txt")).read() == "second\n", "and no file was touched")


def test_revert_never_follows_a_planted_symlink(t):
    ws = fresh_ws("planted")
    outside = os.path.join(w.base, "outside")
    os.makedirs(outside)
    os.makedirs(os.path.join(ws, "d"))
    with open(os.path.join(ws, "d", "f"), "w") as f:
        f.write("inside\n")
    sid = run(ws, "rm d/f")
    # Later, something replaces d with a symlink out of the workspace.
    shutil.rmtree(os.path.join(ws, "d"))
    os.symlink(outside, os.path.join(ws, "d"))
    r = w.corral("revert", str(sid), "1")
    t.ok(not os.path.exists(os.path.join(outside, "f")), "revert wrote nothing through the symlink",
         r.stdout + r.stderr)


def ended(sid):
    """Session sid leaves the server's list (corral rm): what is left of it
    is its records on disk, as after a restart of the server."""
    r = mon.call({"cmd": "rm", "sessions": [sid]})
    if "error" in r:
        raise RuntimeError("rm failed: %r" % r)
    return str(sid)


def test_ended_sessions(t):
    """diff and revert read an ended session's records as corral log,
    corral export and the screen's review do."""
    ws = fresh_ws("ended")
    with open(os.path.join(ws, "mod.txt"), "wb") as f:
        f.write(b"exact\r\nbytes\x00\xff\n")
    with open(os.path.join(ws, "del.txt"), "w") as f:
        f.write("deleted\n")
    os.chmod(os.path.join(ws, "mod.txt"), 0o640)
    original = digest_content(ws)
    sid = ended(run(ws, "echo changed > mod.txt && rm del.txt && echo created > new.txt && mkdir -p sub && "
                        "echo x > sub/x"))
    t.ok("error" in mon.call({"cmd": "commands", "session": int(sid)}), "the server no longer has the session")
    r = w.corral("diff", sid, "1")
    t.ok(r.returncode == 0 and "diff --git a/mod.txt b/mod.txt" in r.stdout and "+created" in r.stdout,
         "corral diff shows a command of an ended session", r.stdout + r.stderr)
    r = w.corral("diff", "--name-status", sid)
    # (for a person, the tab shown as \t, as for a live session's)
    t.eq(sorted(r.stdout.split("\n")), sorted(["", "M\\tmod.txt", "D\\tdel.txt", "A\\tnew.txt", "A\\tsub/x"]),
         "its last command by default, in every format", r.stderr)
    r = w.corral("diff", sid, "--list")
    t.ok(r.returncode == 0 and "  1  +2 ~1 -1" in r.stdout and "echo changed" in r.stdout,
         "--list lists its commands from its records", r.stdout + r.stderr)
    r = w.corral("diff", "--stat", sid, "--since-start")
    t.ok(r.returncode == 0 and "4 files changed" in r.stdout, "--since-start", r.stdout + r.stderr)
    r = w.corral("diff", sid, "5")
    t.ok(r.returncode == 1 and "session %s has no command 5" % sid in r.stderr and "--list" in r.stderr,
         "a command it did not run is named, with where to look", r.stderr)
    r = w.corral("revert", "--dry-run", sid, "1")
    t.ok(r.returncode == 0 and "would remove new.txt" in r.stdout and "would recreate del.txt" in r.stdout,
         "corral revert --dry-run of an ended session's command", r.stdout + r.stderr)
    t.ok(os.path.exists(os.path.join(ws, "new.txt")), "and does nothing")
    r = w.corral("revert", sid, "1")
    t.ok(r.returncode == 0 and "reverted command 1 of session %s" % sid in r.stdout and "not recorded" in r.stdout,
         "corral revert undoes a command of an ended session", r.stdout + r.stderr)
    cooled()
    t.eq(digest_content(ws), original, "byte for byte, as for a live session's",
         "\n".join(sorted(os.listdir(ws))))
    # Its safety is the live revert's: a later change is a conflict ...
    sid2 = ended(run(ws, "echo first > conflict.txt && echo one > other.txt"))
    run(ws, "echo second > conflict.txt")
    r = w.corral("revert", sid2, "1")
    t.ok(r.returncode == 1 and "conflict: conflict.txt" in r.stderr and "nothing was reverted" in r.stderr,
         "a file changed again later: refused with the conflict list", r.stdout + r.stderr)
    t.ok(open(os.path.join(ws, "other.txt")).read() == "one\n" and
         open(os.path.join(ws, "conflict.txt")).read() == "second\n", "and no file was touched")
    # ... and nothing is written through a symlink planted since.
    outside = os.path.join(w.base, "outside-ended")
    os.makedirs(outside)
    os.makedirs(os.path.join(ws, "d"))
    with open(os.path.join(ws, "d", "f"), "w") as f:
        f.write("inside\n")
    sid3 = ended(run(ws, "rm d/f"))
    shutil.rmtree(os.path.join(ws, "d"))
    os.symlink(outside, os.path.join(ws, "d"))
    r = w.corral("revert", sid3, "1")
    t.ok(not os.path.exists(os.path.join(outside, "f")), "revert wrote nothing through the symlink",
         r.stdout + r.stderr)
    # Its snapshots removed from the store since: said, with what is left.
    sid4 = ended(run(ws, "echo gone > gone.txt"))
    events = os.path.join(w.session_dir(int(sid4)), "events.jsonl")
    with open(events) as f:
        lines = f.read().splitlines(True)
    with open(events, "w") as f:
        for line in lines:
            ev = json.loads(line)
            if ev["event"] == "changes":
                ev["before"] = "1" * 40
                line = json.dumps(ev) + "\n"
            f.write(line)
    for verb in (["diff"], ["revert"]):
        r = w.corral(*verb, sid4, "1")
        t.ok(r.returncode == 1 and "cannot be read" in r.stderr and "corral log %s" % sid4 in r.stderr,
             "corral %s: snapshots no longer in the store are named, and where the record still is" % verb[0],
             r.stderr)
    t.ok(os.path.exists(os.path.join(ws, "gone.txt")), "and nothing was reverted")
    # An id that is nowhere: said, with where to look.
    for verb in (["diff"], ["diff", "--list"], ["revert", "--dry-run"]):
        args = verb + ["99999999"] + (["1"] if verb[0] == "revert" else [])
        r = w.corral(*args)
        t.ok(r.returncode == 1 and "no session 99999999" in r.stderr and "corral log" in r.stderr and
             "retention" in r.stderr, "corral %s of an unknown id says none is recorded" % " ".join(verb), r.stderr)


def test_hook_is_risk_marked(t):
    ws = fresh_ws("hooks")
    sid = run(ws, "mkdir -p sub/.git/hooks && printf '#!/bin/sh\\necho pwned\\n' > sub/.git/hooks/pre-commit && "
                  "chmod +x sub/.git/hooks/pre-commit && mkdir -p .github/workflows && echo x > .github/workflows/ci.yml "
                  "&& echo 'export X=1' > .envrc && mkdir -p .vscode && echo '{}' > .vscode/tasks.json")
    r = diff(sid)
    risk = {x["path"]: x for x in r["changes"]["risk"]}
    t.ok("sub" in risk and "hook" in risk["sub"]["marks"] and "pre-commit" in risk["sub"].get("detail", ""),
         "a command creating sub/.git/hooks/pre-commit is risk-marked (hook)", risk)
    t.ok("ci" in risk.get(".github/workflows/ci.yml", {}).get("marks", []) and
         "envrc" in risk.get(".envrc", {}).get("marks", []) and
         "editor-task" in risk.get(".vscode/tasks.json", {}).get("marks", []),
         "CI, .envrc and editor task files are marked", risk)
    t.ok(r["files"][0]["path"] == "sub", "risk marks come first in the file list", [f["path"] for f in r["files"]])
    d = w.corral("diff", str(sid))
    t.ok("corral: risk [" in d.stderr and "pre-commit" in d.stderr, "corral diff names them on stderr", d.stderr)


def test_agent_configuration_is_marked(t):
    # Agent configuration a command plants below the workspace's top, where
    # the sandbox lets it (nothing was there to protect): each file is
    # marked, with what loads it, in the record and by corral diff; one
    # .gitignore excludes is marked as it appears.
    ws = fresh_ws("agentcfg")
    with open(os.path.join(ws, ".gitignore"), "w") as f:
        f.write("settings.local.json\n")
    sid = run(ws, "mkdir -p sub/.codex sub/.claude pkg/.gemini sub/.vscode && "
                  "echo 'notify = [\"sh\", \"-c\", \"id\"]' > sub/.codex/config.toml && "
                  "echo '{\"hooks\": {}}' > sub/.claude/settings.local.json && echo '{}' > pkg/.mcp.json && "
                  "echo '{}' > pkg/.gemini/settings.json && echo '{}' > sub/.vscode/tasks.json && "
                  "echo repos: > sub/.pre-commit-config.yaml && echo ok > sub/plain.txt")
    r = diff(sid)
    risk = {x["path"]: x for x in r["changes"]["risk"]}
    expect = {"sub/.codex/config.toml": ("agent-config", "Codex"),
              "sub/.claude/settings.local.json": ("agent-config", "not captured"),
              "pkg/.mcp.json": ("agent-config", "MCP servers"),
              "pkg/.gemini/settings.json": ("agent-config", "Gemini CLI"),
              "sub/.vscode/tasks.json": ("editor-task", "folder-open"),
              "sub/.pre-commit-config.yaml": ("hook", "pre-commit")}
    for path, (mark, why) in expect.items():
        x = risk.get(path, {})
        t.ok(mark in x.get("marks", []) and why in x.get("detail", ""),
             "%s is marked %s, saying what loads it" % (path, mark), x or risk)
    t.ok("sub/plain.txt" not in risk, "a plain file is not marked", risk)
    rec = record(sid, 1)
    t.ok(rec and any(x["path"] == "sub/.codex/config.toml" for x in rec.get("risk", [])),
         "the command's record carries the marks", rec)
    d = w.corral("diff", str(sid))
    t.ok("corral: risk [agent-config] sub/.codex/config.toml: Codex loads .codex/" in d.stderr,
         "corral diff names the file and why on stderr", d.stderr)


def test_users_git_and_workspace_untouched(t):
    ws = fresh_ws("userrepo")
    marker_dir = os.path.join(w.base, "markers")
    os.makedirs(marker_dir)
    git("init", "-q", cwd=ws)
    with open(os.path.join(ws, ".gitattributes"), "w") as f:
        f.write("*.txt filter=evil\n* text=auto\n")
    with open(os.path.join(ws, "a.txt"), "w") as f:
        f.write("a\r\nb\r\n")
    git("add", ".", cwd=ws)
    git("commit", "-q", "-m", "one", cwd=ws)
    git("config", "filter.evil.clean", "touch %s/filter-ran; cat" % marker_dir, cwd=ws)
    git("config", "filter.evil.smudge", "touch %s/smudge-ran; cat" % marker_dir, cwd=ws)
    git("config", "core.fsmonitor", "touch %s/fsmonitor-ran; echo" % marker_dir, cwd=ws)
    with open(os.path.join(ws, "b.txt"), "w") as f:
        f.write("untracked\n")
    before = digest(ws)
    for _ in range(3):
        sid = run(ws, "true")
    r = diff(sid, fmt="patch", since_start=True)
    w.corral("diff", str(sid))
    t.ok("error" not in r, "snapshots and diffs of a repository with a filter and an fsmonitor", r)
    cooled()
    t.eq(digest(ws), before, "the workspace and its .git are byte for byte as before")
    t.eq(sorted(os.listdir(marker_dir)), [], "no git filter, hook or fsmonitor of the workspace ran")


def test_interactive_shells(t):
    for shell in ("bash", "zsh"):
        if not shutil.which(shell):
            t.skip("%s: its lines get their own diffs" % shell, "%s is not installed" % shell)
            continue
        ws = fresh_ws("shell-" + shell)
        sid = mon.call({"cmd": "new", "argv": [shell], "cwd": ws, "name": shell})["session"]["id"]
        mon.call({"cmd": "watch", "session": sid})
        mon.type_line(sid, "echo ready-$((40+2))")
        mon.screen_until(sid, "ready-42")
        mon.type_line(sid, "echo one > one.txt")
        mon.type_line(sid, "echo two > two.txt; rm one.txt")
        mon.type_line(sid, "echo done-$((1+2))")
        mon.screen_until(sid, "done-3")
        cmds = mon.call({"cmd": "commands", "session": sid})["commands"]
        lines = [c["line"] for c in cmds]
        t.ok(lines[:4] == ["echo ready-$((40+2))", "echo one > one.txt", "echo two > two.txt; rm one.txt",
                           "echo done-$((1+2))"], "%s: each typed line is a command" % shell, lines)
        f2, f3 = files_of(diff(sid, 2)), files_of(diff(sid, 3))
        t.ok(list(f2) == ["one.txt"] and f2["one.txt"]["status"] == "A", "%s: line 2's diff is its own" % shell, f2)
        t.ok(sorted(f3) == ["one.txt", "two.txt"] and f3["one.txt"]["status"] == "D",
             "%s: line 3's diff is its own" % shell, f3)
        rec = record(sid, 2)
        t.ok(rec and rec.get("exit_code") == 0, "%s: the record has the line's exit status" % shell, rec)
        mon.call({"cmd": "kill", "session": sid})


def test_shared_attribution(t):
    ws = fresh_ws("shared")
    # A runs until told to end; B runs and ends meanwhile, in the same workspace.
    a = mon.call({"cmd": "exec", "argv": ["sh", "-c", "echo a > a.txt; read x; echo done"], "workdir": ws,
                  "tty": True, "yield_time_ms": 500})
    sa = a["session_id"]
    sb = run(ws, "echo b > b.txt")
    mon.call({"cmd": "write_stdin", "session_id": sa, "chars": "\r", "yield_time_ms": 5000})
    fa = files_of(diff(sa, 1))
    rb = diff(sb, 1)
    t.ok(sorted(fa) == ["a.txt", "b.txt"], "the long command's diff spans what happened while it ran", fa)
    with_b = rb["record"]["shared_with"]
    t.ok(rb["record"]["attribution"] == "shared" and {"session": sa, "command": 1} in with_b,
         "the command that ran meanwhile is shared with it", rb["record"])
    ra = diff(sa, 1)["record"]
    t.ok(ra["attribution"] == "shared" and {"session": sb, "command": 1} in ra["shared_with"],
         "and the other way round", ra)


def test_protocol_refusals(t):
    ws = fresh_ws("proto")
    sid = run(ws, "echo x > x")
    for req, want in [({"cmd": "diff"}, "session"), ({"cmd": "diff", "session": sid, "format": "html"}, "format"),
                      ({"cmd": "diff", "session": sid, "command": 0}, "command"),
                      ({"cmd": "diff", "session": sid, "command": 9}, "no command 9"),
                      ({"cmd": "diff", "session": sid, "between": [1]}, "between"),
                      ({"cmd": "diff", "session": sid, "command": 1, "since_start": True}, "at most one"),
                      ({"cmd": "revert", "session": sid}, "command"),
                      ({"cmd": "commands", "session": 99999999}, "no session")]:
        r = mon.call(req)
        t.ok("error" in r and want in r["error"]["message"], "%s is refused (%s)" % (json.dumps(req), want), r)
    r = w.corral("diff", str(sid), "x")
    t.ok(r.returncode == 2 and "not a command number" in r.stderr, "corral diff: a bad CMD is a usage error", r.stderr)


def session_refs(sid):
    """The refs that keep session sid's snapshots from gc, in whichever
    store has them: {ref name: commit}."""
    stores = os.path.join(w.state, "corral", "snapshots")
    found = {}
    for name in os.listdir(stores):
        r = subprocess.run(["git", "--git-dir", os.path.join(stores, name), "for-each-ref",
                            "--format=%(refname) %(objectname)", "refs/snap/s/"], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            ref, commit = line.split()
            if ref.split("/")[3].split("-")[0] == str(sid):
                found[ref] = commit
    return found


unchanged = {}


def test_a_command_that_changes_nothing_adds_no_ref(t):
    """A command that changed nothing ends on the snapshot it began with,
    which the ref of its "before" already keeps from gc: no second ref
    (a file and its lock file, made on every such command).  One that
    changed something keeps both."""
    ws = fresh_ws("unchanged")
    with open(os.path.join(ws, "kept.txt"), "w") as f:
        f.write("kept\n")
    same = run(ws, "true")
    changed = run(ws, "echo x > x.txt")
    refs = session_refs(same)
    t.eq(len(refs), 1, "the command that changed nothing has one ref", refs)
    refs = session_refs(changed)
    t.eq(len(set(refs.values())), 2, "the command that changed x.txt has a ref for each of its two snapshots", refs)
    unchanged.update(same=same, changed=changed)


def test_gc(t):
    # Every store this file made is repacked: minutes under the sanitizers
    # on a busy machine, where the CLI's default 30 s ran out.
    r = w.corral("gc", timeout=600)
    t.ok(r.returncode == 0 and os.path.join(w.base, "kinds") in r.stdout, "corral gc maintains every store",
         r.stdout + r.stderr)
    if unchanged:
        t.eq({p: f["status"] for p, f in files_of(diff(unchanged["changed"])).items()}, {"x.txt": "A"},
             "after gc, a command's change still shows: both its snapshots were kept", diff(unchanged["changed"]))
        t.ok("error" not in diff(unchanged["same"]) and not diff(unchanged["same"]).get("files"),
             "and so does the command that changed nothing, on its one ref", diff(unchanged["same"]))
    d = w.corral("doctor")
    t.ok("snapshots: on" in d.stdout and os.path.join(w.base, "kinds") in d.stdout,
         "corral doctor lists the stores and their sizes", d.stdout)


def test_patch_undoes_with_git_apply(t):
    ws = fresh_ws("apply")
    with open(os.path.join(ws, "a.txt"), "w") as f:
        f.write("alpha\nbeta\n")
    with open(os.path.join(ws, "b.bin"), "wb") as f:
        f.write(b"\x00\x01\x02old")
    with open(os.path.join(ws, "c.txt"), "w") as f:
        f.write("delete me\n")
    before = digest_content(ws)
    sid = run(ws, "printf 'alpha\\nBETA\\n' > a.txt && printf '\\000\\001\\002new' > b.bin && rm c.txt && "
                  "echo n > 'd e.txt' && chmod +x a.txt")
    r = w.corral("diff", "--patch", str(sid))
    t.ok(r.returncode == 0 and "diff --git a/a.txt b/a.txt" in r.stdout and "GIT binary patch" in r.stdout,
         "corral diff --patch prints git's patch, binary included", r.stdout + r.stderr)
    p = subprocess.run(["git", "apply", "-R"], input=r.stdout.encode(), cwd=ws, capture_output=True)
    t.ok(p.returncode == 0, "git apply -R takes it", p.stderr)
    cooled()
    t.eq(digest_content(ws), before, "and the workspace is as before the command")


def test_one_shot_commands_find_the_workspace_warm(t):
    """An agent's commands come one at a time, each its own session: the
    workspace's reader (its inotify watch and stat cache) and store stay
    open between them for [snapshots] keep-open, then close."""
    ws = fresh_ws("warm")
    with open(os.path.join(ws, "kept.txt"), "w") as f:
        f.write("kept\n")
    sid = run(ws, "true")
    r = mon.call({"cmd": "rm", "sessions": [sid]})
    t.ok("error" not in r, "its session leaves the store (corral rm): the workspace has no session now", r)
    first = reader_pids(ws)
    t.ok(len(first) == 1, "with no session left, the workspace's reader still runs (keep-open)", first)
    sid = run(ws, "echo new > new.txt; rm kept.txt")
    t.eq(reader_pids(ws), first, "the next command's snapshots come from the same reader")
    t.eq({p: f["status"] for p, f in files_of(diff(sid)).items()}, {"new.txt": "A", "kept.txt": "D"},
         "and its record has what the command did, nothing less", diff(sid))
    mon.call({"cmd": "rm", "sessions": [sid]})
    t.ok(wait_until(lambda: not reader_pids(ws), timeout=TIMEOUT),
         "once keep-open (3 s here) passes with no session in the workspace, the reader ends", reader_pids(ws))
    sid = run(ws, "echo again > again.txt")
    t.eq({p: f["status"] for p, f in files_of(diff(sid)).items()}, {"again.txt": "A"},
         "a command after that gets a new reader, and a right record", diff(sid))


def libgit2_mapped(pid):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return "/libgit2.so" in f.read()
    except OSError:
        return False


def test_libgit2_stays_out_of_the_server(t):
    """The server never loads libgit2, and the TLS, SSH and Kerberos
    libraries it links (4 MiB resident): a workspace's snapshot store is
    opened in a process of its own, `corral __snapstore WORKSPACE`, which
    alone loads them.  And libgit2's global init there neither initialises
    OpenSSL for SSH nor parses the system's trust store, which a snapshot
    store never uses: those two calls bind to the corral binary's own no-op
    definitions (src/snap/snap_git.c), as the dynamic linker reports."""
    lw = World()
    try:
        # The report goes to the server's stderr, its log, which the
        # store's process shares (a file of LD_DEBUG_OUTPUT's would be a
        # descriptor the server closes).
        srv = lw.start_server(extra_env={"LD_DEBUG": "bindings"})
        c = lw.connect("lazy")
        c.call({"cmd": "ls"})
        t.ok(not libgit2_mapped(srv.pid), "a server no session has used has not loaded libgit2")
        r = c.call({"cmd": "exec", "argv": ["true"], "workdir": lw.ws, "yield_time_ms": 30000})
        t.eq(r.get("exit_code"), 0, "a command runs in a workspace", r)
        t.ok(not libgit2_mapped(srv.pid), "its snapshots do not load libgit2 into the server either")
        stores = store_pids(lw.ws)
        t.ok(len(stores) == 1 and parent_of(stores[0]) == srv.pid,
             "a store process of the server's own has the workspace's store", stores)
        t.ok(stores and libgit2_mapped(stores[0]), "and it has loaded libgit2")
        bindings = lw.server_log()
        for sym in ("libssh2_init", "mbedtls_x509_crt_parse_file"):
            bound = re.search(r"binding file (\S*/libgit2\.so\S*) \[\d+\] to (\S+) \[\d+\]: normal symbol `%s'" % sym,
                              bindings)
            # The store's process is the corral binary, named corral-store.
            t.ok(bound and os.path.basename(bound.group(2)) in ("corral", "corral-store"),
                 "libgit2's call of %s goes to corral's no-op, not to the library" % sym,
                 bound.group(0) if bound else "no binding of %s reported" % sym)
    finally:
        lw.cleanup()


def test_the_store_process_comes_and_goes(t):
    """The store's process ends once the store has had no job for
    [snapshots] store-idle (1 s here), while the workspace's reader stays;
    the next command starts a new one and its record is right.  A store
    process killed from outside costs no record either: the next job
    starts another."""
    lw = World(config="[snapshots]\nstore-idle = 1s\n")
    try:
        srv = lw.start_server()
        c = lw.connect("idle")

        def run_in(line):
            r = c.call({"cmd": "exec", "argv": ["/bin/sh", "-c", line], "workdir": lw.ws, "yield_time_ms": 30000})
            t.eq(r.get("exit_code"), 0, "%s runs" % line, r)
            return r.get("session")

        def changes(sid):
            r = c.call({"cmd": "diff", "session": sid, "command": "last", "format": "files"})
            return {f["path"]: f["status"] for f in r.get("files", [])}, r

        sid = run_in("echo one > one.txt")
        t.eq(changes(sid)[0], {"one.txt": "A"}, "the first command's record", changes(sid)[1])
        first = store_pids(lw.ws)
        readers = reader_pids(lw.ws)
        t.ok(len(first) == 1, "a store process serves the workspace", first)
        t.ok(wait_until(lambda: not store_pids(lw.ws), timeout=TIMEOUT),
             "with no job for store-idle, it ends", store_pids(lw.ws))
        t.eq(reader_pids(lw.ws), readers, "the workspace's reader stays (its watch still knows what changed)")
        sid = run_in("echo two > two.txt; rm one.txt")
        t.eq(changes(sid)[0], {"two.txt": "A", "one.txt": "D"}, "the next command starts a new one: a right record",
             changes(sid)[1])
        second = store_pids(lw.ws)
        t.ok(len(second) == 1 and second != first, "from a new store process", (first, second))
        for pid in second:
            os.kill(pid, signal.SIGKILL)
        # Gone from /proc: reaped, so its exit (its socket closed) is
        # complete; a dying process loses its argv before its descriptors.
        t.ok(wait_until(lambda: not any(os.path.exists("/proc/%d" % pid) for pid in second), timeout=TIMEOUT),
             "a store process killed from outside ends")
        sid = run_in("echo three > three.txt")
        t.eq(changes(sid)[0], {"three.txt": "A"}, "the next command's record is still right", changes(sid)[1])
        t.ok(srv.poll() is None, "and the server runs on")
        left = store_pids(lw.ws)
        t.ok(len(left) == 1, "a store process runs again", left)
        srv.send_signal(signal.SIGKILL)
        srv.wait(TIMEOUT)
        t.ok(wait_until(lambda: not store_pids(lw.ws), timeout=TIMEOUT),
             "a server killed outright leaves no store process behind", store_pids(lw.ws))
    finally:
        lw.cleanup()


def test_a_long_snapshot_shows_its_progress(t):
    """A first snapshot of a large workspace takes seconds: subscribed
    clients (the screen's status bar) see its progress as it goes, now
    that it comes from the store's process: what is scanned, then stored,
    of how many, and then the workspace ready."""
    lw = World()
    try:
        for d in range(250):
            sub = os.path.join(lw.ws, "d%03d" % d)
            os.makedirs(sub)
            for i in range(200):
                with open(os.path.join(sub, "f%03d.txt" % i), "w") as f:
                    f.write("file %d of %d, with some words to store\n" % (i, d) * 20)
        lw.start_server()
        mon = lw.connect("watcher")
        mon.call({"cmd": "subscribe"})
        c = lw.connect("agent")
        r = c.call({"cmd": "exec", "argv": ["true"], "workdir": lw.ws, "yield_time_ms": 60000}, timeout=120)
        t.eq(r.get("exit_code"), 0, "a command runs while the first snapshot of 50000 files is taken", r)
        seen = []

        def ready(m):
            if m.get("event") != "snapshot" or m.get("workspace") != lw.ws:
                return False
            seen.append(m["snapshots"])
            return m["snapshots"].get("state") == "ready" and m["snapshots"].get("phase") == "idle"
        mon.next_event(ready)
        moving = [s for s in seen if s.get("phase") in ("scanning", "storing")]
        t.ok(moving, "while it is taken, its progress comes as events", seen[:5])
        t.ok(all(0 <= s["done"] <= s["total"] for s in moving if s["phase"] == "storing") and
             any(s["total"] > 0 for s in moving), "with files done of a total", moving[:5])
    finally:
        lw.cleanup()


def test_a_store_that_cannot_open_is_logged(t):
    """A workspace whose snapshot store cannot be opened (here the stores'
    directory is a file) still runs its commands; why it has no
    snapshots is in the session's state and, once, in the server's log,
    where a libgit2 that cannot be loaded shows too (it is loaded then)."""
    lw = World()
    try:
        os.makedirs(os.path.join(lw.state, "corral"), exist_ok=True)
        with open(os.path.join(lw.state, "corral", "snapshots"), "w") as f:
            f.write("not a directory\n")
        lw.start_server()
        c = lw.connect("failing")
        for _ in range(2):
            r = c.call({"cmd": "exec", "argv": ["true"], "workdir": lw.ws, "yield_time_ms": 30000})
            t.eq(r.get("exit_code"), 0, "a command runs without snapshots", r)
        lines = [l for l in lw.server_log().splitlines() if "workspace snapshots of %s are off" % lw.ws in l]
        t.eq(len(lines), 1, "the server's log says once why the workspace has no snapshots", lw.server_log()[-2000:])
        t.ok(lines and "snapshots" in lines[0].split(" are off: ", 1)[-1], "naming what failed", lines)
        t.ok(lines and "Not a directory" in lines[0] and "a file is in the way" in lines[0],
             "and why: a file where the stores' directory goes", lines)
    finally:
        lw.cleanup()


run_tests(Tap(), [test_one_shot_commands_find_the_workspace_warm, test_every_change_kind, test_the_before_precedes_the_command,
                  test_the_new_file_cap_is_for_what_a_command_makes, test_patch_undoes_with_git_apply, test_revert,
                  test_revert_never_follows_a_planted_symlink, test_ended_sessions, test_hook_is_risk_marked,
                  test_agent_configuration_is_marked,
                  test_users_git_and_workspace_untouched, test_interactive_shells, test_shared_attribution,
                  test_protocol_refusals, test_a_command_that_changes_nothing_adds_no_ref, test_gc, test_libgit2_stays_out_of_the_server,
                  test_the_store_process_comes_and_goes, test_a_long_snapshot_shows_its_progress,
                  test_a_store_that_cannot_open_is_logged])
