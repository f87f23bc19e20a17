"""A corpus of hostile files for corral's readers: recordings, exports,
session logs (events.jsonl, approvals.jsonl) and rules files whose text is
made to act on the terminal of whoever reads them (window title, OSC 52
clipboard writes, conceal, device queries, the alternate screen, C1
controls as raw bytes and as UTF-8, DEL, BEL, backspace, carriage return),
in every place a reader could quote: event data, header fields, lines that
are not JSON (a parser's "near '...'"), names, notes, reasons, paths.

write_corpus(dest, state) writes the files and returns where they are;
terminal_violations(data) says which bytes of what a verb printed would act
on a terminal.  Generated rather than kept as files, so each hostile byte is
spelled out here."""
import io
import json
import os
import re
import tarfile

# What a session would print to take over its reviewer's terminal.  ESC,
# BEL, BS, CR and SO are escaped by JSON writers; DEL and the C1 controls
# (U+0080-U+009F) are not (JSON allows them raw), so a JSON file carries
# them as they are.
PAYLOAD = ("\x1b]0;HOSTILE-TITLE\x07"            # window title
           "\x1b]52;c;aG9zdGlsZQ==\x07"          # clipboard write
           "\x1b[8mconcealed\x1b[0m"             # hidden text
           "\x1bP$qm\x1b\\"                      # DCS query
           "\x1b[6n\x1b[?1049h\x1b[2J"           # cursor report, alternate screen, clear
           "\x9b31m\x9d0;C1-TITLE\x9c\x85"       # C1: CSI, OSC, ST, NEL
           "\x7f\x07\x08\r\x0e"                  # DEL, BEL, BS, CR, SO
           "\u202eevil")                         # right-to-left override

# Raw bytes for lines that are not JSON: what a parser's message quotes.
RAW_LINES = [b'[0.2, "o", "x"] \x1b]0;NEAR-TITLE\x07',
             b'[0.2, "o", "\x1b]0;IN-STRING\x07"]',
             b'[0.2, \x9b31m',
             b'[0.2, "o", "x"]\xc2\x9b31m',
             b'[1,\x7f]']

SID = "4242"          # a recorded session: every text field hostile
OLD_SID = "4243.1"    # an older session under a reused id: its log broken


def _json(obj):
    """One JSON line with the C1 controls and DEL raw, as jansson writes them."""
    return json.dumps(obj, ensure_ascii=False).encode()


def _cast(events, header=None, tail=b""):
    h = {"version": 2, "width": 60, "height": 12, "title": PAYLOAD, "command": PAYLOAD,
         "env": {"TERM": PAYLOAD}}
    if header:
        h.update(header)
    out = _json(h) + b"\n"
    for e in events:
        out += e if isinstance(e, bytes) else _json(list(e))
        out += b"\n"
    return out + tail


def casts():
    """name -> bytes of each hostile recording."""
    out_events = [(0.01, "o", "screen " + PAYLOAD + "\r\n"), (0.02, "m", "cmd 1: " + PAYLOAD),
                  (0.03, "o", PAYLOAD), (0.04, "i", PAYLOAD), (0.05, "m", "cmd 1 end: exit 0"),
                  (0.06, PAYLOAD, PAYLOAD), (0.07, "m", PAYLOAD)]
    # More resizes that are not COLSxROWS than the reader warns about one
    # by one, each quoting its data.
    resizes = [(0.1 + i / 1000, "r", "%d%s" % (i, PAYLOAD)) for i in range(40)]
    c = {
        "resize.cast": _cast(out_events + resizes + [(0.2, "o", "end\r\n")]),
        "header.cast": b'{"version": 2, "width": 60, "height": 12, "title": "\x1b]0;HEADER\x07"}\n',
        "header-c1.cast": b'\x9b31m\xc2\x9d0;HEADER\xc2\x9c\n',
        "torn.cast": _cast(out_events, tail=b'[0.3, "o", "\x1b]0;TORN\x07'),
        "other-data.cast": _cast([b'[0.1, "o", {"x": "\x1b]0;T\x07"}]', (0.2, "o", "x")]),
        "wide.cast": _cast([(0.1, "r", "99999999x99999999"), (0.2, "o", PAYLOAD)], {"width": 99999999}),
    }
    for i, line in enumerate(RAW_LINES):
        c["near-%d.cast" % i] = _cast([(0.1, "o", "x"), line, (0.3, "o", "y")])
    return c


