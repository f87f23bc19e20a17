#!/usr/bin/env python3
"""corral -H against a hostile server (issue 20): whatever another
machine's server sends, no verb run against it acts on the user's terminal
or crashes.

CORRAL_SSH_COMMAND runs this file with --serve instead of ssh (ssh's
arguments ignored): a stand-in server speaking corral's protocol on its
standard input and output, whose every reply and event is made to take
over a terminal (OSC 52 clipboard writes, a title, clearing the screen,
C1 controls, DEL, BEL, a right-to-left override, zero-width characters,
JSON that is not JSON, raw bytes that are not UTF-8), or is 100 KB long,
or has the wrong JSON type in every field, or none of its fields.  Every
verb that works under -H runs against it, to pipes and on a terminal: it
ends without a signal or a sanitizer's report, what it prints keeps
hostile.terminal_violations' rule (no ESC, BEL, C1 or other control; no
raw U+202E), and the hostile text shows in visible form.  The exception
is a session's output (exec, send, poll, screen, a diff's patch) to a
pipe: byte for byte, there as from a local server; on a terminal its
controls show as cat -v shows them (right-to-left text stays text)."""
import base64
import json
import os
import sys

PAYLOAD = ("\x1b]52;c;aG9zdGlsZQ==\x07"   # clipboard write
           "\x1b]0;HOSTILE-TITLE\x07"     # window title
           "\x1b[2J\x1b[?1049h"           # clear, alternate screen
           "\x9b31m\x9d0;C1\x9c\x85"      # C1: CSI, OSC, ST, NEL
           "\x7f\x08\x0e"                 # DEL, BS, SO
           "\u202eevil\u200b\u2066")      # right-to-left override, zero-width space, isolate
# Bytes a session may print that are not UTF-8 (base64 in the protocol).
RAW_BYTES = b"\xff\xfe\x1b]52;c;cmF3\x07\xc2\x9b31m\x80"
HUGE = PAYLOAD + "x" * 100000 + PAYLOAD
SID = 1000


# ---- the stand-in server ------------------------------------------------------

def wrong(v):
    """v with every leaf of the wrong JSON type (containers kept)."""
    if isinstance(v, dict):
        return {k: wrong(x) for k, x in v.items()}
    if isinstance(v, list):
        return [wrong(x) for x in v] + [{"x": PAYLOAD}, 7]
    if isinstance(v, str):
        return 12345
    if isinstance(v, bool):
        return PAYLOAD
    if isinstance(v, (int, float)):
        return [PAYLOAD]
    return PAYLOAD


