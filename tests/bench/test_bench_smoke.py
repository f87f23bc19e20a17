#!/usr/bin/env python3
"""Every benchmark of `make bench` runs to its figures: each bench_*.py here
is run with CORRAL_BENCH_SMOKE=1 (tiny counts and sizes, see benchlib.py)
and must exit 0 and print its figure lines.  A benchmark that breaks (a
request the server refuses, a helper program missing) fails here, in make
check, instead of at the next make bench.  No figure is judged: timings of
such small runs mean nothing, and tests never assert a time."""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from harness import CORRAL, Tap, run_tests  # noqa: E402

BUILD = os.path.dirname(os.path.dirname(os.path.abspath(CORRAL)))
# The line each benchmark prints when it measured corral (its first figure).
FIGURES = {
    "bench_throughput.py": "corral (server model)  median",
    "bench_roundtrip.py": "corral exec --raw -- true (sandboxed)",
    "bench_rss.py": "per extra session: corral",
    "bench_spawn.py": "corral sandbox -- true",
    "bench_tui.py": "corral attach (200x52 PTY)",
    "bench_policy.py": "corral policy check, simple:",
    "bench_approval.py": "target request-to-dialog latency",
    "bench_proxy.py": "target: p99 < 2 ms through the proxy",
    "bench_snap.py": "target: added latency per exec",
    "bench_mcp.py": "tools/call exec_command via corral mcp",
    "bench_replay.py": "corral replay --speed 0 ",
    "bench_log.py": "corral log --json over",
    "bench_review.py": "TUI timeline, l to its first frame drawn",
    "bench_scale.py": "exec_command `true` through corral mcp, by workspace size",
    "bench_vtinstr.py": "corral model, instructions per byte:",
    "bench_hosts.py": "corral -H HOST attach, cat there",
}


def test_every_benchmark_is_covered(t):
    found = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "bench_*.py")))
    t.eq(found, sorted(FIGURES), "every bench_*.py is smoke-tested here (add a new one to FIGURES)")


def test_each_benchmark_runs_to_its_figures(t):
    env = dict(os.environ, CORRAL_BENCH_SMOKE="1", CORRAL_BIN=CORRAL,
               PTY_CEILING_BIN=os.path.join(BUILD, "tests", "bench", "pty_ceiling"),
               BENCH_POLICY_BIN=os.path.join(BUILD, "tests", "bench", "bench_policy"),
               SNAPDRIVE_BIN=os.path.join(BUILD, "tests", "bench", "snapdrive"),
               VTCOUNT_BIN=os.path.join(BUILD, "tests", "bench", "vtcount"))
    for name in sorted(FIGURES):
        try:
            r = subprocess.run([sys.executable, os.path.join(HERE, name)], env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired as e:
            t.ok(False, "%s runs to completion" % name, "still running after %s s" % e.timeout)
            continue
        out = r.stdout + r.stderr
        if r.returncode == 0 and r.stdout.startswith("SKIP:"):
            # The benchmark cannot measure in this build (valgrind missing,
            # or a sanitizer build valgrind cannot run): said, not passed.
            reason = r.stdout.splitlines()[0][len("SKIP:"):].strip()
            t.skip("%s runs to completion" % name, reason)
            t.skip("%s prints its figures" % name, reason)
            continue
        t.ok(r.returncode == 0, "%s runs to completion (exit 0)" % name, out[-3000:])
        t.ok(FIGURES[name] in r.stdout, "%s prints its figures" % name, out[-3000:])


run_tests(Tap(), [test_every_benchmark_is_covered, test_each_benchmark_runs_to_its_figures])
