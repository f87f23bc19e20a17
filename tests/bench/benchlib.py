"""Helpers for corral's benchmarks: a private corral world (reusing the
integration harness) and a private tmux server, plus statistics."""
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import CORRAL, World, wait_until  # noqa: E402,F401


# CORRAL_BENCH_SMOKE=1 runs every benchmark with tiny counts and sizes, so
# that make check (tests/bench/test_bench_smoke.py) proves each one still
# runs to its figures; the figures of such a run mean nothing.
SMOKE = os.environ.get("CORRAL_BENCH_SMOKE") == "1"


def sized(full, smoke):
    """full, or smoke under CORRAL_BENCH_SMOKE=1."""
    return smoke if SMOKE else full


def arg(i, full, smoke):
    """The number given as sys.argv[i], else sized(full, smoke)."""
    return int(sys.argv[i]) if len(sys.argv) > i else sized(full, smoke)


def median(xs):
    return statistics.median(xs)


def p99(xs):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


class Tmux:
    """A tmux server of its own (-L, named for this process too: two runs
    at once, a build's and a sanitizer build's, must not share one),
    without user config."""

    def __init__(self, name):
        self.name = "%s-%d" % (name, os.getpid())
        self.tmux = shutil.which("tmux")

    def __call__(self, *args, check=True):
        return subprocess.run([self.tmux, "-L", self.name, "-f", "/dev/null"] + list(args), check=check,
                              capture_output=True, text=True)

    def kill(self):
        if self.tmux:
            self("kill-server", check=False)

    def server_pid(self):
        return int(self("display-message", "-p", "#{pid}").stdout.strip())


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def now():
    return time.monotonic()


def make_tree(root, n, per_dir, content, prefix="src"):
    """n files under root, per_dir to a directory (PREFIX000/f00000.txt
    ...), file i holding content(i)."""
    for i in range(n):
        d = os.path.join(root, "%s%03d" % (prefix, i // per_dir))
        if i % per_dir == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
            f.write(content(i))