def replies(cmd, p):
    """(events, fields) of the reply to cmd, its strings p."""
    b64 = base64.b64encode(p.encode() + RAW_BYTES).decode()
    session = {"id": SID, "name": p, "command": [p, "-c", p], "cwd": p, "client": p, "profile": "full",
               "kind": "user", "tty": True, "pinned": True, "state": p, "status": p, "killed_by": p,
               "age_seconds": 3.5, "use": 1, "waiting": {"approval": 7, "summary": p}}
    approval = {"id": 7, "client": p, "kind": p, "session": SID, "session_name": p, "waiter": p, "age_seconds": 2.0,
                "command": p, "argv": [p, p], "cwd": p, "line": p,
                "permissions": {"sandbox": p, "write": [p], "network": True},
                "reason": p, "rule": p, "justification": p, "risks": [p, p], "prefix_rule": [p]}
    network = {"id": 8, "client": p, "kind": "network", "session": SID, "session_name": p, "age_seconds": 1.0,
               "host": p, "port": 443, "protocol": p, "running": p, "address": p, "reason": p,
               "network_rule_allow": p, "network_rule_deny": p}
    record = {"command": 1, "state": p, "line": p, "by": p, "error": p,
              "counts": {"added": 1, "modified": 2, "deleted": 3, "renamed": 0},
              "lines": {"added": 4, "removed": 5}, "shared_with": [{"session": SID, "command": 2}],
              "risk": [{"path": p, "marks": [p, p], "detail": p}],
              "not_captured": [{"path": p, "reason": p, "size": 9}, {"path": p, "reason": p, "files": 2}]}
    notes = [{"event": "warning", "message": p},
             {"event": "approval_pending", "approval": 7, "message": p}]
    table = {
        "hello": ([], {"protocol": 1, "server": p, "pid": 4242}),
        "ls": (notes, {"sessions": [session], "live": 1, "stored": 1, "max": 64}),
        "new": (notes, {"session": {"id": SID, "name": p}, "warning": p}),
        "exec": (notes + [{"event": "output", "data_b64": b64}], {"text": p, "exit_code": 3, "output": p}),
        "write_stdin": (notes, {"text": p}),
        "screen": ([], {"text": p}),
        "kill": (notes, {"state": p}),
        "pin": ([], {"pinned": True}),
        "rm": ([], {"removed": [SID]}),
        "resize": ([], {}),
        "approvals": ([], {"approvals": [approval, network], "policy": p, "rules_error": p + "\n" + p}),
        "approve": ([], {"answer": p}),
        "deny": ([], {"answer": p}),
        "commands": ([], {"workspace": p, "commands": [record, dict(record, command=2, counts=None, by=None)],
                          "snapshots": {"phase": p, "done": 1, "total": 2, "message": p}}),
        "diff": ([], {"text": p, "text_b64": b64, "record": record}),
        "revert": ([], {"command": 1, "actions": [{"path": p, "action": p}],
                        "skipped": [{"path": p, "reason": p}], "failed": [{"path": p, "reason": p}],
                        # conflicts (then nothing else is said) with the huge text
                        "conflicts": [{"path": p, "reason": p}] if p is HUGE else [],
                        "message": p, "reverted": False, "revert_command": 2}),
    }
    table["records"] = ([], records(p))
    # The supervisor screen's own requests (its [hosts] link): a list whose
    # ids are another machine's or none, events for sessions it has not,
    # a terminal of a size no terminal has.
    table["subscribe"] = ([{"event": "session", "session": dict(session, id=10 ** 8)},
                           {"event": "approval", "approval": dict(approval, id=10 ** 9)},
                           {"event": "approval_done", "approval": -4},
                           {"event": "session_removed", "session": 10 ** 7},
                           {"event": "config", "config": {"path": p, "text": p}},
                           {"event": "rules", "rules_error": p}],
                          {"sessions": [session, dict(session, id=10 ** 8), dict(session, id=p)],
                           "approvals": [approval, network, dict(approval, id=5 * 10 ** 6)], "live": 1, "stored": 1,
                           "max": 64, "config": {"path": p, "text": p, "refused": [p]}, "rules_error": p})
    table["watch"] = ([{"event": "sync", "session": SID, "rows": 24, "cols": 80},
                       {"event": "term", "session": SID, "data_b64": b64},
                       {"event": "resized", "session": SID, "rows": 10 ** 6, "cols": 10 ** 6},
                       {"event": "sync", "session": SID, "rows": -1, "cols": 0},
                       {"event": "bell", "session": SID}], {"session": SID})
    return table.get(cmd, ([], {}))


def record_files(p):
    """A session's record files (log, replay, export under -H) full of p."""
    events = [{"time": "2026-12-06T00:00:00.000Z", "event": "created", "session": SID, "name": p, "command": [p, p],
               "cwd": p, "client": p, "profile": p, "kind": "exec", "tty": True, "cols": 80, "rows": 24,
               "workspace": p},
              {"time": "2026-12-06T00:00:01.000Z", "event": "command_started", "command": 1, "line": p, "cwd": p,
               "by": p},
              {"time": "2026-12-06T00:00:02.000Z", "event": "network", "host": p, "port": 443, "decision": p},
              {"time": "2026-12-06T00:00:03.000Z", "event": "command_ended", "command": 1, "exit_code": 3},
              {"time": "2026-12-06T00:00:04.000Z", "event": "exited", "code": 3, "duration_seconds": 4}]
    cast = [{"version": 2, "width": 80, "height": 24, "timestamp": 1796515395, "command": p, "title": p},
            [0.1, "o", p + "\r\n"], [0.2, "m", p]]
    return {"events.jsonl": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
            "output.cast": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in cast),
            "approvals.jsonl": json.dumps({"event": "approval_requested", "approval": 7, "session": SID,
                                           "command": p}, ensure_ascii=False) + "\n"}


