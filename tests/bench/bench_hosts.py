#!/usr/bin/env python3
"""The screen across machines over a slow link, beside tmux attached over
ssh on the same link, in the same run.

The other machines: corral Worlds behind one sshd (tests/integration/
sshlab.py: a machine is a Host alias whose key runs `corral serve-stdio`
with that World's directories), and on the same side a tmux server (an
alias whose key runs `tmux attach` on the terminal ssh -t asks for).  The
link: tests/bench/linklab.py, 25 ms each way (netem between two network
namespaces as root; where netem cannot be had, a relay of this script's
that delays the same, the output says why), its round trip measured first.

1. Key to echo: KEYS letters typed one at a time, as bench_tui.py types
   them (benchlib.key_echo_ms_each: from the write of a key to the client's PTY
   until the letter is in its output, escape sequences stripped), into
   the screen zoomed on another machine's session running `cat`
   (`corral -H HOST attach ID`, a 200x52 PTY), and into `ssh -t HOST`
   running `tmux attach` there to a session running `cat` (200x51), a key
   to each in turn, so the link's jitter falls on both alike.
   Target: corral's p99 within the link's round trip + 10 ms.
   Then the same while the pane beside streams `seq` without end (corral:
   the supervisor's keys split the screen; tmux: split-window), which is
   what the target is about: a stream on the same link must not keep the
   keys waiting.
2. Bytes over the link while a visible 200x50 pane streams `seq 1 N`: the
   session prints READY-6 and waits; once the client's screen shows it, a
   return typed into the client releases it, and the count runs until
   END-42 is on the client's screen (tests/tui/vtdrive models it; without
   vtdrive, the raw output is searched).  Both directions, per MB of seq's
   output.  Target: corral's at most tmux's (the screen sends what
   changed, not the screen).
3. Attach: `corral` with three machines in [hosts] holding SESSIONS
   sessions between them, from its start until the first frame whose
   status bar counts them all live (the sidebar, drawn in the same frame
   from the same list, shows them all: the PTY is tall enough; checked
   once after).  Beside it, the start to the first frame at all, and ssh
   logins that run `true` over the same link, one and then three at once:
   the floor under any screen that logs in to each machine first (here
   both ends of every login share this machine's CPUs).  And the same
   attach where the user keeps a master connection to each machine
   (ControlMaster, ControlPersist: the logins made once, before), which
   is corral's own share.  Target: under 1 s + one round trip.

No time is asserted (benchmarks are not tests); each target's line says
met or NOT met.  Usage: bench_hosts.py [KEYS] [RUNS]."""
import os
import shutil
import subprocess
import sys
import tempfile

from benchlib import (CORRAL, RawTerm, Tmux, World, arg, end_on_signals, key_echo_ms_each, key_echo_systems, median,
                      now, on_exit, p99, run_cleanups, sized)
from linklab import Link
from sshlab import SshLab

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tui"))
try:
    from tuilib import VTDRIVE, Term
except ImportError:  # the harness is not there (yet): raw bytes only
    VTDRIVE, Term = None, None

KEYS = arg(1, 500, 10)
RUNS = arg(2, 5, 1)
N = sized(1000000, 20000)
SESSIONS = sized(64, 6)
MACHINES = ("one", "two", "three")
COLS, ROWS = 200, 50
ATTACH_ROWS = 80  # SESSIONS rows and a heading per machine in the sidebar, the title and status rows
RTT_SAMPLES = sized(500, 20)  # as many as keys: the link's own p99 is the floor under a key's
WAIT = 300  # bound of any one wait, seconds: only a hang reaches it
TAG = "corral-bench-hosts-%d" % os.getpid()

ECHO_SH = "echo READY-$((2*3)); exec cat"
STREAM_SH = "echo READY-$((2*3)); read x; seq 1 %d; echo END-$((6*7)); read y" % N
# Digits only, for as long as the keys are typed beside it.
BUSY_SH = "echo STREAM-$((3*3)); while [ ! -e %s ]; do sleep 0.05; done; while :; do seq 1 100000; done"

