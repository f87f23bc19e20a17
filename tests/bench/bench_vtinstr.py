#!/usr/bin/env python3
"""The terminal model's instructions per byte of plain text, counted by
callgrind so that the figure is the same on a busy machine as on a quiet
one (it counts instructions, not time).

Two fixed streams, made here the same way every run:
  seq    the output of `seq 1 200000` as a PTY hands it on (lines end in
         CR LF): short lines, the screen scrolling all the time;
  sgr    long lines of words (80 to 400 columns, so that most wrap at 200)
         with a colour change (SGR 31..37, 1;3x, 0) every few words.
vtcount (tests/bench/vtcount.c) writes each in 4 KiB chunks into a 200x50
model, and callgrind counts only its feed loop (--collect-atstart=no
--toggle-collect=feed_all: startup, reading the file and making the model
do not count).  Beside corral's model, in the same run, the reference:
libvterm's state layer fed the same bytes with no callbacks (what libvterm
itself costs inside the model) and libvterm with its own screen layer (a
whole model made of libvterm alone).  Each of corral's figures is split by
callgrind's per-function totals into what runs in libvterm, in corral's
model (functions of src/vt/: the scanner in front of libvterm, the glyph
and scroll callbacks, the grid), in the rest of corral (src/base/: UTF-8,
widths) and in libc.

Target: corral's own share (src/vt/) of the instructions per byte at or
below what it was at b974e59, the main the issue compares with, before the
model's xterm work (2f413dd) made the glyph callback dearer.  Measured once
by hand: a scratch worktree at b974e59, configured and built as usual
(-g -O2, libvterm linked from libvterm.a), this same vtcount.c with its
include pointed at the old flat src/ ("vt.h") compiled with
  gcc -std=c11 -g -O2 -I. -Isrc vtcount.c src/libcorral.a -l:libvterm.a
      -luv -ljansson -lseccomp -lgit2 -lutil -ldl -lm  (one command)
and this benchmark run with VTCOUNT_BIN pointing at it (valgrind 3.19):
  seq: src/vt* 102.9 instructions per byte (libvterm 196.2, total 315.1)
  sgr: src/vt* 102.9 instructions per byte (libvterm 172.9, total 280.7)
(TARGET_SEQ, TARGET_SGR below; the same checksum of the screen text from
both builds).  At 57aa849, when this benchmark came, the same figures were
seq 154.5 (total 366.6) and sgr 163.5 (total 341.7).  Prints met or NOT
met for each stream.

valgrind (Debian's valgrind package, installed by ./bootstrap) runs the
counts; without it, or when vtcount is built with the sanitizers (which
valgrind cannot run), the benchmark prints SKIP and exits 0.  Prints figures;
asserts nothing."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import CORRAL, sized

VTCOUNT = os.environ.get("VTCOUNT_BIN") or os.path.join(os.path.dirname(CORRAL), "..", "tests", "bench",
                                                        "vtcount")
SEQ_N = sized(200000, 2000)
SGR_LINES = sized(6000, 60)
# corral's own instructions per byte at b974e59 (see above).
TARGET_SEQ = 102.9
TARGET_SGR = 102.9

WORDS = ("the model keeps cells of every row while libvterm parses the stream and reports "
         "what changed through its callbacks grid scrollback history wrap reflow").split()


def seq_stream(n):
    return "".join("%d\r\n" % i for i in range(1, n + 1)).encode()


def sgr_stream(lines):
    """Long lines with colour changes; a small LCG, so the bytes are the
    same on every Python."""
    x = 12345
    out = []

    def rnd(k):
        nonlocal x
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        return (x >> 8) % k

    for _ in range(lines):
        width = 80 + rnd(321)
        line, cols = [], 0
        while cols < width:
            w = WORDS[rnd(len(WORDS))]
            if rnd(4) == 0:
                line.append("\033[%sm" % ("0", "3%d" % (1 + rnd(7)), "1;3%d" % (1 + rnd(7)))[rnd(3)])
            line.append(w + " ")
            cols += len(w) + 1
        out.append("".join(line) + "\033[0m\r\n")
    return "".join(out).encode()


def corral_file(path):
    """Where a function's instructions go: src/vt/ (and the old flat
    src/vt*.c), the rest of corral, libvterm or libc and the rest."""
    return re.search(r"(^|/)src/vt(/|[._])", path) is not None


def part_of(ob, fl, binary):
    """libvterm is linked into vtcount from Debian's libvterm.a, which has
    no debug information: vtcount's code without a source file is
    libvterm's (a shared libvterm is named by its object)."""
    if "libvterm" in ob:
        return "libvterm"
    if os.path.realpath(ob) != binary:
        return "libc and other"
    if fl == "???":
        return "libvterm"
    return "src/vt" if corral_file(fl) else "corral other"