def records(p, req={}):
    """The records command: sessions whose names would lead out of the
    copy (none of them may name a directory there), and files full of p."""
    if "file" not in req:
        # With a glance (the screen's E): ids of no server, and text full of p.
        glance = {"id": SID, "name": p, "client": p, "exited": True, "exit_code": 3, "killed": p}
        glances = [glance, dict(glance, id=10 ** 8), dict(glance, id=-1), dict(glance, id=p), p]
        return {"sessions": [{"name": n, "mtime": 1796515395.5, "glance": g} for n, g in
                             zip(("../../../../tmp/corral-hostile-escape", str(SID) + "/../x", p, "/etc", str(SID)),
                                 glances[1:] + [glance])]}
    data = record_files(p).get(req.get("file"), p).encode()
    return {"data_b64": base64.b64encode(data).decode(), "offset": req.get("offset", 0), "size": len(data)}


def serve(mode):
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        rid, cmd = req.get("id"), req.get("cmd")
        events, fields = replies(cmd, HUGE if mode == "huge" else PAYLOAD)
        if cmd == "records":
            fields = records(HUGE if mode == "huge" else PAYLOAD, req)
            if mode == "lies":  # a size it then exceeds, an offset it was not asked for, not base64
                fields = dict(fields, size=3, offset=req.get("offset", 0) + 5, data_b64="%%%not base64")
        if mode == "ended" and cmd == "subscribe":  # no request: no dialog over the sidebar's ended group
            fields, events = {"sessions": [], "approvals": [], "live": 0, "stored": 0, "max": 64}, []
        if mode == "flood" and cmd == "records" and "file" not in req:
            fields = {"sessions": [{"name": str(i + 1), "mtime": 1796515395.5 - i,
                                    "glance": {"id": i + 1, "name": "e%d" % i, "client": "c"}} for i in range(3000)]}
        if mode == "flood" and cmd == "subscribe":
            # Thousands of sessions and requests: the screen takes what one
            # machine may have, and stays quick.
            many = [{"id": 1000 + i, "name": "s%d" % i, "state": "running", "client": "c"} for i in range(3000)]
            fields = dict(fields, sessions=many,
                          approvals=[{"id": 1 + i, "kind": "exec", "client": "c", "argv": ["x"]} for i in range(3000)])
            events = [{"event": "session", "session": dict(x, id=x["id"] + 50000)} for x in many]
        if mode == "error" or (mode == "error-after-hello" and cmd != "hello"):
            events, fields = [], {"error": {"code": PAYLOAD, "message": PAYLOAD + "\n" + PAYLOAD}}
        elif mode == "error-types" and cmd != "hello":
            events, fields = [], {"error": {"code": 5, "message": [PAYLOAD]}}
        elif mode == "types" and cmd != "hello":
            events = [wrong(e) for e in events] + [{"event": "output", "data_b64": 5}, {"event": 6, "message": 7}]
            fields = {k: wrong(v) for k, v in fields.items()}
        elif mode == "shallow" and cmd != "hello":
            fields = {k: PAYLOAD for k in fields}
        elif mode == "missing" and cmd != "hello":
            events, fields = [{"event": "warning"}, {"event": "output"}, {"event": "approval_pending"}], {}
        for e in events:
            out.write(json.dumps(e).encode() + b"\n")
        if mode == "badjson" and cmd != "hello":
            # Not JSON: a raw ESC and bytes that are not UTF-8 in a string.
            out.write(b'{"id": %d, "ok": true, "name": "\x1b]52;c;YmFk\x07\xff\x9b31m\xe2\x80\xae"}\n' % rid)
        else:
            msg = {"id": rid}
            if "error" not in fields:
                msg["ok"] = True
            msg.update(fields)
            # ensure_ascii=False: DEL, the C1 controls and U+202E raw, as
            # jansson and every JSON writer may send them.
            out.write(json.dumps(msg, ensure_ascii=False).encode() + b"\n")
        out.flush()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--serve":
    serve(os.environ.get("CORRAL_TEST_HOSTILE", "hostile"))
    sys.exit(0)


# ---- the tests ----------------------------------------------------------------

import re  # noqa: E402
import subprocess  # noqa: E402

