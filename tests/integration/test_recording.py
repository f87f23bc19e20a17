#!/usr/bin/env python3
"""Recordings and the terminal model: output.cast is asciicast v2 that
asciinema accepts (cat and play), with resize and exit-marker events;
events.jsonl records the session's life; `corral screen` shows the screen as
the session's program drew it."""
import json
import os
import shutil
import subprocess

from harness import TIMEOUT, Tap, World, read_jsonl, run_in_pty, run_tests, wait_until

w = World()
w.start_server()
c = w.connect()

def recorded_session():
    r = c.call({"cmd": "new", "argv": ["cat"], "cwd": w.ws, "name": "rec", "cols": 80, "rows": 24})
    sid = r["session"]["id"]
    c.call({"cmd": "write_stdin", "session_id": sid, "chars": "caf\u00e9 \u6f22\u5b57\r", "yield_time_ms": 250})
    c.call({"cmd": "resize", "session": sid, "cols": 100, "rows": 30})
    c.call({"cmd": "write_stdin", "session_id": sid, "chars": "after resize\r", "yield_time_ms": 250})
    c.call({"cmd": "kill", "session": sid})
    return sid


SID = recorded_session()
CAST = os.path.join(w.session_dir(SID), "output.cast")


def test_cast_format(t):
    with open(CAST) as f:
        lines = [json.loads(l) for l in f]
    h = lines[0]
    t.eq((h["version"], h["width"], h["height"], h["command"], h["title"]), (2, 80, 24, "cat", "rec"),
         "header: version 2, size, command, title")
    t.ok(isinstance(h["timestamp"], int), "header has a start timestamp")
    kinds = [e[1] for e in lines[1:]]
    t.ok(set(kinds) <= {"o", "r", "m"}, "events are output, resize and marker only", kinds)
    t.ok(["r", "100x30"] in [e[1:] for e in lines[1:]], "the resize is recorded as 100x30")
    t.eq(lines[-1][1:], ["m", "killed by SIGKILL"], "the last event marks the exit")
    text = "".join(e[2] for e in lines[1:] if e[1] == "o")
    t.ok("caf\u00e9 \u6f22\u5b57\r\n" in text, "output keeps UTF-8 text whole", text)
    times = [e[0] for e in lines[1:]]
    t.eq(times, sorted(times), "times never go backwards")


def test_asciinema_accepts(t):
    if not shutil.which("asciinema"):
        t.skip("asciinema cat accepts the recording", "asciinema is not installed (Debian package asciinema)")
        return
    code, out = run_in_pty(["asciinema", "cat", CAST])
    t.eq(code, 0, "asciinema cat accepts the recording", out[-500:])
    t.ok("caf\u00e9 \u6f22\u5b57".encode() in out and b"after resize" in out, "and prints what was recorded",
         out[-300:])
    code, out = run_in_pty(["asciinema", "play", "-i", "0.01", CAST])
    t.eq(code, 0, "asciinema play plays it", out[-500:])


def test_events_log(t):
    # The session as one command: its record (docs/snapshots.md) comes
    # once the snapshot after it is taken, after the life events.
    path = os.path.join(w.session_dir(SID), "events.jsonl")
    ev = wait_until(lambda: [e for e in read_jsonl(path)] if any(e["event"] == "changes" for e in read_jsonl(path))
                    else None)
    t.eq([e["event"] for e in ev or []],
         ["created", "command_started", "resized", "killed", "exited", "command_ended", "changes"],
         "events: created, the command's start, resized, killed, exited, the command's end, then its record")
    ev = {e["event"]: e for e in ev or [] if e["event"] != "changes"}
    created = ev.get("created", {})
    t.eq((created.get("session"), created.get("command"), created.get("cwd"), created.get("client"),
          created.get("profile")),
         (SID, ["cat"], w.ws, "test", "workspace-write"), "created names the session, command, cwd, client, profile")
    t.eq((ev.get("resized", {}).get("cols"), ev.get("resized", {}).get("rows")), (100, 30),
         "resized carries the new size")
    t.eq((ev.get("exited", {}).get("code"), ev.get("exited", {}).get("signal")), (137, "SIGKILL"),
         "exited carries code and signal")
    t.ok(all(e["time"].endswith("Z") for e in ev.values()), "every event has a UTC time")


def test_screen(t):
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", "printf 'abc\\033[3;5Hxyz\\033[1;20Hend'; exec sleep 100"],
                "tty": True, "workdir": w.ws, "yield_time_ms": 250, "cols": 30, "rows": 5})
    sid = r["session"]
    out = r.get("output", "")
    while "end" not in out:  # the output has reached the model once a reply carries it
        out += c.call({"cmd": "write_stdin", "session_id": sid, "chars": "", "yield_time_ms": 5000})["output"]
    s = w.corral("screen", str(sid))
    t.eq(s.stdout, "abc                end\n\n    xyz\n\n\n", "screen prints the terminal model's text")
    r = c.call({"cmd": "screen", "session": sid})
    t.eq((r["rows"], r["cols"], r["cursor"]), (5, 30, [0, 22]), "with the size and cursor")
    c.call({"cmd": "kill", "session": sid})


def test_same_id_keeps_old_files(t):
    # A later session that draws an id seen before must not overwrite the
    # older recording: it is set aside as <id>.1.
    w2 = World()
    try:
        w2.start_server(extra_env={"CORRAL_SEQUENTIAL_IDS": "1"})
        c2 = w2.connect()
        a = c2.call({"cmd": "exec", "argv": ["echo", "first"], "workdir": w.ws})
        w2.stop()
        w2.start_server(extra_env={"CORRAL_SEQUENTIAL_IDS": "1"})
        c2 = w2.connect()
        b = c2.call({"cmd": "exec", "argv": ["echo", "second"], "workdir": w.ws})
        t.eq(a["session"], b["session"], "a restarted server may reuse an id")
        old = os.path.join(w2.state, "corral", "sessions", "%d.1" % a["session"], "output.cast")
        t.ok(os.path.exists(old) and "first" in open(old).read(), "the first session's recording is kept as <id>.1")
        t.ok("second" in open(os.path.join(w2.session_dir(b["session"]), "output.cast")).read(),
             "the new one has its own")
    finally:
        w2.cleanup()


try:
    run_tests(Tap(), [test_cast_format, test_asciinema_accepts, test_events_log, test_screen,
                      test_same_id_keeps_old_files])
finally:
    c.close()
    w.cleanup()
