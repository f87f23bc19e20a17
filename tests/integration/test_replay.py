#!/usr/bin/env python3
"""corral replay: a recording played through corral's terminal model ends on
the screen the live session had (its text as corral screen shows it, and
cell by cell, colours and attributes included, against the server's own
model); a hostile recording (clipboard, title, queries, DCS, mode switches,
huge sizes) never gets one of its sequences to the real terminal; a torn
last line plays with a warning; --from starts at a command's marker and says
clearly when there is none; the keys pause, change the speed and jump
between commands, and the terminal is restored after q and after SIGTERM;
an export (.tar.gz) plays; bad input is an error that names the file."""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile

from harness import CORRAL, Tap, World, descendants, run_tests, wait_until

sys.path.insert(0, os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR") or
                                os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), "tui"))
from tuilib import Term  # noqa: E402

w = World()
w.start_server()
c = w.connect()
TMP = tempfile.mkdtemp(prefix="replay", dir=w.base)


def write_cast(name, events, width=40, height=8, raw_tail=None):
    """A recording: events are (time, code, data); raw_tail is appended as
    it is (a torn line)."""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(json.dumps({"version": 2, "width": width, "height": height}) + "\n")
        for e in events:
            f.write(json.dumps(list(e)) + "\n")
        if raw_tail:
            f.write(raw_tail)
    return path


def replay(*args):
    return w.corral("replay", *args)


def term_cells(term, rows):
    return [[(x["ch"], x["fg"], x["bg"], tuple(x["attrs"]), x["width"]) for x in term.cells(r)] for r in range(rows)]


# ---- a live session and its replay --------------------------------------------------

SCRIPT = r"""
printf '\033[2J\033[H'
i=0; while [ $i -lt 30 ]; do i=$((i+1)); printf 'scroll line %d, long enough to wrap at the edge of a fifty column terminal\n' $i; done
printf '\033[1;31mred bold\033[0m plain \033[4munder\033[0m \033[2mdim\033[0m\n'
printf '\033[38;5;200mindexed\033[0m \033[38;2;10;20;30;48;2;200;100;50mrgb\033[0m \033[7mrev\033[0m \033[93mbright\033[0m\n'
printf '\033[3;20H\033[42mgreen bg\033[0m\033]0;a title\007 wide: \346\274\242\345\255\227 e\314\201\n'
printf 'part1-done\n'; read x
printf '\033[5;5Hafter resize \033[1mbold\033[0m\033[K\n'; sleep 0.2; printf 'end of session\n'
"""


def live_session():
    r = c.call({"cmd": "new", "argv": ["sh", "-c", SCRIPT], "cwd": w.ws, "name": "live", "cols": 50, "rows": 12})
    sid = r["session"]["id"]
    screen = lambda: c.call({"cmd": "screen", "session": sid})["text"]  # noqa: E731
    wait_until(lambda: "part1-done" in screen())
    c.call({"cmd": "resize", "session": sid, "cols": 60, "rows": 14})
    r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "go\r", "yield_time_ms": 5000})
    while r.get("exit_code") is None:
        r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "", "yield_time_ms": 5000})
    return sid


SID = live_session()


def server_model_cells(sid):
    """The server's model of the session, cell by cell: the watch's sync
    bytes (which recreate it) drawn by vtdrive's model."""
    c.events = []
    c.call({"cmd": "watch", "session": sid, "history": 0})
    c.call({"cmd": "unwatch", "session": sid})
    sync = [e for e in c.events if e.get("event") == "sync"][-1]
    data = b"".join(base64.b64decode(e["data_b64"]) for e in c.events if e.get("event") == "term")
    path = os.path.join(TMP, "sync.bin")
    with open(path, "wb") as f:
        f.write(data)
    with Term(["sh", "-c", "stty -opost; cat '%s'" % path], rows=sync["rows"], cols=sync["cols"]) as term:
        term.exit_status()
        return sync["rows"], sync["cols"], term_cells(term, sync["rows"])


