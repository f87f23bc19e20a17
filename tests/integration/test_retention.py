#!/usr/bin/env python3
"""Retention of ended sessions' directories through a real server:
corral gc removes the directories of sessions that provably ended and were
last written longer ago than [session] retention, then the oldest while all
of them take more than [session] max-total-size, and says what it removed
and kept; a running session (its files made to look old) is never removed,
nor one whose end cannot be proven (its process still runs), nor a
directory that is not a session's; the removed sessions' snapshots leave
their store; bad values of the keys are errors naming the file, the line
and the value."""
import json
import os
import subprocess
import time

from harness import CORRAL, TIMEOUT, Tap, World, read_jsonl, run_tests

DAY = 86400


def sessions_dir(w):
    return os.path.join(w.state, "corral", "sessions")


def fake_session(w, name, age_days, exited=True, pid=999999, cast_bytes=0, created=None):
    """A session directory as a server leaves it, last written age_days ago."""
    d = os.path.join(sessions_dir(w), name)
    os.makedirs(d)
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(created if created else time.time() - age_days * DAY))
    with open(os.path.join(d, "events.jsonl"), "w") as f:
        f.write(json.dumps({"time": when, "event": "created", "session": int(name.split(".")[0]), "name": "sh",
                            "command": ["sh"], "cwd": w.ws, "client": "user", "pid": pid}) + "\n")
        if exited:
            f.write(json.dumps({"time": when, "event": "exited", "code": 0, "duration_seconds": 1.0}) + "\n")
    with open(os.path.join(d, "output.cast"), "wb") as f:
        f.write(b'{"version":2,"width":80,"height":24,"timestamp":1}\n')
        f.write(os.urandom(cast_bytes))
    age(d, age_days)
    return d


def age(d, days):
    t = time.time() - days * DAY
    for n in os.listdir(d):
        os.utime(os.path.join(d, n), (t, t))
    os.utime(d, (t, t))


def gc_lines(r, verb):
    """{name: line} of the directories gc printed with verb (removed, kept,
    would remove)."""
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("  " + verb + " ") and "last written" in line:
            out[line[len(verb) + 3:].split()[0]] = line
    return out


def end(w, mon, sid):
    """Kill a session and wait until its last snapshot is recorded."""
    mon.call({"cmd": "kill", "session": sid})
    w.corral("diff", str(sid), "last")


def test_age(t):
    w = World(config="[session]\n    retention = 30d\n    max-total-size = 0\n")
    w.start_server()
    mon = w.connect("monitor")
    # A running session whose files look older than the retention.
    live = mon.call({"cmd": "new", "argv": ["cat"], "cwd": w.ws, "name": "live"})["session"]["id"]
    age(w.session_dir(live), 40)
    fake_session(w, "101", 40)                        # ended, old: goes
    fake_session(w, "102", 5)                         # ended, recent: stays
    fake_session(w, "103", 40, exited=False)          # end not recorded, its process is gone: goes
    fake_session(w, "104", 40, exited=False, pid=os.getpid(), created=time.time())  # its process runs: stays
    fake_session(w, "105.1", 40)                      # an older session that had id 105: goes
    os.makedirs(os.path.join(sessions_dir(w), "106"))  # never started (no events), old: goes
    age(os.path.join(sessions_dir(w), "106"), 40)
    notes = os.path.join(sessions_dir(w), "notes")
    os.makedirs(notes)                                # not a session's: never touched
    age(notes, 400)
    dry = w.corral("gc", "--dry-run")
    t.ok(dry.returncode == 0 and sorted(gc_lines(dry, "would remove")) == ["101", "103", "105.1", "106"],
         "gc --dry-run names what it would remove", dry.stdout + dry.stderr)
    t.ok(os.path.isdir(os.path.join(sessions_dir(w), "101")), "and removes nothing")
    r = w.corral("gc")
    removed = gc_lines(r, "removed")
    t.eq(sorted(removed), ["101", "103", "105.1", "106"], "gc removes the ended sessions older than the retention",
         r.stdout + r.stderr)
    t.ok(all("KiB" in l or " B " in l for l in removed.values()) and "older than [session] retention" in
         removed.get("101", "") and "its end is recorded" in removed.get("101", "") and
         "process (pid 999999) is gone" in removed.get("103", ""),
         "each with its size, why, and what proves it ended", r.stdout)
    left = sorted(os.listdir(sessions_dir(w)))
    t.eq(left, sorted(["102", "104", "notes", str(live)]), "the rest is where it was")
    kept = gc_lines(r, "kept")
    t.ok("running" in kept.get(str(live), "") and "still runs" in kept.get("104", ""),
         "a running session and one whose process runs are kept although old, and gc says why", r.stdout)
    t.ok("removed 4 session directories" in r.stdout and "kept 3" in r.stdout, "and counts both", r.stdout)
    t.ok(mon.call({"cmd": "input", "session": live, "data": "still here\r"}).get("ok"),
         "the running session runs on")
    end(w, mon, live)
    w.cleanup()