end_on_signals()


# ---- the two systems --------------------------------------------------------

class CorralThere:
    """The screen here, zoomed on a session of machine `one`."""
    name = "corral"
    label = "corral -H HOST attach"

    def __init__(self, local, one, lab, link):
        self.local, self.one, self.lab, self.link = local, one, lab, link

    def new_session(self, sh):
        r = self.one.corral("new", "-n", "bench", "-C", self.one.ws, "--size", "%dx%d" % (COLS, ROWS),
                            "--", "sh", "-c", sh)
        if r.returncode != 0:
            raise RuntimeError("corral new failed: %s%s" % (r.stdout, r.stderr))
        return r.stdout.strip()  # its server's stop (cleanup) kills it on any path

    def end_session(self, sid):
        self.one.corral("kill", sid)

    def client_argv(self, sid):
        return self.link.client_wrap + [CORRAL, "-H", self.lab.url("one"), "attach", sid]

    def client_rows(self):
        return ROWS + 2  # the title row and the status bar

    def env(self):
        return dict(self.local.env, **self.lab.env)

    def busy(self, go):
        """Two sessions there, the streaming one (waiting for go) made
        first; the client's argv, and what it is typed to show both: the
        supervisor's keys (C-]), the list hidden (s: only the panes are
        drawn), the vertical split (t) and the pane of cat focused
        (Enter)."""
        r = self.one.corral("new", "-n", "busy-stream", "-C", self.one.ws, "--size", "%dx%d" % (COLS // 2, ROWS),
                            "--", "sh", "-c", BUSY_SH % go)
        if r.returncode != 0:
            raise RuntimeError("corral new failed: %s%s" % (r.stdout, r.stderr))
        sid = self.new_session(ECHO_SH)
        return self.client_argv(sid), [b"\x1d", b"s", b"t", b"\r"], lambda: (self.end_session(sid),
                                                                              self.end_session(r.stdout.strip()))


class TmuxThere:
    """tmux on the far side, attached through `ssh -t`."""
    name = "tmux"
    label = "ssh -t HOST tmux attach"

    def __init__(self, tm, lab, link):
        self.tm, self.lab, self.link = tm, lab, link

    def new_session(self, sh):
        self.tm.kill()
        self.tm("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "sh -c '%s'" % sh)
        # The clock in the status line would redraw on its own; keep the
        # line, drop the redraws.
        self.tm("set", "-g", "status-interval", "0")
        return "0"

    def end_session(self, sid):
        self.tm.kill()

    def client_argv(self, sid):
        # -e none: no escape character of ssh's in the way of the keys.
        return self.link.client_wrap + ["ssh", "-F", self.lab.config, "-e", "none", "-t", "tmux"]

    def client_rows(self):
        return ROWS + 1  # the status line

    def env(self):
        e = dict(os.environ)
        e.pop("TMUX", None)
        return e

    def busy(self, go):
        """The streaming pane and, split beside it and focused, cat."""
        self.tm.kill()
        self.tm("new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "sh -c '%s'" % (BUSY_SH % go))
        self.tm("set", "-g", "status-interval", "0")
        self.tm("split-window", "-h", "sh -c '%s'" % ECHO_SH)
        return self.client_argv("0"), [], self.tm.kill


def tmux_attach_command(tm):
    """What the far side's key runs: tmux attach to this benchmark's server
    (found as the benchmark's own tmux calls find it)."""
    cmd = "%s -L %s -f /dev/null attach" % (tm.tmux, tm.name)
    if os.environ.get("TMUX_TMPDIR"):
        cmd = "env TMUX_TMPDIR=%s %s" % (os.environ["TMUX_TMPDIR"], cmd)
    return cmd


# ---- 1. key to echo -----------------------------------------------------------

def key_echo(systems, rtt_s):
    """Milliseconds from each key's write to its letter in each client's
    output, keys typed into the clients in turn (benchlib.key_echo_ms_each),
    so the link's jitter and the machine's load fall on both alike.  A
    return's echo, and what the client redraws for it, is let through
    before the next key: a round trip and then some."""
    return key_echo_systems(systems, ECHO_SH, COLS, KEYS, settle=0.3 + 2 * rtt_s,
                            newline_quiet=0.05 + 2 * rtt_s)


def key_echo_busy(systems, rtt_s, scratch, keys):
    """The same while the pane beside streams `seq` without end: what is
    measured is whether a stream on the same link keeps the keys waiting.
    The letters are looked for in what the client draws; the streaming
    pane draws digits only, and nothing else on the screen changes."""
    go = os.path.join(scratch, "go-busy-%d" % os.getpid())
    terms, ends = [], []
    try:
        for sys_ in systems:
            argv, keys_in, end = sys_.busy(go)
            ends.append(end)
            t = RawTerm(argv, sys_.client_rows(), COLS, sys_.env())
            terms.append(t)
            t.wait_text(b"READY-6")
            seen = b""
            for k in keys_in:
                t.write(k)
                end = now() + 0.2 + 2 * rtt_s
                while now() < end:
                    data = t.read(end - now())
                    if data:
                        seen += t.strip.feed(data)
            if keys_in and b"STREAM-9" not in seen:
                raise RuntimeError("%s: the split did not show the streaming pane; the screen drew %r" %
                                   (sys_.name, seen[-600:]))
            t.drain(0.5 + 2 * rtt_s)  # past the keys held after a change of focus
        open(go, "w").close()
        for t in terms:
            t.drain(0.5, most=1.0)  # the stream is on the screen
        return dict(zip([s.name for s in systems], key_echo_ms_each(terms, keys, newline_quiet=0.05 + 2 * rtt_s)))
    finally:
        for t in terms:
            t.close()
        for end in ends:
            end()
        try:
            os.unlink(go)
        except OSError:
            pass


# ---- 2. bytes over the link while a pane streams ------------------------------------

def stream(sys_, link, use_vtdrive):
    """Seconds from the release to END-42 on the client's screen, and the
    bytes over the link meanwhile: (seconds, to the far side, from it)."""
    sid = sys_.new_session(STREAM_SH)
    t = None
    try:
        if use_vtdrive:
            t = Term(sys_.client_argv(sid), rows=sys_.client_rows(), cols=COLS, env=sys_.env(), timeout=WAIT)
            on_exit(t.close)
            t.wait("READY-6")
            up0, down0 = link.counts()
            t0 = now()
            t.send("\r")
            t.wait("END-42")
            dt = now() - t0
        else:
            t = RawTerm(sys_.client_argv(sid), sys_.client_rows(), COLS, sys_.env())
            t.wait_text(b"READY-6")
            up0, down0 = link.counts()
            t0 = now()
            t.write(b"\r")
            dt = t.wait_text(b"END-42", timeout=WAIT) - t0
        up1, down1 = link.counts()
        return dt, up1 - up0, down1 - down0
    finally:
        if t is not None:
            t.close()
        sys_.end_session(sid)


# ---- 3. attach ------------------------------------------------------------------

def spread(total, parts):
    """total sessions over parts machines, as even as can be (22+21+21)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def attach_once(local, link, names):
    """Seconds from starting `corral` to its first frame, and to the first
    frame counting every session live; the names not on that frame."""
    env = dict(local.env, LANG="C.UTF-8")
    t0 = now()
    t = Term(link.client_wrap + [CORRAL], rows=ATTACH_ROWS, cols=COLS, env=env, cwd=local.ws, timeout=WAIT)
    try:
        t.wait(" live ")  # the status bar, drawn with every frame
        first = now() - t0
        s = t.wait_regex(" [0-9]+/[0-9]+ live, %d remote " % len(names))
        every = now() - t0
        return first, every, [n for n in names if n not in s]
    finally:
        t.close()


def with_masters(lab, link, scratch):
    """An ssh config like the lab's whose connections go through a master
    per machine (as a user's ControlMaster auto with ControlPersist), the
    masters made now; the config's path and a function ending them."""
    path = os.path.join(scratch, "ssh_config_masters")
    with open(lab.config) as f:
        base = f.read()
    with open(path, "w") as f:
        # First obtained value wins: these come before the lab's "ControlMaster no".
        # %n (the alias): the aliases share a HostName but not a key.
        f.write("Host *\n  ControlMaster auto\n  ControlPath %s/cm-%%n\n  ControlPersist 600\n\n%s" % (scratch, base))
    for alias in MACHINES:
        r = subprocess.run(link.client_wrap + ["ssh", "-F", path, alias], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=WAIT)
        if r.returncode != 0:
            raise RuntimeError("ssh master to %s failed: %s" % (alias, r.stderr))

    def end():
        for alias in MACHINES:
            subprocess.run(link.client_wrap + ["ssh", "-F", path, "-O", "exit", alias], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=WAIT)
    return path, end


def ssh_logins(lab, link, k):
    """Seconds until k `ssh HOST` started at once, each running `true`
    there, have all ended: as many logins as the screen makes, one per
    machine, on the same CPUs (here both ends of every login share them)."""
    t0 = now()
    procs = [subprocess.Popen(link.client_wrap + ["ssh", "-F", lab.config, "login"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(k)]
    for p in procs:
        _, err = p.communicate(timeout=WAIT)
        if p.returncode != 0:
            raise RuntimeError("ssh login failed: %s" % err)
    return now() - t0


# ---- report ---------------------------------------------------------------------

def ms_line(name, xs, limit):
    print("  %-40s median %7.2f   p99 %7.2f   max %7.2f   keys over the round trip + 10 ms: %d" %
          (name, median(xs), p99(xs), max(xs), len([x for x in xs if x > limit])))


def s_line(name, xs):
    print("  %-48s median %6.3f   range %6.3f..%-6.3f runs %s" %
          (name, median(xs), min(xs), max(xs), " ".join("%.3f" % x for x in xs)))


def tmux_gone(tm):
    tm.kill()
    # kill-server leaves its socket behind
    tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
    try:
        os.unlink(os.path.join(tmpdir, "tmux-%d" % os.getuid(), tm.name))
    except OSError:
        pass


def main():
    use_vtdrive = Term is not None and os.access(VTDRIVE or "", os.X_OK)
    scratch = tempfile.mkdtemp(prefix="crlbh")
    on_exit(lambda: shutil.rmtree(scratch, ignore_errors=True))
    local = World()
    on_exit(local.cleanup)
    far = []
    for _ in MACHINES:
        far.append(World())
        on_exit(far[-1].cleanup)
    tm, no_tmux = None, None
    if not Tmux("x").tmux:
        no_tmux = "tmux is not installed"
    elif os.geteuid() != 0:
        # sshd not run as root cannot hand the pty of `ssh -t` to the user
        # (it fails to chown it and closes the connection).
        no_tmux = "an sshd not run as root gives `ssh -t` no terminal"
    else:
        tm = Tmux(TAG)
        on_exit(lambda: tmux_gone(tm))
    link = Link(scratch)
    on_exit(link.close)
    lab = SshLab(listen=link.server_addr, wrap=link.server_wrap)
    on_exit(lab.stop)
    for alias, w in zip(MACHINES, far):
        lab.add(alias, w)
    if tm:
        lab.add_command("tmux", tmux_attach_command(tm))
    lab.add_command("login", "true")
    lab.start()
    if lab.why_not:
        print("SKIP: no sshd to stand for the other machines: %s" % lab.why_not)
        return
    lab.reach(*link.front(lab.port))
    rtt = link.rtt_ms(RTT_SAMPLES)
    rtt_s = median(rtt) / 1000.0
    limit = median(rtt) + 10
    local.start_server()
    for w in far:
        w.start_server()

    ours = CorralThere(local, far[0], lab, link)
    theirs = TmuxThere(tm, lab, link) if tm else None
    systems = [ours] + ([theirs] if theirs else [])

    lat = key_echo(systems, rtt_s)

    size = len(subprocess.run(["seq", "1", str(N)], capture_output=True, check=True).stdout)
    flow = {s.name: stream(s, link, use_vtdrive) for s in systems}

    counts = spread(SESSIONS, len(MACHINES))
    names = []
    for (alias, w), k in zip(zip(MACHINES, far), counts):
        for i in range(k):
            name = "%s-s%02d" % (alias, i)
            r = w.corral("new", "-n", name, "-C", w.ws, "--", "sh", "-c", "exec sleep 100000")
            if r.returncode != 0:
                raise RuntimeError("corral new failed on %s: %s%s" % (alias, r.stdout, r.stderr))
            names.append(name)
    local.write_config("[hosts]\n%sssh-command = ssh -F %s\n" %
                       ("".join("%s = %s\n" % (a, lab.url(a)) for a in MACHINES), lab.config))
    firsts, everys, missing = [], [], []
    if use_vtdrive:
        for _ in range(RUNS):
            first, every, miss = attach_once(local, link, names)
            firsts.append(first)
            everys.append(every)
            missing += miss
    mastered = []
    if use_vtdrive:
        cm_config, end_masters = with_masters(lab, link, scratch)
        on_exit(end_masters)
        local.write_config("[hosts]\n%sssh-command = ssh -F %s\n" %
                           ("".join("%s = %s\n" % (a, lab.url(a)) for a in MACHINES), cm_config))
        for _ in range(RUNS):
            _, every, miss = attach_once(local, link, names)
            mastered.append(every)
            missing += miss
        end_masters()
    busy = key_echo_busy(systems, rtt_s, scratch, KEYS)
    logins = [ssh_logins(lab, link, 1) for _ in range(RUNS)]
    logins3 = [ssh_logins(lab, link, len(MACHINES)) for _ in range(RUNS)]

    print("Link: %s" % link.describe())
    print("  round trip, measured: median %.2f ms, p99 %.2f (%d samples, %.2f..%.2f; %s)" %
          (median(rtt), p99(rtt), len(rtt), min(rtt), max(rtt),
           "one byte to an echo beside sshd and back" if link.netem else
           "one byte through the relay to an echo and back"))
    print("Key to echo: %d keys each, key written to the client's PTY until its echo is in the client's output, "
          "keys 30..70 ms apart (or as soon as the last one's echo came), ms" % KEYS)
    ms_line("corral -H HOST attach, cat there", lat["corral"], limit)
    if theirs:
        ms_line("ssh -t HOST tmux attach, cat there", lat["tmux"], limit)
    else:
        print("  ssh -t HOST tmux attach: not measured (%s)" % no_tmux)
    print("Key to echo while the pane beside streams `seq` without end (a vertical split, %d keys each), ms" % KEYS)
    ms_line("corral -H HOST attach, cat there", busy["corral"], limit)
    if theirs:
        ms_line("ssh -t HOST tmux attach, cat there", busy["tmux"], limit)
    early = {n: len([x for x in xs if x < 0.9 * median(rtt)]) for n, xs in busy.items()}
    if any(early.values()):
        print("  (keys echoed sooner than a round trip, so something else on the screen was taken for them: %s)" %
              ", ".join("%s %d" % kv for kv in early.items()))
    print("Streaming pane: `seq 1 %d` (%.1f MB) in a visible %dx%d pane on the far side, release to END-42 on "
          "the client's screen (%s); bytes over the link, both ways" %
          (N, size / 1e6, COLS, ROWS, "vtdrive, screen modelled" if use_vtdrive else "raw output searched"))
    per_mb = {}
    for s in systems:
        dt, up, down = flow[s.name]
        per_mb[s.name] = (up + down) / 1e3 / (size / 1e6)
        print("  %-40s %9.1f KB over the link per MB of output (from the far side %.1f KB, to it %.1f KB), "
              "%.2f s, %.1f MB/s" % (s.label, per_mb[s.name], down / 1e3, up / 1e3, dt, size / 1e6 / dt))
    print("Attach: `corral` with %d machines in [hosts], %d sessions on them (%s), %d runs, a %dx%d PTY, s" %
          (len(MACHINES), SESSIONS, "+".join(str(c) for c in counts), RUNS, COLS, ATTACH_ROWS))
    if use_vtdrive:
        s_line("corral, start to its first frame", firsts)
        s_line("corral, start to all %d sessions on the screen" % SESSIONS, everys)
        s_line("the same, a master connection up to each machine", mastered)
        if missing:
            print("  (the frame counting them all did not show every name: %s)" % " ".join(sorted(set(missing))))
    else:
        print("  unmeasured: no vtdrive to model the screen (CORRAL_VTDRIVE)")
    s_line("ssh HOST running `true`, over the same link", logins)
    s_line("%d of them at once, until all have ended" % len(MACHINES), logins3)

    rt = median(rtt)
    xs = lat["corral"]
    line = "target key to echo: corral p99 %.2f ms <= round trip %.2f ms + 10 ms: %s" % (
        p99(xs), rt, "met" if p99(xs) <= limit else "NOT met (median %.2f ms)" % median(xs))
    if theirs:
        ys = lat["tmux"]
        line += " (tmux's p99 %.2f ms: %s)" % (p99(ys), "met" if p99(ys) <= limit else "NOT met")
    print(line)
    xs_b = busy["corral"]
    line = "target key to echo while a pane streams: corral p99 %.2f ms <= round trip %.2f ms + 10 ms: %s" % (
        p99(xs_b), rt, "met" if p99(xs_b) <= limit else "NOT met (median %.2f ms)" % median(xs_b))
    if theirs:
        line += " (tmux's p99 %.2f ms: %s)" % (p99(busy["tmux"]), "met" if p99(busy["tmux"]) <= limit else "NOT met")
    print(line)
    # The link's own p99 (a relay's or netem's jitter) is under every key's
    # p99: the same target read p99 to p99.
    limit99 = p99(rtt) + 10
    line = "target key to echo, p99 to p99: corral p99 %.2f ms <= the round trip's p99 %.2f ms + 10 ms: %s" % (
        p99(xs), p99(rtt), "met" if p99(xs) <= limit99 else "NOT met")
    if theirs:
        line += " (tmux's: %s)" % ("met" if p99(ys) <= limit99 else "NOT met")
    print(line)
    if theirs:
        ratio = per_mb["corral"] / per_mb["tmux"]
        print("target bytes: corral %.1f KB per MB of output <= tmux's %.1f KB (%.2fx): %s" %
              (per_mb["corral"], per_mb["tmux"], ratio, "met" if ratio <= 1 else "NOT met"))
    else:
        print("target bytes: no reference figure (%s): NOT met (unmeasured)" % no_tmux)
    if use_vtdrive:
        bound = 1 + rt / 1000
        m = median(everys)
        print("target attach: corral median %.3f s to all %d sessions < 1 s + round trip = %.3f s: %s" %
              (m, SESSIONS, bound, "met" if m < bound else "NOT met (ssh logins running `true`, %d at once, "
                                                         "alone: median %.3f s)" % (len(MACHINES), median(logins3))))
        m = median(mastered)
        print("target attach, the logins made before (ControlMaster): corral median %.3f s < %.3f s: %s" %
              (m, bound, "met" if m < bound else "NOT met"))
    else:
        print("target attach: NOT met (unmeasured: no vtdrive)")


if __name__ == "__main__":
    try:
        main()
    finally:
        run_cleanups()