def test_final_screen_is_the_live_one(t):
    live = w.corral("screen", str(SID))
    r = replay("--speed", "0", str(SID))
    t.eq(r.returncode, 0, "corral replay --speed 0 SESSION plays the session's recording", r.stderr)
    t.ok("end of session" in live.stdout and "after resize" in live.stdout, "the live screen has the end",
         live.stdout)
    t.eq(r.stdout, live.stdout, "to a pipe it prints the screen the live session ended with (as corral screen)")
    r = replay(str(SID))
    t.eq(r.stdout, live.stdout, "without --speed too (a pipe gets the final screen)", r.stderr)

    rows, cols, want = server_model_cells(SID)
    t.eq((rows, cols), (14, 60), "the server's model has the size after the resize")
    with Term([CORRAL, "replay", "--speed", "0", str(SID)], rows=rows + 1, cols=cols, env=w.env) as term:
        t.eq(term.exit_status(), 0, "on a terminal, --speed 0 draws the final screen and exits")
        got = term_cells(term, rows)
    diff = [(r, col, want[r][col], got[r][col]) for r in range(rows) for col in range(cols)
            if want[r][col] != got[r][col]]
    t.eq(diff[:5], [], "cell by cell (text, colours, attributes, widths) the replay is the server's model")
    t.ok(any(x[1].startswith("#") for row in got for x in row) and any("bold" in x[3] for row in got for x in row),
         "and those cells have RGB colours and attributes (the comparison is not of blank screens)")

    with Term([CORRAL, "replay", "--idle-limit", "0.05", str(SID)], rows=rows + 1, cols=cols, env=w.env) as term:
        t.eq(term.exit_status(), 0, "played in time, with only the changed rows drawn each frame, it ends by itself")
        got = term_cells(term, rows)
    t.eq(got == want, True, "and its last frame is the server's model too",
         [(r, col) for r in range(rows) for col in range(cols) if want[r][col] != got[r][col]][:5])


# ---- a hostile recording -------------------------------------------------------------

HOSTILE = [
    (0.01, "o", "\x1b]52;c;ZXZpbA==\x07visible-one\r\n"),
    (0.02, "o", "\x1b]0;EVIL TITLE\x07\x1b]2;evil2\x1b\\visible-two\r\n"),
    (0.03, "o", "\x1bP$qm\x1b\\\x1bP1;2|evil\x1b\\\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\\x1b]8;;http://x\x1b\\"),
    (0.04, "o", "\x1b[?1000h\x1b[?1003h\x1b[?1006h\x1b[?2004h\x1b[21t\x1b[c\x1b[>c\x1b[6n\x1b[5n\x1b[18t\x1b[14t"),
    (0.05, "o", "\x1b[?1049h\x1b[?47h\x1b[?5h\x1b[?3h\x1b[8;100;300t\x1b[?1l\x1b=\x05\x1bZ\x1b[0c"),
    (0.06, "o", "\x1b[?1049l\x1b[31mvisible-three\x1b[0m\r\n\x1b[?25l"),
    (0.07, "r", "99999x99999"),
    (0.08, "o", "\x1b]52;p;?\x07\x1b]10;?\x07\x1b]4;1;?\x07\x1bP+q544e\x1b\\\x1b[?u\x1b[>0q after-huge\r\n"),
]
# What replay itself writes: cursor position, erase, SGR, cursor visibility,
# synchronized update.  Nothing else may reach the terminal.
ALLOWED_CSI_FINALS = set("HJKm")


def sequences(data):
    """Every escape sequence and control character in data, in order."""
    out, i = [], 0
    while i < len(data):
        b = data[i]
        if b == 0x1b:
            if i + 1 < len(data) and data[i + 1] == ord("["):
                j = i + 2
                while j < len(data) and not (0x40 <= data[j] <= 0x7e):
                    j += 1
                out.append(data[i:j + 1])
                i = j + 1
            else:
                out.append(data[i:i + 2])
                i += 2
        else:
            if (b < 0x20 and b not in (0x0d, 0x0a)) or b == 0x7f:
                out.append(bytes([b]))
            i += 1
    # C1 controls, as a UTF-8 terminal reads them.
    out += [ch.encode() for ch in data.decode("utf-8", "replace") if 0x80 <= ord(ch) <= 0x9f]
    return out


def bad_sequences(data):
    bad = []
    for s in sequences(data):
        if s.startswith(b"\x1b[?"):
            if s[-1:] in (b"h", b"l") and s[3:-1] in (b"25", b"2026"):
                continue
        elif s.startswith(b"\x1b[") and chr(s[-1]) in ALLOWED_CSI_FINALS and all(
                ch in b"0123456789;" for ch in s[2:-1]):
            continue
        bad.append(s)
    return bad


