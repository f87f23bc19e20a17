"""Helpers for corral's benchmarks: a private corral world (reusing the
integration harness) and a private tmux server, plus statistics, cleanups
that run on every way out, and a program on a PTY whose raw output is read
directly (for key-to-echo latency)."""
import atexit
import fcntl
import os
import random
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import termios
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


# ---- every process ends on every path ---------------------------------------

_cleanups = []


def on_exit(fn):
    """Run fn at exit (and from the finally of main), once, newest first."""
    _cleanups.append(fn)
    return fn


def run_cleanups():
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:  # keep cleaning up the rest
            sys.stderr.write("%s: cleanup: %s\n" % (os.path.basename(sys.argv[0]), e))


atexit.register(run_cleanups)


def _terminate(sig, frame):
    raise SystemExit(128 + sig)


def end_on_signals():
    """SIGTERM, SIGHUP and SIGINT end the benchmark through its cleanups
    (a timeout of make, a closed terminal) instead of killing it with its
    servers and sessions left running."""
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, _terminate)


# ---- a program on a PTY whose raw output we read ----------------------------

class Stripper:
    """The printable text of a terminal stream: escape sequences (CSI, OSC,
    DCS and other strings, two- and three-byte escapes) and C0 controls
    removed, across chunk boundaries."""

    def __init__(self):
        self.state = 0  # 0 text, 1 ESC, 2 CSI, 3 string, 4 string ESC, 5 one more byte

    def feed(self, data):
        out = bytearray()
        st = self.state
        for b in data:
            if st == 0:
                if b == 0x1b:
                    st = 1
                elif b >= 0x20 and b != 0x7f:
                    out.append(b)
            elif st == 1:
                if b == 0x5b:            # [
                    st = 2
                elif b in (0x5d, 0x50, 0x58, 0x5e, 0x5f):  # ] P X ^ _
                    st = 3
                elif 0x20 <= b <= 0x2f:  # ( ) * + # % ...: one more byte
                    st = 5
                else:
                    st = 0
            elif st == 2:
                if 0x40 <= b <= 0x7e:
                    st = 0
            elif st == 3:
                if b == 0x07:
                    st = 0
                elif b == 0x1b:
                    st = 4
            elif st == 4:
                st = 0 if b == 0x5c else 3
            else:
                st = 0
        self.state = st
        return bytes(out)


def _make_ctty():
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class RawTerm:
    """argv on a new PTY of rows x cols as a session leader; we hold the
    master and read it ourselves."""

    def __init__(self, argv, rows, cols, env):
        e = dict(env)
        e["TERM"] = "xterm-256color"
        e.pop("LINES", None)
        e.pop("COLUMNS", None)
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=e,
                                     start_new_session=True, preexec_fn=_make_ctty)
        os.close(slave)
        self.pid = self.proc.pid
        self.strip = Stripper()
        self.total = 0
        self.closed = False
        on_exit(self.close)

    def read(self, timeout):
        """One chunk of output (b"" on EOF), or None after timeout s."""
        if not select.select([self.master], [], [], max(timeout, 0))[0]:
            return None
        try:
            data = os.read(self.master, 1 << 16)
        except OSError:  # EIO: no slave end open any more
            data = b""
        self.total += len(data)
        return data

    def write(self, data):
        os.write(self.master, data)

    def wait_text(self, text, timeout=300):
        """Read until text is in the printable output read by this call;
        returns the time it arrived."""
        end = now() + timeout
        seen = b""
        while True:
            data = self.read(end - now())
            if data is None:
                raise RuntimeError("timeout waiting for %r; output ends %r" % (text, seen[-300:]))
            if not data:
                raise RuntimeError("EOF waiting for %r (%s exited %s); output ends %r"
                                   % (text, self.proc.args[0], self.proc.poll(), seen[-300:]))
            seen = (seen + self.strip.feed(data))[-4096:]
            if text in seen:
                return now()
            if now() > end:  # a stream that never pauses keeps read() from timing out
                raise RuntimeError("timeout waiting for %r; output ends %r" % (text, seen[-300:]))

    def drain(self, quiet, most=None):
        """Read until nothing has come for quiet seconds, or (beside a
        stream that never pauses) for at most `most` seconds."""
        end = now() + most if most is not None else None
        while True:
            data = self.read(quiet if end is None else min(quiet, max(end - now(), 0)))
            if not data or (end is not None and now() >= end):
                return

    def close(self):
        if self.closed:
            return
        self.closed = True
        os.close(self.master)  # SIGHUP to the TUI's session
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass


def key_echo_ms(t, keys, pace_ms=(30, 70), newline_every=50, newline_quiet=0.05):
    """Type keys letters (a..z in turn) into a program on RawTerm t that
    echoes them (cat, through a TUI or not), one at a time, each pace_ms
    after the one before (uniform, fixed seed: a fast typist's pace that
    does not lock into step with any timer of the program); a return every
    newline_every keys keeps the line from wrapping, and its echo is let
    through (until nothing came for newline_quiet s) before the next key.
    Returns the milliseconds from each key's write to the master until its
    letter is in the output (escape sequences stripped)."""
    return key_echo_ms_each([t], keys, pace_ms, newline_every, newline_quiet)[0]


def key_echo_systems(systems, sh, cols, keys, settle=0.3, **kw):
    """key_echo_ms_each into a session of each system (an object with
    name, new_session(sh), end_session(id), client_argv(id), client_rows()
    and env(), as the benchmarks define them) running sh, which prints
    READY-6 and then echoes; its client on a RawTerm of cols columns, let
    settle seconds after READY-6 first.  {system's name: milliseconds}."""
    terms, sids = [], []
    try:
        for sys_ in systems:
            sid = sys_.new_session(sh)
            sids.append((sys_, sid))
            t = RawTerm(sys_.client_argv(sid), sys_.client_rows(), cols, sys_.env())
            terms.append(t)
            t.wait_text(b"READY-6")
            t.drain(settle)  # the first frames after attaching
        outs = key_echo_ms_each(terms, keys, **kw)
        return {sys_.name: xs for sys_, xs in zip(systems, outs)}
    finally:
        for t in terms:
            t.close()
        for sys_, sid in sids:
            sys_.end_session(sid)


def key_echo_ms_each(terms, keys, pace_ms=(30, 70), newline_every=50, newline_quiet=0.05):
    """key_echo_ms for several programs in the same run, a key to each in
    turn (who goes first alternates), so that whatever else the machine
    does meanwhile falls on all of them alike.  Returns one list of
    milliseconds per program."""
    outs = [[] for _ in terms]
    last = 0.0
    rnd = random.Random(42)
    for i in range(keys):
        order = list(range(len(terms))) if i % 2 == 0 else list(reversed(range(len(terms))))
        for k in order:
            t = terms[k]
            if i and i % newline_every == 0:
                t.write(b"\r")
                t.drain(newline_quiet, most=10 * newline_quiet)
            gap = last + rnd.uniform(*pace_ms) / 1000.0 - now()
            if gap > 0:
                time.sleep(gap)  # pacing the typist, not waiting for output
            letter = bytes([0x61 + i % 26])
            last = now()
            t.write(letter)
            outs[k].append((t.wait_text(letter, timeout=30) - last) * 1000)
            t.drain(0.005, most=0.05)  # the rest of that frame
    return outs