def _tar(members):
    """A .tar.gz of name -> bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def exports(cast_files):
    """name -> bytes of each hostile export."""
    return {
        "export.tar.gz": _tar({"corral-1/output.cast": cast_files["resize.cast"],
                               "corral-1/events.jsonl": b""}),
        "export-near.tar.gz": _tar({"corral-1/output.cast": cast_files["near-0.cast"]}),
        # Only names that are hostile: none is output.cast as tar lists it.
        "export-names.tar.gz": _tar({"corral-\x1b]0;NAME\x07/output.cast": cast_files["resize.cast"],
                                     "corral-\u009b31m/output.cast": cast_files["resize.cast"],
                                     "\x1b]0;a\x07/output.cast": b"",
                                     "\x1b]0;b\x07/output.cast": b""}),
        "export-broken.tar.gz": b"\x1f\x8b" + PAYLOAD.encode() * 3,
    }


T0 = "2026-01-02T03:04:05.000Z"


def _t(sec):
    return "2026-01-02T03:04:%06.3fZ" % (5 + sec)


def events():
    """events.jsonl of session SID: every field a reader shows is hostile."""
    P = PAYLOAD
    ev = [
        {"time": T0, "event": "created", "session": int(SID), "name": P, "command": ["sh", "-c", P], "cwd": P,
         "client": P, "profile": P, "kind": "exec", "tty": True, "cols": 80, "rows": 24, "pid": 1, "workspace": P},
        {"time": _t(0.1), "event": "approved", "approval": 7, "answer": "once"},
        {"time": _t(0.2), "event": "command_started", "command": 1, "line": P, "cwd": P + "-elsewhere"},
        {"time": _t(0.3), "event": "command_ended", "command": 1, "exit_code": 3, "duration_seconds": 0.1},
        {"time": _t(0.4), "event": "changes", "command": 1, "line": P, "workspace": P, "started": _t(0.2),
         "ended": _t(0.3), "exit_code": 3, "before": "0" * 40, "after": "1" * 40, "attribution": P,
         "counts": {"added": 1, "modified": 0, "deleted": 0, "renamed": 0, "typechanged": 0},
         "lines": {"added": 1, "removed": 0}, "risk": [{"path": P, "marks": [P], "detail": P}],
         "not_captured": [{"path": P, "reason": P, "size": 5}],
         "quarantined": [{"path": P, "moved_to": P, "sha256": "0" * 64, "runs": P + "\n" + P, "replaced_by": P}],
         "quarantine_errors": [P]},
        {"time": _t(0.5), "event": "command_started", "command": 2, "line": P, "cwd": P},
        {"time": _t(0.6), "event": "command_ended", "command": 2, "duration_seconds": 0.1},
        {"time": _t(0.7), "event": "changes", "command": 2, "line": P, "error": P},
        {"time": _t(0.8), "event": "approval_requested", "approval": 9, "kind": P, "argv": [P, P], "line": P,
         "command": P, "cwd": P, "justification": P},
        {"time": _t(0.9), "event": "approval_decided", "approval": 9, "answer": "deny", "by": P, "key": P,
         "note": P},
        {"time": _t(1.0), "event": "network", "listener": "http", "host": P, "port": 443, "protocol": P,
         "method": P, "decision": "deny", "reason": P, "address": P, "status": 403, "bytes_to_server": 1,
         "bytes_to_client": 2, "duration_ms": 3, "close": P, "error": P, "message": P},
        {"time": _t(1.1), "event": "sandbox_denied", "line": P, "path": P, "advice": P},
        {"time": _t(1.2), "event": "command_refused", "line": P, "reason": P},
        {"time": _t(1.3), "event": "escalation_refused", "argv": [P], "reason": P},
        {"time": _t(1.4), "event": "escalated", "argv": [P, P], "cwd": P, "profile": P, "approval": 8, "pid": 2},
        {"time": _t(1.5), "event": "escalation_ended", "approval": 8, "status": 256},
        {"time": _t(1.6), "event": "sandbox_warning", "message": P},
        {"time": _t(1.7), "event": "sandbox_failed", "message": P},
        {"time": _t(1.8), "event": P, P: P, "nested": {P: [P]}},
        {"time": _t(1.9), "event": "resized", "cols": 100, "rows": 30},
        {"time": _t(2.0), "event": "killed", "reason": P},
        {"time": _t(2.1), "event": "exited", "code": 137, "signal": P, "duration_seconds": 2.1},
    ]
    data = b"".join(_json(e) + b"\n" for e in ev)
    # Lines that are not events: raw controls, invalid UTF-8, a torn end.
    data += b"".join(line + b"\n" for line in RAW_LINES)
    data += b'{"time": "' + T0.encode() + b'", "event": "x", "v": "\x9b\x1b]0;BAD-UTF8\x07"}\n'
    return data + b'{"time": "' + T0.encode() + b'", "event": "exited", "signal": "\x1b]0;TORN\x07'


def old_events():
    """An older session's log: its first lines are not JSON, then one event."""
    return (b"".join(line + b"\n" for line in RAW_LINES * 8) +
            _json({"time": T0, "event": "created", "session": 4243, "name": PAYLOAD, "command": [PAYLOAD]}) + b"\n")