def test_hostile_recording_cannot_reach_the_terminal(t):
    path = write_cast("hostile.cast", HOSTILE, width=40, height=8)
    for args, what in ((["--speed", "0"], "--speed 0"), (["--idle-limit", "0.01"], "played in time")):
        with Term([CORRAL, "replay"] + args + [path], rows=12, cols=60, env=w.env) as term:
            status = term.exit_status()
            data = term.bytes_since(0)
            info = term.info()
            screen = info["text"]
        t.eq(status, 0, "%s: a hostile recording plays to its end" % what)
        t.ok("visible-one" in screen and "visible-two" in screen and "visible-three" in screen,
             "%s: its text is shown" % what, screen)
        t.eq(bad_sequences(data), [], "%s: no sequence but corral's own (CUP, ED, EL, SGR, ?25, ?2026) and no "
             "control byte reaches the terminal" % what)
        for needle in (b"]52", b"EVIL", b"evil", b"\x1bP", b"1000h", b"1049h", b"21t", b"apc", b"\x1b]"):
            t.ok(needle not in data, "%s: %r is never written" % (what, needle))
        t.eq(info["title"], "", "%s: the terminal's title is untouched" % what)
        t.eq([m for m in info["modes"] if m.startswith("mouse") or m in ("alt_screen", "bracketed_paste")], [],
             "%s: no mouse, alternate screen or paste mode was switched on" % what)
    r = replay("--speed", "0", path)
    t.ok(r.returncode == 0 and "warning" in r.stderr and "99999x99999" in r.stderr,
         "a huge size is cut to the model's limits with a warning", r.stderr)


# ---- torn, bad and odd input ---------------------------------------------------------

def test_torn_last_line(t):
    path = write_cast("torn.cast", [(0.1, "o", "first line\r\n"), (0.2, "o", "second line\r\n")],
                      raw_tail='[0.3, "o", "third li')
    r = replay("--speed", "0", path)
    t.eq(r.returncode, 0, "a recording with a torn last line plays", r.stderr)
    t.ok(r.stdout.startswith("first line\nsecond line\n"), "up to the last whole event", r.stdout)
    t.ok("warning" in r.stderr and "%s:4" % path in r.stderr and "incomplete" in r.stderr,
         "with a warning naming the file and the line", r.stderr)
    t.eq(r.stderr.count("\n"), 1, "one warning", r.stderr)


def test_bad_input_names_the_file(t):
    cases = [
        ("notjson.cast", "this is not json\n", "is not an asciicast recording"),
        ("v1.cast", json.dumps({"version": 1, "width": 80, "height": 24, "stdout": []}) + "\n", "version 1"),
        ("empty.cast", "", "is empty"),
        ("badline.cast", json.dumps({"version": 2, "width": 80, "height": 24}) + '\n[0.1, "o", "a"]\ngarbage\n'
         '[0.2, "o", "b"]\n', "badline.cast:3: not JSON"),
        ("baddata.cast", json.dumps({"version": 2, "width": 80, "height": 24}) + '\n[0.1, "o", 42]\n',
         "baddata.cast:2: the data"),
    ]
    for name, text, msg in cases:
        path = os.path.join(TMP, name)
        with open(path, "w") as f:
            f.write(text)
        r = replay("--speed", "0", path)
        t.ok(r.returncode == 1 and msg in r.stderr and path in r.stderr,
             "%s: exit 1 with a message naming the file (%s)" % (name, msg), (r.returncode, r.stderr))
    r = replay(os.path.join(TMP, "missing.cast"))
    t.ok(r.returncode == 1 and "missing.cast" in r.stderr and "No such file" in r.stderr, "a missing file is named",
         r.stderr)
    r = replay(TMP)
    t.ok(r.returncode == 1 and "is a directory" in r.stderr, "a directory is refused", r.stderr)
    r = replay("987654")
    t.ok(r.returncode == 1 and "no recording of session 987654" in r.stderr and "corral ls" in r.stderr,
         "a session without a recording is named", r.stderr)
    r = replay("--speed", "fast", "x.cast")
    t.ok(r.returncode == 2 and "--speed" in r.stderr and "usage: corral replay" in r.stderr,
         "a bad --speed is a usage error", r.stderr)


def test_ended_session_without_a_server(t):
    w2 = World()
    w2.start_server()
    c2 = w2.connect()
    r = c2.call({"cmd": "new", "argv": ["sh", "-c", "echo recorded-before-stop"], "cwd": w2.ws, "cols": 40,
                 "rows": 5})
    sid = r["session"]["id"]
    r = c2.call({"cmd": "write_stdin", "session_id": sid, "chars": "", "yield_time_ms": 5000})
    c2.close()
    w2.stop()
    r = w2.corral("replay", "--speed", "0", str(sid))
    t.ok(r.returncode == 0 and "recorded-before-stop" in r.stdout,
         "an ended session's recording plays with no server running", r.stdout + r.stderr)
    t.ok(not os.path.exists(w2.socket_path), "and replay started no server")
    w2.cleanup()


# ---- commands: --from and the keys ---------------------------------------------------

