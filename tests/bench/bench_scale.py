#!/usr/bin/env python3
"""An agent's one-shot command against the size of its workspace: a
tools/call exec_command of `true` through `corral mcp` (the default
sandbox, snapshots and the home layer on, as a user runs it), in git
repositories of 0, 1k, 10k, 60k and 200k files, each snapshotted once
first, beside bubblewrap's bare `bwrap --unshare-all` spawn of `true`,
interleaved in the same run.

Targets (issue 19): median at most 1.0x bwrap's and p99 at most 2x in the
10k-file workspace; flat: the 200k-file median within 1.3x the empty
one's.  bubblewrap (Debian package bubblewrap) gives the reference only."""
import os
import shutil
import subprocess
import sys
import tempfile

from benchlib import World, make_tree, median, now, p99, sized

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mcplib import Bridge  # noqa: E402

SIZES = sized([0, 1000, 10000, 60000, 200000], [0, 50])
RUNS = sized(60, 2)
ARGS = {"cmd": "true", "shell": "/bin/sh", "login": False, "yield_time_ms": 30000}


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0"] + list(args), cwd=cwd,
                   check=True, capture_output=True)


def make_repo(base, n):
    ws = os.path.join(base, "ws-%d" % n)
    os.makedirs(ws)
    make_tree(ws, n, 100, lambda i: "file %d\n" % i)
    git("init", "-q", cwd=ws)
    git("add", "-A", cwd=ws)
    git("commit", "-q", "--allow-empty", "-m", "bench", cwd=ws)
    return ws


def main():
    bwrap = shutil.which("bwrap")
    base = tempfile.mkdtemp(prefix="crlscale")
    w = World()
    rows = []
    try:
        w.start_server()
        for n in SIZES:
            print("# %d files: making the repository" % n, file=sys.stderr, flush=True)
            ws = make_repo(base, n)
            b = Bridge(w, ("-C", ws))
            b.initialize()

            def via_mcp():
                t0 = now()
                r = b.tool("exec_command", ARGS)
                ms = (now() - t0) * 1000
                assert r["structuredContent"].get("exit_code") == 0, r
                return ms

            def via_bwrap():
                t0 = now()
                subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                "/bin/true"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return (now() - t0) * 1000

            via_mcp()  # the workspace's first snapshot, and warm caches
            for _ in range(sized(5, 1)):
                via_mcp()
                if bwrap:
                    via_bwrap()
            ours, ref = [], []
            for _ in range(RUNS):  # interleaved: drift affects both alike
                ours.append(via_mcp())
                if bwrap:
                    ref.append(via_bwrap())
            b.close()
            rows.append((n, ours, ref))
    finally:
        w.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    print("exec_command `true` through corral mcp, by workspace size, %d interleaved runs each, ms:" % RUNS)
    print("  %8s  %8s %8s   %10s  %8s" % ("files", "median", "p99", "bwrap med", "ratio"))
    for n, ours, ref in rows:
        r = median(ref) if ref else None
        print("  %8d  %8.2f %8.2f   %10s  %8s" % (n, median(ours), p99(ours), "%.2f" % r if r else "-",
                                                  "%.2fx" % (median(ours) / r) if r else "-"))
    by = {n: (ours, ref) for n, ours, ref in rows}
    key = 10000 if 10000 in by else SIZES[-1]
    ours, ref = by[key]
    if ref:
        ratio, tail = median(ours) / median(ref), p99(ours) / median(ref)
        print("  %d files: median %.2fx bwrap (target <= 1.0x): %s; p99 %.2fx (target <= 2x): %s" %
              (key, ratio, "met" if ratio <= 1.0 else "NOT met", tail, "met" if tail <= 2.0 else "NOT met"))
    else:
        print("  bwrap not installed (apt-get install bubblewrap): no reference figure")
    flat = median(by[SIZES[-1]][0]) / median(by[SIZES[0]][0])
    print("  flat: %d files %.2fx the empty workspace (target <= 1.3x): %s" %
          (SIZES[-1], flat, "met" if flat <= 1.3 else "NOT met"))


main()
