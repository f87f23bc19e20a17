#!/usr/bin/env python3
"""The supervisor screen's timeline of a large session: a generated
events.jsonl of 100k events as the server writes them (bench_log.py's
generator: commands with their start, end and diff record, connections,
approvals, escalations, resizes) in the state directory of a server that
does not have the session (it ended before the server started, as after a
restart).  The TUI runs on a 50x200 PTY read by tests/tui/vtdrive; E shows
the ended sessions (the generated one is selected), then each run times `l`
from the key's write until the timeline's first frame is on the TUI's screen
(its last row, the key hints, drawn: curses writes top to bottom), then `q`
closes it.  Each `l` reads the whole log again.  Beside it in the same run:
`corral log --json SESSION` over the same file.  Target: the first frame
in under 200 ms.  Prints figures; asserts no times."""
import os
import subprocess
import sys

from benchlib import CORRAL, World, arg, median, now, sized
from bench_log import SID, generate

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tui"))
from tuilib import Term  # noqa: E402

EVENTS = arg(1, 100000, 1000)
RUNS = sized(5, 1)
TARGET_MS = 200
WAIT = 120  # bound of any one wait, seconds: only a hang reaches it


def main():
    w = World()
    try:
        d = os.path.join(w.state, "corral", "sessions", str(SID))
        os.makedirs(d)
        events = os.path.join(d, "events.jsonl")
        generate(events, EVENTS)
        size = os.path.getsize(events)
        w.start_server()
        env = dict(w.env, LANG="C.UTF-8")
        ours = []
        with Term([CORRAL], rows=50, cols=200, env=env, timeout=WAIT) as term:
            term.supervisor_ready()
            term.keys("E")
            term.wait_regex("^ ended")
            term.wait("codex")  # the generated session's row, selected
            term.supervisor_ready()
            for _ in range(RUNS):
                t0 = now()
                term.keys("l")
                term.wait("j/k move  f/F kind")
                ours.append((now() - t0) * 1000)
                term.keys("q")
                term.wait_absent("j/k move  f/F kind")
                term.supervisor_ready()
        theirs = []
        for _ in range(RUNS):
            t0 = now()
            r = subprocess.run([CORRAL, "log", "--json", str(SID)], env=w.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
            theirs.append((now() - t0) * 1000)
            if r.returncode != 0:
                raise RuntimeError("corral log failed: %s" % r.stderr.decode(errors="replace")[-500:])
        print("%d events (%.1f MB) in a session the server no longer has" % (EVENTS, size / 1e6))
        print("TUI timeline, l to its first frame drawn: median %.0f ms  range %.0f..%.0f  (%d runs)" %
              (median(ours), min(ours), max(ours), RUNS))
        print("corral log --json over the same file:     median %.0f ms  range %.0f..%.0f  (%d runs)" %
              (median(theirs), min(theirs), max(theirs), RUNS))
        print("target: timeline first frame < %d ms: %s" %
              (TARGET_MS, "met" if median(ours) < TARGET_MS else "NOT met"))
    finally:
        w.cleanup()


if __name__ == "__main__":
    main()