COMMANDS = [
    (0.1, "o", "\x1b[2J\x1b[Hbefore-any\r\n"),
    (0.2, "m", "cmd 1: echo ONE"),
    (0.3, "o", "\x1b[2J\x1b[Hscreen-one\r\n"),
    (0.4, "m", "cmd 1 end: exit 0"),
    (100, "m", "cmd 2: echo TWO"),
    (100.1, "o", "\x1b[2J\x1b[Hscreen-two\r\n"),
    (100.2, "m", "cmd 2 end: exit 0"),
    (200, "m", "cmd 3: echo THREE"),
    (200.1, "o", "\x1b[2J\x1b[Hscreen-three\r\n"),
    (300, "o", "the-end\r\n"),
]


def test_from_command(t):
    path = write_cast("cmds.cast", COMMANDS, width=30, height=5)
    with Term([CORRAL, "replay", "--idle-limit", "1000", "--from", "2", path], rows=8, cols=70, env=w.env) as term:
        term.wait("screen-two")
        screen = term.wait("cmd 2 of 3")
        data = term.bytes_since(0)
        term.keys("q")
        t.eq(term.exit_status(), 0, "q quits")
    t.ok(b"before-any" not in data and b"screen-one" in data,
         "--from 2 starts with the screen as it was at command 2's marker (nothing before it is drawn)", data[-400:])
    t.ok("cmd 2 of 3" in screen, "the status line says which command plays", screen)
    with Term([CORRAL, "replay", "--idle-limit", "1000", path], rows=8, cols=70, env=w.env) as term:
        term.wait("screen-one")
        data = term.bytes_since(0)
        term.keys("q")
        term.exit_status()
    t.ok(b"before-any" in data, "without --from the same recording draws what came before (the contrast)")
    r = replay("--from", "7", path)
    t.ok(r.returncode == 1 and "has no marker for command 7" in r.stderr and "marks 3 commands (1 to 3)" in r.stderr
         and path in r.stderr, "--from a missing command says so, naming the file and the commands it marks",
         r.stderr)
    plain = write_cast("plain.cast", [(0.1, "o", "no markers here\r\n")])
    r = replay("--from", "1", plain)
    t.ok(r.returncode == 1 and "marks no commands" in r.stderr, "and says when a recording marks none", r.stderr)
    r = replay("--from", "2", "--speed", "0", path)
    t.ok(r.returncode == 0 and r.stdout.startswith("screen-three\nthe-end\n"),
         "--from with --speed 0 prints the final screen", r.stdout)


def test_keys(t):
    path = write_cast("cmds.cast", COMMANDS, width=30, height=5)
    with Term([CORRAL, "replay", "--idle-limit", "1000", path], rows=8, cols=80, env=w.env) as term:
        term.wait("screen-one")
        # Paused, play time stands still: what each key does depends on no
        # clock.
        term.keys("Space")
        term.wait("paused")
        t.ok(True, "space pauses (the status line says so)")
        term.keys("n")
        screen = term.wait("cmd 2 of 3")
        t.ok("screen-one" in screen and "paused" in screen,
             "n jumps to the next command's start (the screen as it was there), still paused", screen)
        term.keys("n")
        t.ok("screen-two" in term.wait("cmd 3 of 3"), "n again: the third command's start")
        term.keys("p")
        t.ok("screen-one" in term.wait("cmd 2 of 3"), "p right at a command's start goes to the one before")
        term.keys("p", "p")
        screen = term.wait_absent("cmd ")
        t.ok("before-any" not in screen and "3 commands" in screen,
             "p before the first command goes back to the start", screen)
        term.keys("+")
        term.wait("2x")
        term.keys("-", "-")
        term.wait("1/2x")
        t.ok(True, "+ and - double and halve the speed")
        term.keys("n", "n", "Space")
        term.wait("screen-two")
        t.ok("playing" in term.screen(), "space plays on from there")
        term.keys("q")
        t.eq(term.exit_status(), 0, "q quits")
        screen = term.screen()
    t.ok("playing" not in screen and "space pause" not in screen, "the status line is erased on the way out", screen)


def stty_after(term):
    out = term.wait_regex("^STTY .*$")
    line = [l for l in out.split("\n") if l.startswith("STTY")][0]
    return line.split()


