#!/usr/bin/env python3
"""Nothing a session wrote reaches its reviewer's terminal as a control.
Every verb that reads a recording, an export, a session's log, a rules file
or a session's workspace (replay, log, export, git-restore, diff and
revert, ls, policy check, approvals, doctor) runs over a hostile corpus
(hostile.py: window titles, clipboard writes, conceal, queries, C1
controls raw and in UTF-8, DEL, BEL, backspace, carriage return, in every
field and in lines that are not JSON), once to a pipe and once on a
terminal (its stdout and its stderr each a PTY): no byte below 0x20 other
than newline and tab, no DEL, no C1, no ESC and nothing that is not UTF-8
is written but corral's own colours and drawing.  The one exception is corral diff's patch to a pipe, whose
lines of content are the files' bytes for git apply (its headers and its
stderr keep the rule; on a terminal the whole patch does).  The screen's
timeline of the hostile session, and an entry's record, send no string
sequence (OSC, DCS, APC, PM, SOS), no C1, BEL or DEL to the terminal, and
leave its title alone.  Each hostile text is shown, escaped."""
import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tarfile
import termios
import time

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

import hostile

sys.path.insert(0, os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR") or
                                os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), "tui"))
from tuilib import Term  # noqa: E402

w = World()
# The hostile rules files are the user's too: the server loads them and
# reports them (corral approvals, corral doctor).
corpus = hostile.write_corpus(os.path.join(w.base, "corpus"), w.state)
user_rules = os.path.join(w.config, "corral", "rules")
os.makedirs(user_rules)
for p in corpus["rules"]:
    shutil.copy(p.encode(), os.path.join(user_rules.encode(), os.path.basename(p).encode()))
# The broken older session is older: the screen lists the hostile one first.
old_log = os.path.join(w.state, "corral", "sessions", hostile.OLD_SID, "events.jsonl")
os.utime(old_log, (time.time() - 3600, time.time() - 3600))
w.start_server()
c = w.connect()
OUT = os.path.join(w.base, "out")
os.makedirs(OUT)


# ---- running a verb ---------------------------------------------------------------------------

def on_pipes(args):
    r = subprocess.run([CORRAL] + args, stdin=subprocess.DEVNULL, capture_output=True, env=w.env, timeout=TIMEOUT,
                       cwd=w.ws)
    return r.returncode, r.stdout, r.stderr