class Counts:
    def __init__(self):
        self.total = 0
        self.by_part = {"libvterm": 0, "src/vt": 0, "corral other": 0, "libc and other": 0}
        self.by_fn = {}


def parse_callgrind(path, binary):
    """Self instructions by part and by src/vt/ function, read from a
    callgrind out file the way callgrind_annotate reads it: fl=, fi= and
    fe= set the file of the cost lines that follow, the line after a
    calls= line is the call's inclusive cost (not the caller's own)."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
             "fn": "fn", "cfn": "fn"}
    c = Counts()
    ob = fl = fn = ""
    skip_next = False
    binary = os.path.realpath(binary)

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        table = names[space[kind]]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            ch = line[0]
            if ch.isdigit() or ch in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                c.total += ir
                c.by_part[part_of(ob, fl, binary)] += ir
                if corral_file(fl):
                    c.by_fn[fn] = c.by_fn.get(fn, 0) + ir
                continue
            key, _, rest = line.partition("=")
            if key == "calls":
                skip_next = True
            elif key == "ob":
                ob = name(key, rest)
            elif key in ("fl", "fi", "fe"):
                fl = name(key, rest)
            elif key == "fn":
                fn = name(key, rest)
            elif key in space:
                name(key, rest)  # defines a name used later
    return c


def count(valgrind, mode, stream, work):
    out = os.path.join(work, "callgrind.%s.out" % mode)
    r = subprocess.run([valgrind, "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=feed_all",
                        "--callgrind-out-file=" + out, VTCOUNT, mode, stream],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("valgrind %s %s failed: %s" % (VTCOUNT, mode, r.stderr[-2000:]))
    return parse_callgrind(out, VTCOUNT)


def report(label, size, target, valgrind, stream, work):
    print("== %s stream: %d bytes, 200x50, 4 KiB writes; instructions per byte" % (label, size))
    corral = count(valgrind, "corral", stream, work)
    state = count(valgrind, "state", stream, work)
    screen = count(valgrind, "screen", stream, work)
    per = {k: v / size for k, v in corral.by_part.items()}
    print("  corral model, instructions per byte: %7.1f" % (corral.total / size))
    print("    in libvterm              %7.1f" % per["libvterm"])
    print("    in src/vt/ (corral's)    %7.1f" % per["src/vt"])
    print("    in src/base/ (corral's)  %7.1f" % per["corral other"])
    print("    in libc and the rest     %7.1f" % per["libc and other"])
    top = sorted(corral.by_fn.items(), key=lambda kv: -kv[1])[:6]
    print("    src/vt/ by function:     %s" % ", ".join("%s %.1f" % (f, n / size) for f, n in top))
    print("  reference: libvterm alone, state layer, no callbacks: %7.1f" % (state.total / size))
    print("  reference: libvterm alone, its screen layer:          %7.1f" % (screen.total / size))
    print("  target: src/vt/ at or below %.1f per byte (b974e59): %.1f, %s"
          % (target, per["src/vt"], "met" if per["src/vt"] <= target else "NOT met"))
    sys.stdout.flush()


def main():
    valgrind = shutil.which("valgrind")
    if not valgrind:
        print("SKIP: valgrind is not installed (Debian's valgrind package; ./bootstrap installs it): "
              "no instructions counted")
        return
    with open(VTCOUNT, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    if sanitized:
        # valgrind cannot run a program built with AddressSanitizer (both
        # own the memory map), and its counts would not be the model's.
        print("SKIP: %s is built with the sanitizers (configure --enable-sanitizers): "
              "no instructions counted; run make bench from a plain build" % VTCOUNT)
        return
    work = tempfile.mkdtemp(prefix="corral-bench-vtinstr-")
    try:
        for label, data, target in (("seq", seq_stream(SEQ_N), TARGET_SEQ),
                                    ("sgr", sgr_stream(SGR_LINES), TARGET_SGR)):
            stream = os.path.join(work, label + ".txt")
            with open(stream, "wb") as f:
                f.write(data)
            report(label, len(data), target, valgrind, stream, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