def test_terminal_restored(t):
    path = write_cast("cmds.cast", COMMANDS, width=30, height=5)
    cmd = "%s replay --idle-limit 1000 '%s'; echo \"STATUS $?\"; echo STTY $(stty -a | tr ' ;' '\\n\\n' | " \
          "grep -x -e '-\\?icanon' -e '-\\?echo' -e '-\\?isig' | tr '\\n' ' ')" % (CORRAL, path)
    with Term(["sh", "-c", cmd], rows=10, cols=80, env=w.env) as term:
        term.wait("cmd 1 of 3")
        term.keys("q")
        words = stty_after(term)
        t.ok("icanon" in words and "echo" in words and "isig" in words,
             "after q the terminal is back in its mode (icanon echo isig)", words)
    with Term(["sh", "-c", cmd], rows=10, cols=80, env=w.env) as term:
        term.wait("cmd 1 of 3")
        kids = [p for p in descendants(term.pid)]
        replays = [p for p in kids if open("/proc/%d/cmdline" % p, "rb").read().split(b"\0")[1:2] == [b"replay"]]
        t.eq(len(replays), 1, "the replay is found")
        os.kill(replays[0], signal.SIGTERM)
        screen = term.wait("STATUS")
        words = stty_after(term)
        t.ok("STATUS 143" in screen, "SIGTERM ends it as SIGTERM does (status 143)", screen)
        t.ok("icanon" in words and "echo" in words and "isig" in words,
             "and the terminal is restored on the way out", words)


# ---- exports -------------------------------------------------------------------------

def test_export_plays(t):
    cast = write_cast("exp.cast", [(0.1, "o", "\x1b[32mexported\x1b[0m screen\r\n")])
    want = replay("--speed", "0", cast).stdout
    top = os.path.join(TMP, "top.tar.gz")
    with tarfile.open(top, "w:gz") as tf:
        tf.add(cast, arcname="output.cast")
        tf.add(cast, arcname="SUMMARY.md")
    down = os.path.join(TMP, "down.tar.gz")
    with tarfile.open(down, "w:gz") as tf:
        tf.add(cast, arcname="corral-session-12/output.cast")
        tf.add(cast, arcname="corral-session-12/events.jsonl")
    for path, what in ((top, "at its top"), (down, "one directory down")):
        r = replay("--speed", "0", path)
        t.ok(r.returncode == 0 and r.stdout == want and "exported screen" in r.stdout,
             "an export with output.cast %s plays" % what, r.stdout + r.stderr)
    with Term([CORRAL, "replay", "--speed", "0", down], rows=6, cols=40, env=w.env) as term:
        t.eq(term.exit_status(), 0, "and on a terminal")
        t.ok("exported screen" in term.screen(), "drawn there", term.screen())
    two = os.path.join(TMP, "two.tar.gz")
    with tarfile.open(two, "w:gz") as tf:
        tf.add(cast, arcname="a/output.cast")
        tf.add(cast, arcname="b/output.cast")
    none = os.path.join(TMP, "none.tar.gz")
    with tarfile.open(none, "w:gz") as tf:
        tf.add(cast, arcname="x/y/output.cast")
    notgz = os.path.join(TMP, "notgz.tar.gz")
    with open(notgz, "w") as f:
        f.write("plain text\n")
    dash = os.path.join(TMP, "dash.tar.gz")
    with tarfile.open(dash, "w:gz") as tf:
        tf.add(cast, arcname="--to-command=mkdir -p pwned/output.cast")
    for path, msg in ((two, "holds 2 recordings"), (none, "holds no output.cast"),
                      (notgz, "is not a readable .tar.gz archive"), (os.path.join(TMP, "gone.tar.gz"), "No such")):
        r = replay("--speed", "0", path)
        t.ok(r.returncode == 1 and msg in r.stderr and path in r.stderr, "%s: %s" % (os.path.basename(path), msg),
             r.stderr)
    r = subprocess.run([CORRAL, "replay", "--speed", "0", dash], cwd=TMP, env=w.env, capture_output=True, text=True)
    t.ok(not os.path.exists(os.path.join(TMP, "pwned")), "a member named like a tar option is never an option",
         r.stdout + r.stderr)
    t.ok(r.returncode == 0 and "exported screen" in r.stdout, "but the member it is", r.stdout + r.stderr)
    colon = os.path.join(TMP, "host:export.tar.gz")
    shutil.copy(top, colon)
    r = subprocess.run([CORRAL, "replay", "--speed", "0", "host:export.tar.gz"], cwd=TMP, env=w.env,
                       capture_output=True, text=True, timeout=60)
    t.ok(r.returncode == 0 and "exported screen" in r.stdout,
         "an export named HOST:FILE is a local file, not a remote archive tar would connect to", r.stdout + r.stderr)


run_tests(Tap(), [test_final_screen_is_the_live_one, test_hostile_recording_cannot_reach_the_terminal,
                  test_torn_last_line, test_bad_input_names_the_file, test_ended_session_without_a_server,
                  test_from_command, test_keys, test_terminal_restored, test_export_plays])