from harness import CORRAL, TIMEOUT, Tap, World, run_in_pty, run_tests  # noqa: E402
from hostile import COLOURS, terminal_violations  # noqa: E402

t = Tap()
w = World()  # no server of its own: every verb goes to the stand-in
SERVE = "%s %s --serve" % (sys.executable, os.path.abspath(__file__))
HOST = "ssh://me@hostile.example:2222"

# (argv, prints a session's output on stdout, shows a server string)
VERBS = [
    (["ls"], False, True),
    (["ls", "--json"], False, True),
    (["new", "-n", "x"], False, True),
    (["exec", "--", "true"], True, True),
    (["exec", "--raw", "--", "true"], True, True),
    (["send", str(SID), "x"], True, True),
    (["poll", str(SID)], True, False),
    (["screen", str(SID)], True, False),
    (["kill", str(SID)], False, True),
    (["pin", str(SID)], False, False),
    (["rm", str(SID)], False, False),
    (["resize", str(SID), "80x24"], False, False),
    (["approvals"], False, True),
    (["approvals", "--json"], False, True),
    (["approve", "7"], False, True),
    (["deny", "--note", "no", "7"], False, True),
    (["diff", str(SID)], True, True),
    (["diff", "--stat", str(SID)], False, True),
    (["diff", "--name-status", "--color", "always", str(SID)], False, True),
    (["diff", "--list", str(SID)], False, True),
    (["revert", str(SID), "1"], False, True),
    (["revert", "--dry-run", str(SID), "last"], False, True),
    (["log"], False, True),
    (["log", str(SID)], False, True),
    (["log", "--json", str(SID)], False, True),
    (["export", "-o", os.path.join(w.base, "hostile.tar.gz"), "--force", str(SID)], False, False),
]

# The forms PAYLOAD's ESC ] 52 takes when made visible: $'...' escapes,
# a JSON escape, cat -v.
SHOWN = re.compile(rb"\\x1b\]52;c;|\\u001[bB]\]52;c;|\^\[\]52;c;")


def env(mode):
    e = dict(w.env)
    e.update(CORRAL_SSH_COMMAND=SERVE, CORRAL_TEST_HOSTILE=mode, NO_COLOR="")
    e.pop("CORRAL_HOST", None)
    return e


def crashed(rc, err):
    return rc < 0 or rc >= 128 or b"Sanitizer" in err or b"runtime error" in err