def test_size_cap(t):
    w = World(config="[session]\n    retention = 0\n    max-total-size = 500K\n")
    w.start_server()
    mon = w.connect("monitor")
    live = mon.call({"cmd": "new", "argv": ["cat"], "cwd": w.ws, "name": "live"})["session"]["id"]
    age(w.session_dir(live), 20)  # the oldest of all, but running
    for i, name in enumerate(["201", "202", "203", "204"]):
        fake_session(w, name, 10 - i, cast_bytes=200 * 1024)
    r = w.corral("gc")
    removed = gc_lines(r, "removed")
    t.eq(sorted(removed), ["201", "202"], "over the cap, the oldest ended sessions go first, until under it",
         r.stdout + r.stderr)
    t.ok("over [session] max-total-size" in removed.get("201", ""), "and gc says that was why", r.stdout)
    t.eq(sorted(os.listdir(sessions_dir(w))), sorted(["203", "204", str(live)]),
         "the running session stays, although it is the oldest")
    end(w, mon, live)
    w.cleanup()


def test_snapshots_go_with_the_session(t):
    w = World(config="[session]\n    retention = 1d\n")
    w.start_server()
    mon = w.connect("monitor")
    ws = os.path.join(w.base, "proj")
    os.makedirs(ws)
    r = mon.call({"cmd": "exec", "argv": ["sh", "-c", "echo x > x.txt"], "workdir": ws, "yield_time_ms": 30000})
    sid = max(mon.call({"cmd": "ls"})["sessions"], key=lambda s: s["use"])["id"]
    w.corral("diff", str(sid))  # its record is written
    age(w.session_dir(sid), 3)
    kept = gc_lines(w.corral("gc"), "kept")
    t.ok("in the server's list" in kept.get(str(sid), ""),
         "an ended session still in the server's list is kept, however old", kept)
    mon.call({"cmd": "rm", "sessions": [sid]})
    age(w.session_dir(sid), 3)
    g = w.corral("gc")
    t.ok(str(sid) in gc_lines(g, "removed"), "once out of the list and old, its directory goes", g.stdout + g.stderr)
    line = [l for l in g.stdout.splitlines() if l.strip().startswith(ws + ":")]
    t.ok(line and "(1 session dropped)" in line[0], "and its snapshots leave the workspace's store", g.stdout)
    w.cleanup()


def test_bad_values(t):
    w = World()
    path = os.path.join(w.config, "corral", "config")
    for text, want in [("[session]\n    retention = 3x\n", ":2: session.retention: '3x' is not a duration"),
                       ("[session]\n    max-total-size = lots\n", ":2: session.max-total-size: 'lots' is not a size"),
                       ("[session]\n\n    max-total-size = -1\n", ":3: session.max-total-size: '-1' is not a size")]:
        w.write_config(text)
        r = w.corral("server", "--foreground")
        t.ok(r.returncode != 0 and (path + want) in r.stderr, "a bad value names the file, the line and the value (%s)"
             % want.split(": ")[1], r.stderr)
    w.cleanup()


run_tests(Tap(), [test_age, test_size_cap, test_snapshots_go_with_the_session, test_bad_values])
