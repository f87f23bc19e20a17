#!/usr/bin/env python3
"""PTY throughput: 50 MB of `seq` output (`seq 1 7000000` saved to a file,
then `cat` of it) through a 200x50 session into the server's terminal model,
beside a detached tmux session of the same size and a bare read() loop on a
PTY (pty_ceiling: the kernel's limit), all in the same run.  Target:
corral's median at least 2x tmux's.  corral's command runs in its default
sandbox with the world's scratch workspace as its working directory (a
writable workspace at / is refused)."""
import os
import subprocess
import tempfile

from benchlib import Tmux, World, arg, median, now, sized

RUNS = arg(1, 5, 1)
N = sized(7000000, 20000)
HERE = os.path.dirname(os.path.abspath(__file__))
CEILING = os.environ.get("PTY_CEILING_BIN", os.path.join(HERE, "pty_ceiling"))


def corral_once(c, path, ws):
    t0 = now()
    r = c.call({"cmd": "exec", "argv": ["cat", path], "tty": True, "cols": 200, "rows": 50,
                "workdir": ws, "yield_time_ms": 30000, "max_output_tokens": 1})
    while "exit_code" not in r:
        if "error" in r:
            raise RuntimeError("corral exec of cat failed: %r" % r)
        r = c.call({"cmd": "write_stdin", "session_id": r["session"], "chars": "", "yield_time_ms": 300000},
                   timeout=600)
    return now() - t0


def tmux_once(tm, path):
    tm.kill()
    t0 = now()
    tm("new-session", "-d", "-x", "200", "-y", "50", "cat %s; tmux -L %s wait-for -S done" % (path, tm.name))
    tm("wait-for", "done")
    dt = now() - t0
    tm.kill()
    return dt


def ceiling_once(path):
    out = subprocess.run([CEILING, "cat", path], capture_output=True, text=True, check=True).stdout
    return float(out)


def line(name, xs):
    print("  %-22s median %6.1f   runs %s" % (name, median(xs), " ".join("%.1f" % x for x in xs)))


def main():
    w = World()
    tm = Tmux("corral-bench-tp")
    fd, path = tempfile.mkstemp(prefix="corral-bench-", suffix=".txt", dir=w.ws)
    try:
        with os.fdopen(fd, "w") as f:
            subprocess.run(["seq", "1", str(N)], stdout=f, check=True)
        size = os.path.getsize(path)
        w.start_server()
        c = w.connect("bench")
        ours, theirs, ceiling = [], [], []
        for i in range(RUNS):  # interleaved, so drift hits all alike
            ours.append(size / corral_once(c, path, w.ws) / 1e6)
            if tm.tmux:
                theirs.append(size / tmux_once(tm, path) / 1e6)
            if os.access(CEILING, os.X_OK):
                ceiling.append(size / ceiling_once(path) / 1e6)
        print("PTY throughput: %d runs of cat of `seq 1 %d` (%.1f MB) at 200x50, MB/s of file bytes" %
              (RUNS, N, size / 1e6))
        line("corral (server model)", ours)
        if theirs:
            line("tmux (detached)", theirs)
        if ceiling:
            line("bare read() of a PTY", ceiling)
        if theirs:
            ratio = median(ours) / median(theirs)
            print("  corral/tmux %.2fx (target >= 2x): %s" % (ratio, "met" if ratio >= 2 else "NOT met"))
        else:
            print("  tmux not installed: no reference figure")
        if ceiling:
            print("  corral/bare read() %.2fx: a reader that does nothing at all with the bytes" %
                  (median(ours) / median(ceiling)))
    finally:
        tm.kill()
        os.unlink(path)
        w.cleanup()


main()