def on_pipes(mode, argv):
    p = subprocess.run([CORRAL, "-H", HOST] + argv, env=env(mode), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def check_verb(t, mode, argv, output, shows):
    name = "%s: corral -H %s" % (mode, " ".join(argv))
    rc, out, err = on_pipes(mode, argv)
    t.ok(not crashed(rc, err), name + ": ends without a crash, to pipes", "rc %d\n%r" % (rc, err[-2000:]))
    # A session's output to a pipe is its bytes, as from a local server.
    bad = terminal_violations(err) + ([] if output else terminal_violations(out))
    raw_rlo = "\u202e".encode() in err or (not output and "\u202e".encode() in out)
    t.ok(not bad and not raw_rlo, name + ": nothing on stderr (nor stdout but a session's output) acts on "
         "a terminal", "\n".join(bad[:5]) + ("\nraw U+202E" if raw_rlo else ""))
    if shows and mode in ("hostile", "error", "error-after-hello"):
        t.ok(SHOWN.search(out + err), name + ": the hostile text is shown, made visible", (out + err)[:2000])
    rc, got = run_in_pty([CORRAL, "-H", HOST] + argv, env=env(mode))
    t.ok(not crashed(rc, got), name + ": ends without a crash, on a terminal", "rc %d\n%r" % (rc, got[-2000:]))
    bad = terminal_violations(got, allowed=COLOURS + rb"|\r")
    t.ok(not bad, name + ": nothing it prints on a terminal acts on it", "\n".join(bad[:5]))
    if not output:
        t.ok("\u202e".encode() not in got, name + ": no raw right-to-left override on a terminal")


def make_test(mode):
    def test(t):
        for argv, output, shows in VERBS:
            check_verb(t, mode, argv, output, shows)
    test.__name__ = "test_" + mode.replace("-", "_")
    return test


def test_output_stays_exact(t):
    """A session's output to a pipe is what the server sent, byte for byte
    (the user asked for it; --raw keeps every byte), as from a local
    server; so is a patch (git apply reads it)."""
    rc, out, _ = on_pipes("hostile", ["exec", "--raw", "--", "true"])
    t.eq((rc, out), (3, PAYLOAD.encode() + RAW_BYTES), "exec --raw to a pipe: the output's bytes, its exit status")
    rc, out, _ = on_pipes("hostile", ["screen", str(SID)])
    t.eq(out, PAYLOAD.encode(), "screen to a pipe: the screen's text")
    rc, out, _ = on_pipes("hostile", ["diff", str(SID)])
    t.eq(out, PAYLOAD.encode() + RAW_BYTES, "diff to a pipe: the patch's bytes")


def test_ls_visible(t):
    """corral ls: a name, a client and a command from the other machine
    shown with their escapes, cut to their columns."""
    rc, out, err = on_pipes("hostile", ["ls"])
    rows = out.decode().splitlines()
    t.ok(rc == 0 and len(rows) >= 3 and "\\x1b]52;c" in rows[1] and "$'\\x1b]52;c;" in rows[1],
         "ls: the name and the command made visible", out)
    t.ok("\\u202eevil" in rows[2], "ls: what a session waits for, with its escapes", out)


def test_mcp(t):
    """corral mcp against the stand-in: an agent's call gets an answer, and
    what the bridge says on stderr (a request that waits, a warning) shows
    the server's text made visible."""
    from mcplib import Bridge
    for mode in ("hostile", "types", "missing", "huge"):
        b = Bridge(w, ("-C", "/srv/work"), env=dict(env(mode), CORRAL_HOST=HOST))
        b.initialize()
        r = b.tool("exec_command", {"cmd": "true"})
        t.ok(isinstance(r, dict), "mcp, %s: a call is answered" % mode, r)
        b.close_stdin()
        rc = b.p.wait(TIMEOUT)
        with open(b.err_path, "rb") as f:
            err = f.read()
        t.ok(not crashed(rc, err), "mcp, %s: the bridge ends without a crash" % mode, err[-2000:])
        bad = terminal_violations(err)
        t.ok(not bad and "\u202e".encode() not in err, "mcp, %s: nothing on its stderr acts on a terminal" % mode,
             "\n".join(bad[:5]))
        if mode == "hostile":
            t.ok(SHOWN.search(err), "mcp: the request that waits is said, made visible", err[-2000:])
        b.kill()


def test_records_stay_inside(t):
    """log, replay and export copy what the server sends into a private
    directory: a session name that would lead out of it names nothing, and
    the directory is gone afterwards, whatever the server sent.  (replay
    draws the recording through corral's terminal model, as a local one,
    whose own hostile-recording tests are test_replay's.)"""
    tmp = os.path.join(w.base, "records-tmp")
    os.makedirs(tmp, exist_ok=True)
    for mode in ("hostile", "lies", "types", "missing", "huge"):
        for argv in (["log"], ["log", str(SID)], ["replay", "--speed", "0", str(SID)]):
            p = subprocess.run([CORRAL, "-H", HOST] + argv, env=dict(env(mode), TMPDIR=tmp),
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
            t.ok(not crashed(p.returncode, p.stderr), "%s: corral -H %s ends without a crash" % (mode, " ".join(argv)),
                 p.stderr[-2000:])
    t.ok(not os.path.exists("/tmp/corral-hostile-escape") and not os.path.exists("/etc/events.jsonl"),
         "a listed name with a path in it named nothing outside the copy")
    t.eq(os.listdir(tmp), [], "and every private copy is gone")
    p = subprocess.run([CORRAL, "-H", HOST, "log", str(SID)], env=dict(env("lies"), TMPDIR=tmp),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    t.ok(p.returncode == 1 and b"does not fit" in p.stderr, "a chunk that does not fit what was announced is "
         "refused, saying so", p.stderr[-2000:])


def cleanup(t):
    w.cleanup()


MODES = ["hostile", "huge", "types", "shallow", "missing", "error", "error-after-hello", "error-types", "badjson"]
run_tests(t, [test_output_stays_exact, test_ls_visible] + [make_test(m) for m in MODES] +
          [test_records_stay_inside, test_mcp, cleanup])