def on_terminal(args, rows=30, cols=100):
    """args with its stdout on one PTY and its stderr on another (output
    processing off, so every byte read is one corral wrote)."""
    masters, slaves = [], []
    for _ in range(2):
        m, s = pty.openpty()
        attrs = termios.tcgetattr(s)
        attrs[1] &= ~termios.OPOST
        termios.tcsetattr(s, termios.TCSANOW, attrs)
        fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        masters.append(m)
        slaves.append(s)
    env = dict(w.env, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([CORRAL] + args, stdin=subprocess.DEVNULL, stdout=slaves[0], stderr=slaves[1], env=env,
                         cwd=w.ws)
    for s in slaves:
        os.close(s)
    data = [b"", b""]
    open_fds = list(masters)
    end = time.monotonic() + TIMEOUT
    while open_fds and time.monotonic() < end:
        ready, _, _ = select.select(open_fds, [], [], max(0.0, end - time.monotonic()))
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                data[masters.index(fd)] += chunk
            else:
                open_fds.remove(fd)
    try:
        rc = p.wait(TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    for m in masters:
        os.close(m)
    return rc, data[0], data[1]


def patch_headers(data):
    """A patch without its lines of content (they are the files' bytes)."""
    out, in_hunk = [], False
    for line in data.split(b"\n"):
        if line.startswith(b"diff --git "):
            in_hunk = False
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line[:1] in (b"+", b"-", b" ", b"\\"):
            continue
        out.append(line)
    return b"\n".join(out)


def check(t, label, args, tty_stdout=hostile.COLOURS, pipe_stdout=None, patch=False, expect=None):
    """args to a pipe and on a terminal: stdout and stderr keep the rule
    (stdout may have tty_stdout's sequences on a terminal, pipe_stdout's
    to a pipe: colours asked for); expect: text that must show on one of
    them to a pipe (the verb did read the corpus)."""
    rc, out, err = on_pipes(args)
    shown = out + err
    pipe_out = patch_headers(out) if patch else out
    bad = (hostile.terminal_violations(pipe_out, pipe_stdout) +
           ["stderr: " + v for v in hostile.terminal_violations(err)])
    t.ok(not bad, "%s, to a pipe: nothing for the terminal to act on" % label,
         "exit %d\n%s\n--- stdout:\n%r\n--- stderr:\n%r" % (rc, "\n".join(bad[:8]), out[:3000], err[:3000]))
    if expect is not None:
        t.ok(expect.encode() in shown, "%s: shows %r" % (label, expect), "%r" % shown[:3000])
    rc, out, err = on_terminal(args)
    bad = hostile.terminal_violations(out, tty_stdout) + ["stderr: " + v for v in hostile.terminal_violations(err)]
    t.ok(not bad, "%s, on a terminal: nothing for the terminal to act on" % label,
         "exit %d\n%s\n--- stdout:\n%r\n--- stderr:\n%r" % (rc, "\n".join(bad[:8]), out[:3000], err[:3000]))


# What the escaped payload shows as (quote.h's visible text).
SHOWN = "\\x1b]0;HOSTILE-TITLE\\x07"


# ---- the screen's timeline ----------------------------------------------------------------------

STRING_SEQ = re.compile(rb"\x1b[\]P_^X]|[\x07\x7f]|\xc2[\x80-\x9f]")


def test_timeline_view(t):
    """The screen's timeline of the hostile session and an entry's record."""
    with Term([CORRAL], rows=40, cols=140, env=w.env) as term:
        term.supervisor_ready()
        title = term.info()["title"]
        term.keys("E")
        term.wait("ended")
        term.supervisor_ready()
        mark = term.mark()
        term.keys("l")
        screen = term.wait_regex("timeline .* session %s (.|\n)*q close" % hostile.SID)
        term.wait_regex("exit +killed by")  # the last entry
        screen = term.settle()
        t.ok(SHOWN in screen, "the timeline shows the hostile text escaped", screen)
        sent = term.bytes_since(mark)
        bad = [m.group(0) for m in STRING_SEQ.finditer(sent)]
        t.ok(not bad, "the timeline sends no string sequence, C1, BEL or DEL to the terminal",
             "%r\n%r" % (bad[:10], sent[:4000]))
        t.eq(term.info()["title"], title, "the terminal's title is unchanged")
        mark = term.mark()
        term.keys("v")
        term.wait("duration_seconds")  # the record's last member: its frame is drawn
        screen = term.settle()
        sent = term.bytes_since(mark)
        bad = [m.group(0) for m in STRING_SEQ.finditer(sent)]
        t.ok("\\u001B]0;HOSTILE-TITLE\\u0007" in screen, "an entry's record shows it escaped (JSON)", screen)
        t.ok(not bad, "the record sends no string sequence, C1, BEL or DEL to the terminal",
             "%r\n%r" % (bad[:10], sent[:4000]))
        t.eq(term.info()["title"], title, "the terminal's title is still unchanged")


# ---- recordings and exports -----------------------------------------------------------------------

def test_replay(t):
    for name in sorted(hostile.casts()) + sorted(hostile.exports({n: b"" for n in hostile.casts()})):
        expect = {"resize.cast": SHOWN, "near-0.cast": "near '\\x1b'"}.get(name)
        check(t, "replay " + name, ["replay", corpus[name]], tty_stdout=hostile.DRAWING, expect=expect)
    check(t, "replay --speed 0 resize.cast", ["replay", "--speed", "0", corpus["resize.cast"]],
          tty_stdout=hostile.DRAWING)
    check(t, "replay --from 3 resize.cast", ["replay", "--from", "3", corpus["resize.cast"]],
          tty_stdout=hostile.DRAWING)
    check(t, "replay of the recorded session", ["replay", hostile.SID], tty_stdout=hostile.DRAWING,
          expect="HOSTILE-TITLE")
    check(t, "replay of the older session", ["replay", hostile.OLD_SID], tty_stdout=hostile.DRAWING)


# ---- session logs -------------------------------------------------------------------------------

def test_log(t):
    sid = hostile.SID
    check(t, "log (the sessions)", ["log"], expect=SHOWN)
    check(t, "log --json (the sessions)", ["log", "--json"])
    check(t, "log --all --grep", ["log", "--all", "--grep", "HOSTILE"])
    check(t, "log SESSION", ["log", sid], expect=SHOWN)
    check(t, "log --json SESSION", ["log", "--json", sid], expect="HOSTILE-TITLE")
    check(t, "log --color always SESSION", ["log", "--color", "always", sid], pipe_stdout=hostile.COLOURS)
    check(t, "log DIR", ["log", corpus["session_dir"]])
    check(t, "log --kind other,warning,approval SESSION", ["log", "--kind", "other,warning,approval", sid])
    check(t, "log OLDER", ["log", hostile.OLD_SID], expect="not JSON")
    check(t, "log --json OLDER", ["log", "--json", hostile.OLD_SID])
    # What corral made inert in a repository, as the log recorded it.
    check(t, "git-restore SESSION 1", ["git-restore", sid, "1"], expect=SHOWN)
    check(t, "git-restore --yes SESSION 1 (its workspace is not there)", ["git-restore", "--yes", sid, "1"])


def test_export(t):
    for sid in (hostile.SID, hostile.OLD_SID):
        dest = os.path.join(OUT, "export-%s.tar.gz" % sid)
        check(t, "export " + sid, ["export", "--force", "-o", dest, sid])
        t.ok(os.path.exists(dest), "the export of %s is written" % sid)
        with tarfile.open(dest) as tf:
            summary = tf.extractfile("corral-%s/SUMMARY.md" % sid).read()
        bad = hostile.terminal_violations(summary)
        t.ok(not bad, "its SUMMARY.md has nothing for a terminal to act on",
             "%s\n%r" % ("\n".join(bad[:8]), summary[:3000]))
        check(t, "replay of the export of " + sid, ["replay", dest], tty_stdout=hostile.DRAWING)


# ---- a session's workspace: corral diff and revert ---------------------------------------------------------

SCRIPT = r'''printf '%s\r\nsecond line\rhidden\n' "$1" > "$1"
mkdir -p .github/workflows && printf 'on: push\n' > ".github/workflows/$1.yml"
exit 3'''


def test_diff(t):
    ws = os.path.join(w.base, "diffws")
    os.makedirs(ws)
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", SCRIPT, "sh", hostile.PAYLOAD], "workdir": ws,
                "yield_time_ms": 30000})
    t.ok(r.get("exit_code") == 3, "a command writes files named and filled with the payload", r)
    sid = max(c.call({"cmd": "ls"})["sessions"], key=lambda s: s["use"])["id"]
    # Its record comes once the snapshot after it is taken.
    r = c.call({"cmd": "diff", "session": sid, "command": 1, "format": "name-status"})
    t.ok("error" not in r, "its diff is there", r)
    s = str(sid)
    check(t, "diff --list", ["diff", s, "--list"])
    check(t, "diff --name-status", ["diff", "--name-status", s, "1"])
    check(t, "diff --stat", ["diff", "--stat", s, "1"])
    check(t, "diff (the patch)", ["diff", s, "1"], patch=True)
    check(t, "diff --color always", ["diff", "--color", "always", s, "1"], pipe_stdout=hostile.COLOURS)
    check(t, "revert --dry-run", ["revert", "--dry-run", s, "1"])
    check(t, "log of that session", ["log", s])
    check(t, "ls (its argv)", ["ls"])
    check(t, "ls --json (its argv)", ["ls", "--json"], expect="\\u009B31m")
    # Once it has left the server, the same verbs read its record on disk.
    t.ok("error" not in c.call({"cmd": "rm", "sessions": [sid]}), "the session leaves the server's list")
    check(t, "diff --list of the ended session", ["diff", s, "--list"], expect=SHOWN)
    check(t, "diff --name-status of the ended session", ["diff", "--name-status", s, "1"])
    check(t, "diff of the ended session (the patch)", ["diff", s, "1"], patch=True)
    check(t, "revert --dry-run of the ended session", ["revert", "--dry-run", s, "1"])
    check(t, "diff --list of a recorded session", ["diff", hostile.SID, "--list"])
    check(t, "diff of a recorded session", ["diff", hostile.SID])


