#!/usr/bin/env python3
"""corral export through a real server: a session of an interactive bash
with commands that change files and one that waits for an approval is
exported to a .tar.gz whose events.jsonl and output.cast are the session's
own bytes, whose approvals.jsonl holds exactly that session's records of the
shared log, whose patches are what corral diff prints and undo the commands
with git apply -R, and whose SUMMARY.md names the commands; an existing
archive is never replaced without --force; a session the server no longer
has (after a restart) exports the same; a running session exports as far
as it got; a command whose snapshots are gone is said to be."""
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile

from harness import CORRAL, TIMEOUT, Tap, World, read_jsonl, run_tests

RULES = 'prefix_rule(pattern=["touch", "approved.txt"], decision="prompt", justification="asks first")\n'

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server()
mon = w.connect("monitor")
mon.call({"cmd": "subscribe"})
APPROVALS = os.path.join(w.state, "corral", "approvals.jsonl")


def digest(root):
    """Names, sizes, modes and contents of the files under root."""
    h = hashlib.sha256()
    for d, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            st = os.lstat(p)
            h.update(("%s %o %d\n" % (os.path.relpath(p, root), st.st_mode, st.st_size)).encode())
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def members(path):
    with tarfile.open(path) as t:
        return {m.name: (t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()}


def read(path):
    with open(path, "rb") as f:
        return f.read()


# The session: an interactive bash in its own workspace, two commands that
# change files, one that waits for an approval, one that changes nothing.
WS = os.path.join(w.base, "proj")
os.makedirs(WS)
for name, text in [("a.txt", "alpha\n"), ("gone.txt", "bye\n")]:
    with open(os.path.join(WS, name), "w") as f:
        f.write(text)
BEFORE = digest(WS)
SID = mon.call({"cmd": "new", "argv": ["bash"], "cwd": WS, "name": "review me"})["session"]["id"]
mon.call({"cmd": "watch", "session": SID})
mon.type_line(SID, "echo ready-$((40+2))")
mon.screen_until(SID, "ready-42")
mon.type_line(SID, "echo one > one.txt && echo beta >> a.txt")
mon.type_line(SID, "rm gone.txt && printf 'x\\000y' > two.bin")
mon.type_line(SID, "touch approved.txt")
APPROVAL = mon.next_event(lambda m: m.get("event") == "approval")["approval"]
r = w.corral("approve", str(APPROVAL["id"]))
assert r.returncode == 0, r.stderr
mon.type_line(SID, "echo done-$((1+2))")
mon.screen_until(SID, "done-3")
LIVE_OUT = os.path.join(w.base, "live.tar.gz")
LIVE = w.corral("export", str(SID), "-o", LIVE_OUT)
mon.call({"cmd": "kill", "session": SID})
# A diff waits behind the session's last snapshot: every record is written.
w.corral("diff", str(SID), "last")
SDIR = w.session_dir(SID)
COMMANDS = {c["command"]: c for c in mon.call({"cmd": "commands", "session": SID})["commands"]}
PATCHES = {n: w.corral("diff", "--patch", "--color", "never", str(SID), str(n)).stdout for n in COMMANDS}
OUT = os.path.join(w.base, "review.tar.gz")
FIRST = w.corral("export", str(SID), "-o", OUT)
TOP = "corral-%d/" % SID


def test_layout_and_bytes(t):
    r = FIRST
    t.ok(r.returncode == 0 and os.path.isfile(OUT), "corral export writes the archive", r.stdout + r.stderr)
    got = members(OUT)
    want = {TOP.rstrip("/")} | {TOP + n for n in ("events.jsonl", "output.cast", "approvals.jsonl", "SUMMARY.md")} | \
        {TOP + "cmd-%d.patch" % n for n in COMMANDS}
    t.eq(sorted(got), sorted(want), "one directory: events, recording, approvals, a patch per command, SUMMARY.md")
    t.ok(got.get(TOP + "events.jsonl") == read(os.path.join(SDIR, "events.jsonl")),
         "events.jsonl is the session's, byte for byte")
    t.ok(got.get(TOP + "output.cast") == read(os.path.join(SDIR, "output.cast")),
         "output.cast is the session's, byte for byte")
    shared = [l for l in read(APPROVALS).splitlines(keepends=True)
              if json.loads(l).get("approval") == APPROVAL["id"]]
    t.ok(len(shared) == 2 and got.get(TOP + "approvals.jsonl") == b"".join(shared),
         "approvals.jsonl: the request and the decision of the session's approval, as the shared log has them",
         got.get(TOP + "approvals.jsonl"))
    t.ok(not os.path.exists(OUT + ".tmp") and not [n for n in os.listdir(w.base) if n.startswith(".corral-export")],
         "no temporary file or directory is left behind", os.listdir(w.base))
    t.ok(("wrote %s" % OUT) in r.stdout and "%d commands" % len(COMMANDS) in r.stdout and
         "2 approval records" in r.stdout and "cmd-2.patch" in r.stdout, "stdout says what was written, where, and counts",
         r.stdout)


def test_patches_undo_the_commands(t):
    got = members(OUT)
    for n in COMMANDS:
        t.eq(got.get(TOP + "cmd-%d.patch" % n, b"").decode("utf-8", "replace"), PATCHES[n],
             "cmd-%d.patch is what corral diff %d %d --patch prints" % (n, SID, n))
    changed = [n for n in sorted(COMMANDS, reverse=True) if COMMANDS[n]["counts"]["added"] +
               COMMANDS[n]["counts"]["modified"] + COMMANDS[n]["counts"]["deleted"]]
    t.ok(len(changed) >= 3, "the commands that changed files have patches", changed)
    for n in changed:
        p = subprocess.run(["git", "apply", "-R"], input=got[TOP + "cmd-%d.patch" % n], cwd=WS, capture_output=True)
        t.ok(p.returncode == 0, "git apply -R cmd-%d.patch takes it" % n, p.stderr)
    t.eq(digest(WS), BEFORE, "and the workspace is as it was before the session")


def test_summary(t):
    text = members(OUT).get(TOP + "SUMMARY.md", b"").decode()
    for line in ("echo one > one.txt && echo beta >> a.txt", "rm gone.txt && printf 'x\\000y' > two.bin",
                 "touch approved.txt"):
        t.ok(line in text, "SUMMARY.md names the command %r" % line, text)
    t.ok("+1 ~1 -0" in text and "+1 ~0 -1" in text, "with its counts", text)
    t.ok("review me" in text and WS in text and "monitor" in text, "the session's name, workspace and agent", text)
    t.ok("`once`" in text and "`user`" in text and "asks first" in text,
         "the approval: its reason, the answer and who gave it", text)
    t.ok("killed by SIGKILL" in text, "and how the session ended", text)


def test_overwrite_needs_force(t):
    before = read(OUT)
    r = w.corral("export", str(SID), "-o", OUT)
    t.ok(r.returncode == 1 and OUT in r.stderr and "--force" in r.stderr,
         "an existing archive is refused, naming it and --force", r.stderr)
    t.ok(read(OUT) == before, "and left as it was")
    r = w.corral("export", "--force", str(SID), "-o", OUT)
    t.ok(r.returncode == 0 and TOP + "SUMMARY.md" in members(OUT) and not os.path.exists(OUT + ".tmp"),
         "--force replaces it", r.stderr)
    d = os.path.join(w.base, "adir")
    os.makedirs(d)
    r = w.corral("export", "--force", str(SID), "-o", d)
    t.ok(r.returncode == 1 and "is a directory" in r.stderr, "a directory is never replaced", r.stderr)
    r = w.corral("export", "12x")
    t.ok(r.returncode == 2 and "'12x' is not a session id" in r.stderr, "a bad session id is a usage error", r.stderr)
    r = w.corral("export", "999")
    t.ok(r.returncode == 1 and "no recorded session 999" in r.stderr and os.path.join(w.state, "corral", "sessions")
         in r.stderr, "a session with no record is named, with where corral looked", r.stderr)
    r = w.corral("export", str(SID), "-o", os.path.join(w.base, "no", "such", "dir", "x.tar.gz"))
    t.ok(r.returncode == 1 and "cannot write in" in r.stderr, "a directory that does not exist is named", r.stderr)


def test_live_session(t):
    t.ok(LIVE.returncode == 0 and "(running)" in LIVE.stdout, "a running session is exported", LIVE.stdout + LIVE.stderr)
    got = members(LIVE_OUT)
    ev = got.get(TOP + "events.jsonl", b"")
    t.ok(ev and read(os.path.join(SDIR, "events.jsonl")).startswith(ev) and ev.endswith(b"\n"),
         "as far as it got: its events so far, whole lines")
    text = got.get(TOP + "SUMMARY.md", b"").decode()
    t.ok("still running when this was exported" in text, "SUMMARY.md says it was running", text)


def test_after_restart(t):
    w.stop()
    w.start_server()
    global mon
    mon = w.connect("monitor")
    mon.call({"cmd": "subscribe"})
    # The new server's first approval has the same id as the session's.
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--", "touch", "approved.txt"], env=w.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    a = mon.next_event(lambda m: m.get("event") == "approval")["approval"]
    w.corral("approve", str(a["id"]))
    p.communicate(timeout=TIMEOUT)
    t.eq(a["id"], APPROVAL["id"], "(the restarted server numbers approvals from 1 again)")
    out = os.path.join(w.base, "after.tar.gz")
    r = w.corral("export", str(SID), "-o", out)
    t.ok(r.returncode == 0, "a session of a server that has stopped is exported", r.stdout + r.stderr)
    got, first = members(out), members(OUT)
    same = [n for n in first if n != TOP + "SUMMARY.md" and got.get(n) != first[n]]
    t.eq(same, [], "with the same events, recording, approvals and patches as before the restart")


def test_missing_snapshots(t):
    # A session whose command's snapshots are not in the store (removed).
    name = "321"
    d = os.path.join(w.state, "corral", "sessions", name)
    os.makedirs(d)
    rec = dict(COMMANDS[2], event="changes", time="2026-01-01T00:00:01.000Z", before="1" * 40, after="2" * 40)
    rec.pop("state", None)
    with open(os.path.join(d, "events.jsonl"), "w") as f:
        f.write(json.dumps({"time": "2026-01-01T00:00:00.000Z", "event": "created", "session": 321,
                            "command": ["sh"], "cwd": WS, "client": "user", "profile": "full", "pid": 1}) + "\n")
        f.write(json.dumps(rec) + "\n")
        f.write('{"time":"2026-01-01T00:00:02.000Z","event":"exi')  # torn: a crash mid-write
    out = os.path.join(w.base, "gone.tar.gz")
    r = w.corral("export", name, "-o", out)
    t.ok(r.returncode == 0 and "command 2: no patch" in r.stderr and "cannot be read" in r.stderr,
         "a command whose snapshots are gone is said to have no patch, and why", r.stderr)
    t.ok("torn" in r.stderr, "a torn last line of events.jsonl is a warning, not an error", r.stderr)
    text = members(out).get("corral-321/SUMMARY.md", b"").decode()
    t.ok("none:" in text and "cannot be read" in text and "corral-321/cmd-2.patch" not in members(out),
         "SUMMARY.md says so too, and there is no cmd-2.patch", text)


def test_without_a_server(t):
    w.stop()
    out = os.path.join(w.base, "cold.tar.gz")
    r = w.corral("export", str(SID), "-o", out)
    got, first = members(out) if os.path.exists(out) else {}, members(OUT)
    t.ok(r.returncode == 0 and [n for n in first if n != TOP + "SUMMARY.md" and got.get(n) != first[n]] == [],
         "with no server running, one is started for the patches, and the archive is the same", r.stderr)


run_tests(Tap(), [test_layout_and_bytes, test_patches_undo_the_commands, test_summary, test_overwrite_needs_force,
                  test_live_session, test_after_restart, test_missing_snapshots, test_without_a_server])