def approvals():
    """approvals.jsonl records about SID's approvals 7 and 9."""
    P = PAYLOAD
    req = {"kind": P, "argv": [P], "line": P, "command": P, "cwd": P, "justification": P, "session": int(SID)}
    recs = [
        dict({"time": "2026-01-02T03:04:04.000Z", "event": "approval_requested", "approval": 7}, **req),
        {"time": "2026-01-02T03:04:04.500Z", "event": "approval_decided", "approval": 7, "answer": "once",
         "by": P, "key": P, "note": P},
        dict({"time": _t(0.8), "event": "approval_requested", "approval": 9}, **req),
        {"time": _t(0.9), "event": "approval_decided", "approval": 9, "answer": "deny", "by": P, "key": P,
         "note": P},
    ]
    return b"".join(_json(r) + b"\n" for r in recs) + b"\x1b]0;APPROVALS\x07\xc2\x9b\n"


def rules():
    """name -> bytes of rules files that are hostile: errors quoting the
    file's text, and a valid file whose justification is hostile."""
    return {
        "10-string.rules": b'prefix_rule(pattern = ["git"] + "\x1b]0;RULES\x07\xc2\x9b31m\x7f\n',
        "20-decision.rules": b'prefix_rule(pattern=["x"], decision="\xc2\x9b31m\x1b]0;DECISION\x07")\n',
        "30-token.rules": b'prefix_rule(pattern=["x"]) \xc2\x9d0;TOKEN\xc2\x9c \x9b\n',
        "40-host.rules": b'network_rule(host="\xc2\x9b31m.example.com/\x1b]0;HOST\x07", decision="allow")\n',
        "50-valid.rules": (b'prefix_rule(pattern=["hostile-cmd"], decision="forbidden", justification='
                           b'"\\x1b]0;JUSTIFICATION\\x07\\x9b31m \xc2\x9d0;T\xc2\x9c \x7f \\r\\x08")\n'),
        "60-ask.rules": b'prefix_rule(pattern=["echo", "hostile-ask"], decision="prompt")\n',
        "\x1b]0;FILENAME\x07\x9b.rules": b'prefix_rule(pattern=["x"], decision=)\n',
    }


def write_corpus(dest, state):
    """The corpus under dest (files given by path) and state (corral's
    state directory: session SID and OLD_SID as recorded sessions, with
    their output.cast, and approvals.jsonl).  Returns a dict of paths."""
    os.makedirs(dest, exist_ok=True)
    paths = {}
    c = casts()
    for name, data in list(c.items()) + list(exports(c).items()):
        p = os.path.join(dest, name)
        with open(p, "wb") as f:
            f.write(data)
        paths[name] = p
    rdir = os.path.join(dest, "rules")
    os.makedirs(rdir, exist_ok=True)
    paths["rules"] = []
    for name, data in rules().items():
        p = os.path.join(rdir, name)
        with open(p.encode(), "wb") as f:
            f.write(data)
        paths["rules"].append(p)
    sessions = os.path.join(state, "corral", "sessions")
    for sid, ev in ((SID, events()), (OLD_SID, old_events())):
        d = os.path.join(sessions, sid)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "events.jsonl"), "wb") as f:
            f.write(ev)
        with open(os.path.join(d, "output.cast"), "wb") as f:
            f.write(c["resize.cast"] if sid == SID else c["near-2.cast"])
    with open(os.path.join(state, "corral", "approvals.jsonl"), "ab") as f:
        f.write(approvals())
    paths["session_dir"] = os.path.join(sessions, SID)
    return paths


# ---- the rule ------------------------------------------------------------------------------

def terminal_violations(data, allowed=None):
    """Where data (bytes a verb printed) has what a terminal would act on:
    a byte below 0x20 other than newline and tab, DEL, a C1 control (a raw
    byte 0x80-0x9f, or U+0080-U+009F in UTF-8), or any byte that is not
    UTF-8.  allowed: a regex (bytes) of corral's own sequences, removed
    first (the colours of a table, replay's drawing).  Returns a list of
    short descriptions, empty when data keeps the rule."""
    if allowed is not None:
        data = re.sub(allowed, b"", data)
    text = data.decode("utf-8", "surrogateescape")
    bad = []
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch not in "\n\t") or o == 0x7f or 0x80 <= o < 0xa0 or 0xdc80 <= o <= 0xdcff:
            bad.append("%r at %d in ...%r..." % (ch, i, text[max(0, i - 30):i + 30]))
    return bad


# corral's own sequences: the colours of corral log and corral diff on a
# terminal (exactly the SGRs they write) ...
COLOURS = rb"\x1b\[(?:|0|1|2|3[1-6]|1;31)m"
# ... and replay's drawing (the model's SGRs, cursor moves, erases, the
# cursor and synchronized-output modes, and the line it ends on).
DRAWING = rb"\x1b\[[0-9;:]*m|\x1b\[[0-9]*(?:;[0-9]+)?[HJK]|\x1b\[\?(?:25|2026)[hl]|\r\n"