# ---- rules files --------------------------------------------------------------------------------

def test_rules(t):
    for p in corpus["rules"]:
        check(t, "policy check --rules %r" % os.path.basename(p),
              ["policy", "check", "--rules", p, "--", "hostile-cmd"])
    check(t, "policy check with the user's rules", ["policy", "check", "--", "hostile-cmd", hostile.PAYLOAD])
    check(t, "approvals (the rules not loaded)", ["approvals"], expect="some rules were not loaded")
    check(t, "doctor (the rules files)", ["doctor"])
    # A request waiting for a person, its argv and justification hostile.
    watcher = w.connect("watcher")
    watcher.call({"cmd": "subscribe"})
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--justification", hostile.PAYLOAD, "--", "echo",
                          "hostile-ask", hostile.PAYLOAD], env=w.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    a = watcher.next_event(lambda m: m.get("event") == "approval")["approval"]
    check(t, "approvals (a request)", ["approvals"], expect="hostile-ask")
    check(t, "approvals --json (a request)", ["approvals", "--json"], expect="\\u009B31m")
    w.corral("deny", str(a["id"]))
    p.communicate(timeout=TIMEOUT)
    watcher.close()


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_timeline_view, test_replay, test_log, test_export, test_diff, test_rules])
    finally:
        w.cleanup()
