#!/usr/bin/env python3
"""Replay to the end: `corral replay --speed 0` of a 100 MB recording of an
agent's session (prompts with corral's marks and a title, command markers,
coloured build and test logs, progress bars, a clear now and then) beside
`asciinema cat` of the same file, in the same run.  Both write to
/dev/null with a terminal as their controlling terminal (asciinema cat
insists on /dev/tty); corral draws the screen the recording ends with,
asciinema cat copies every output event.  Target: corral no slower than
asciinema cat.

A second corral figure is of the same recording with a full-screen program
(alternate screen, scroll region) at its start: there corral's model must
read every byte (castskip.h says why), so it shows the terminal model's own
speed; it has no target."""
import json
import os
import pty
import random
import shutil
import sys
import tempfile

from benchlib import CORRAL, arg, median, now, sized

RUNS = arg(1, 3, 1)
SIZE = sized(100 << 20, 1 << 20)


def agent_session(path, size, full_screen_first=False):
    """An agent's session: size bytes of asciicast v2."""
    rnd = random.Random(14)
    with open(path, "w") as f:
        f.write(json.dumps({"version": 2, "width": 120, "height": 40, "title": "agent"}) + "\n")
        t = 0.0
        written = 0
        cmd = 0

        def ev(code, data):
            nonlocal t, written
            t += rnd.random() * 0.02
            line = json.dumps([round(t, 6), code, data]) + "\n"
            f.write(line)
            written += len(line)

        if full_screen_first:
            ev("o", "\x1b[?1049h\x1b[2;38r\x1b[H\x1b[2Jan editor\x1b[38;1H-- INSERT --\x1b[r\x1b[?1049l")
        while written < size:
            cmd += 1
            ev("o", "\x1b]133;A\x07\x1b]0;agent: ~/project\x07\x1b[1;32m~/project\x1b[0m$ \x1b[?2004h")
            ev("o", "\x1b[?2004l\r\n")
            ev("m", "cmd %d: make test" % cmd)
            for i in range(rnd.randrange(200, 2000)):
                k = rnd.random()
                if k < 0.6:
                    ev("o", "\x1b[32m%6d\x1b[0m compiling src/module_%d.c ... \x1b[1;33mwarning\x1b[0m: unused "
                            "variable 'x%d' in function \u2018f%d\u2019\r\n" % (i, i % 977, i, i % 13))
                elif k < 0.8:
                    ev("o", "test_%d ... %s\r\n" % (i, "\x1b[32mok\x1b[0m" if rnd.random() < 0.95 else
                                                  "\x1b[1;31mFAILED\x1b[0m"))
                elif k < 0.95:
                    ev("o", "\rdownloading crate %d [%-30s] %3d%%\x1b[K" % (i, "#" * (i % 30), i % 100))
                    ev("o", "\r\n")
                elif k < 0.999:
                    ev("o", "    \x1b[36m--> src/lib.rs:%d:%d\x1b[0m\r\n     |\r\n %3d | let x = \u6f22\u5b57;\r\n" %
                       (i, i % 80, i % 1000))
                else:
                    ev("o", "\x1b[H\x1b[2J")
            ev("o", "\x1b]133;D;0\x07")
            ev("m", "cmd %d end: exit 0" % cmd)


def run_pty(argv):
    """Run argv with a terminal as its controlling terminal and stdin, and
    stdout to /dev/null; its wall time, or None if it failed."""
    t0 = now()
    pid, fd = pty.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    dt = now() - t0
    os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.stderr.write("%s failed (%s): %s\n" % (argv[0], status, out[-2000:].decode("utf-8", "replace")))
        return None
    return dt


def figure(name, argv):
    xs = [run_pty(argv) for _ in range(RUNS)]
    if None in xs:
        print("  %-64s FAILED" % name)
        return None
    m = median(xs)
    print("  %-64s median %6.3f s   runs %s" % (name, m, " ".join("%.3f" % x for x in xs)))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="bench-replay")
    try:
        cast = os.path.join(tmp, "agent.cast")
        agent_session(cast, SIZE)
        full = os.path.join(tmp, "fullscreen-first.cast")
        agent_session(full, SIZE, full_screen_first=True)
        mb = os.path.getsize(cast) / 1e6
        print("Replay to the end of a %.1f MB recording of an agent's session (%d runs each, seconds)" % (mb, RUNS))
        os.environ["XDG_CONFIG_HOME"] = tmp  # no config of the user's in the figures
        corral = figure("corral replay --speed 0", [CORRAL, "replay", "--speed", "0", cast])
        ascii_cat = None
        if shutil.which("asciinema"):
            ascii_cat = figure("asciinema cat", ["asciinema", "cat", cast])
        else:
            print("  asciinema not installed (Debian package asciinema): no reference figure")
        figure("corral replay --speed 0, full-screen program first (all read)", [CORRAL, "replay", "--speed", "0",
                                                                                full])
        if corral is None or (shutil.which("asciinema") and ascii_cat is None):
            return 1
        if ascii_cat:
            ratio = ascii_cat / corral
            print("  asciinema cat / corral replay %.2fx (target >= 1): %s" % (ratio, "met" if ratio >= 1 else
                                                                               "NOT met"))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


sys.exit(main())
