#!/usr/bin/env python3
"""The TUI screen harness (vtdrive + tuilib) against ordinary programs: echo
and waits, the PTY size and SIGWINCH, colours and attributes, wide
characters, the raw byte record, terminal replies, keys, the failure paths
of waits, exit statuses, floods of output, a full-screen program on the
alternate screen, and cleaning up every process."""
import atexit
import os
import re
import select
import shutil
import signal
import sys
import tempfile
import time

from tuilib import Term, Tap, pid_alive, run_tests, wait_until

PROMPT = "tui$"


def shell_env():
    e = dict(os.environ)
    e["PS1"] = PROMPT + " "
    for k in ("ENV", "LESS", "LESSOPEN", "LESSCLOSE", "PAGER", "PROMPT_COMMAND"):
        e.pop(k, None)
    return e


SCRATCH = tempfile.mkdtemp(prefix="tui")
atexit.register(shutil.rmtree, SCRATCH, True)


def script(text):
    """A file holding text; returns its path."""
    fd, path = tempfile.mkstemp(dir=SCRATCH, suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def run(s, line, output):
    """Type a command line into the shell s and wait for its output (a
    regex for whole rows) followed by the next prompt: typing ahead of the
    prompt would put the echo of the next command before it."""
    s.send_line(line)
    return s.wait_regex("^" + output + "\n" + PROMPT.replace("$", "[$]") + "$")


def sh(rows=24, cols=80):
    s = Term(["sh"], rows=rows, cols=cols, env=shell_env())
    s.wait(PROMPT)
    return s


def test_echo_and_wait(t):
    with sh() as s:
        info = s.info()
        t.eq((info["rows"], info["cols"]), (24, 80), "the model has the size asked for")
        s.send_line("echo hel''lo")
        screen = s.wait_regex("^hello$")
        t.ok(PROMPT + " echo hel''lo" in screen, "typed text is echoed and found on the screen", screen)
        screen = s.wait_regex(r"^hello\ntui\$$")
        row = screen.split("\n").index("hello")
        t.eq(s.info()["cursor"], [row + 1, len(PROMPT) + 1], "the cursor is after the new prompt")
        t.eq(s.find("hel''lo"), (row - 1, len(PROMPT) + 6), "find gives (row, col) of text")
        t.eq(s.find("hel"), (row - 1, len(PROMPT) + 6), "of its first occurrence")
        t.eq(s.find("not on the screen"), None, "find of absent text is None")
        t.eq(s.row(row), "hello", "row(n) is one line of the screen")


def test_size_and_winch(t):
    with sh() as s:
        run(s, 'echo "size=$(stty size) cols=$(tput cols) lines=$(tput lines)"', "size=24 80 cols=80 lines=24")
        t.ok(True, "stty size and tput inside agree with the PTY size (24x80)")
        # A foreground job of the shell that reports SIGWINCH (blocked
        # before it says ready, so none is missed).
        s.send_line("%s %s" % (sys.executable, script(
            "import os, signal\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})\n"
            "print('ready', flush=True)\n"
            "signal.sigwait({signal.SIGWINCH})\n"
            "print('winch %dx%d' % os.get_terminal_size()[::-1], flush=True)\n")))
        s.wait_regex("^ready$")
        s.resize(30, 100)
        s.wait("winch 30x100")
        t.ok(True, "after resize the foreground program gets SIGWINCH and sees 30x100")
        s.wait_regex(r"^winch 30x100\ntui[$]$")
        run(s, 'echo "size=$(stty size) cols=$(tput cols)"', "size=30 100 cols=100")
        info = s.info()
        t.eq((info["rows"], info["cols"]), (30, 100), "the model has the new size")
        s.resize(10, 40)
        t.ok("10 40" in run(s, "stty size", "10 40"), "shrinking works too")


def test_colours(t):
    with sh() as s:
        s.send_line(r"printf '\033[1;31mRED\033[0m \033[38;2;1;2;3;48;5;200mRGB\033[0m \033[4;7mREV\033[0m "
                    r"\033[3;9;2mIT\033[0m\n'")
        s.wait_regex("^RED RGB REV IT$")
        row, col = s.find_regex("^RED ")
        cells = s.cells(row)
        c = cells[col]
        t.eq((c["ch"], c["fg"], c["bg"], c["attrs"], c["width"]), ("R", "idx:1", "default", ["bold"], 1),
             "SGR 1;31: fg idx:1 and bold")
        t.eq(cells[3]["attrs"], [], "SGR 0 resets")
        c = cells[4]
        t.eq((c["ch"], c["fg"], c["bg"]), ("R", "#010203", "idx:200"), "24-bit fg and 256-colour bg")
        t.eq(cells[8]["attrs"], ["underline", "reverse"], "underline and reverse")
        t.eq(cells[12]["attrs"], ["dim", "italic", "strike"], "dim, italic, strike")
        t.eq(len(cells), 80, "a row has one cell per column")
        t.eq(cells[40]["ch"], "", "a blank cell has ch ''")


def test_wide(t):
    with sh() as s:
        run(s, r"printf '\346\274\242|\n'", "\u6f22[|]")
        row, col = s.find_regex("^\u6f22")
        cells = s.cells(row)
        t.eq((col, cells[0]["ch"], cells[0]["width"]), (0, "\u6f22", 2), "a wide character is one cell of width 2")
        t.eq((cells[1]["ch"], cells[1]["width"]), ("", 0), "followed by its right half (width 0)")
        t.eq(cells[2]["ch"], "|", "the next character is in column 2")
        run(s, r"printf 'a\346\274\242b\n'", "a\u6f22b")
        t.eq(s.find_regex("\u6f22b$")[1], 1, "find counts columns, not characters")


def test_bytes(t):
    prog = ("stty -echo; printf ready; read x; printf 'A\\033[1mB\\033[0m\\nC'; "
            "read y; printf \"got-$y\"; read z")
    with Term(["sh", "-c", prog]) as s:
        s.wait("ready")
        m = s.mark()
        s.send("\r")
        s.wait_regex("^C$")
        t.eq(s.bytes_since(m), b"A\x1b[1mB\x1b[0m\r\nC", "bytes after a mark are exactly what the program wrote")
        m2 = s.mark()
        t.eq(m2, m + len(b"A\x1b[1mB\x1b[0m\r\nC"), "the mark advanced by what was written")
        t.eq(s.bytes_since(m2), b"", "nothing written after the second mark yet")
        s.send("zz\r")
        s.wait("got-zz")
        t.eq(s.bytes_since(m2), b"got-zz", "and then exactly the new output")
        t.ok(s.bytes_since(0).startswith(b"ready"), "offset 0 is the start of the output")


def test_terminal_replies(t):
    prog = ("import os, termios, tty\n"
            "old = termios.tcgetattr(0); tty.setraw(0)\n"
            "os.write(1, b'\\x1b[5;10H\\x1b[6n'); r = b''\n"
            "while not r.endswith(b'R'): r += os.read(0, 1)\n"
            "os.write(1, b'\\x1b[c'); d = b''\n"
            "while not d.endswith(b'c'): d += os.read(0, 1)\n"
            "termios.tcsetattr(0, termios.TCSADRAIN, old)\n"
            "print('\\ncpr=%r da=%r' % (r, d))\n"
            "input()\n")
    with Term([sys.executable, "-c", prog]) as s:
        screen = s.wait("cpr=")
        t.ok("cpr=b'\\x1b[5;10R'" in screen, "a cursor position query is answered like a terminal (CPR)", screen)
        t.ok("da=b'\\x1b[?" in screen, "a device attributes query is answered (DA)", screen)


def test_keys(t):
    prog = ("import os, tty\n"
            "tty.setraw(0); buf = b''\n"
            "os.write(1, b'ready\\r\\n')\n"
            "while True:\n"
            "    c = os.read(0, 1)\n"
            "    if c != b'\\r': buf += c; continue\n"
            "    if buf == b'app': os.write(1, b'\\x1b[?1h')\n"
            "    os.write(1, b'got=%s\\r\\n' % buf.hex().encode()); buf = b''\n")
    with Term([sys.executable, "-c", prog]) as s:
        s.wait("ready")
        s.keys("C-]", "Up", "Down", "Right", "Left", "PgUp", "PgDn", "Home", "M-x", "Tab", "BS", "C-c", "Esc",
               "F1", "F5", "Enter")
        want = b"\x1d\x1b[A\x1b[B\x1b[C\x1b[D\x1b[5~\x1b[6~\x1b[H\x1bx\t\x7f\x03\x1b\x1bOP\x1b[15~"
        s.wait("got=" + want.hex())
        t.ok(True, "keys by name send xterm's bytes (normal cursor mode: CSI)")
        s.send("app\r")
        s.wait("got=" + b"app".hex())
        t.ok("app_cursor" in s.info()["modes"], "the model sees DECCKM set")
        s.keys("Up", "End", "Enter")
        s.wait("got=" + b"\x1bOA\x1bOF".hex())
        t.ok(True, "in application cursor mode Up and End are SS3, as xterm sends them")
        s.send(b"\xff\x00\r")
        s.wait("got=ff00")
        t.ok(True, "send(bytes) writes any bytes, NUL and invalid UTF-8 included")


def test_wait_failures(t):
    with sh() as s:
        start = time.monotonic()
        try:
            s.wait("never-on-this-screen", timeout=1)
            t.ok(False, "a wait for text that never appears fails")
        except AssertionError as e:
            took = time.monotonic() - start
            msg = str(e)
            t.ok("timeout waiting for text 'never-on-this-screen'" in msg, "a wait that times out says what it waited for", msg)
            t.ok(PROMPT in msg and "screen:" in msg, "and shows the whole screen", msg)
            t.ok(0.9 <= took < 10, "it fails after its timeout (%.2f s for 1 s)" % took)
        try:
            s.wait_absent(PROMPT, timeout=0.5)
            t.ok(False, "wait_absent of text that stays fails")
        except AssertionError as e:
            t.ok("to disappear" in str(e), "wait_absent of text that stays fails", str(e))
        try:
            s.wait_regex("(unclosed")
            t.ok(False, "a bad regex is refused")
        except AssertionError as e:
            t.ok("bad regex" in str(e), "a bad regex is refused", str(e))
        run(s, "echo gone-soon", "gone-soon")
        s.send_line("clear")
        t.ok("gone-soon" not in s.wait_absent("gone-soon"), "wait_absent returns once the text is gone")


def test_exit(t):
    with Term(["sh", "-c", "echo bye; exit 3"]) as s:
        t.eq(s.exit_status(), 3, "exit_status is the program's exit code")
        t.ok("bye" in s.screen(), "its output is on the screen")
        t.ok(s.info()["exited"], "info says it exited")
    with Term(["sh", "-c", "echo going-away; exit 4"]) as s:
        start = time.monotonic()
        try:
            s.wait("never-printed", timeout=60)
            t.ok(False, "a wait fails when the program exits first")
        except AssertionError as e:
            took = time.monotonic() - start
            msg = str(e)
            t.ok("program exited with status 4" in msg, "a wait fails early when the program exits first", msg)
            t.ok("going-away" in msg, "after its last output was read", msg)
            t.ok(took < 10, "without waiting for the timeout (%.2f s of 60)" % took)
    with Term(["sh", "-c", "printf 'last words'; exit 0"]) as s:
        t.ok("last words" in s.wait("last words"), "output written just before exiting is still found")
    with Term(["sleep", "1000"]) as s:
        t.eq(s.exit_status(timeout=0.2), None, "exit_status is None while it runs")
        s.kill(signal.SIGKILL)
        t.eq(s.exit_status(), 128 + 9, "a program killed by SIGKILL has status 137")
    try:
        Term(["no-such-program-xyz"])
        t.ok(False, "a program that cannot run is an error")
    except RuntimeError as e:
        t.ok("cannot run 'no-such-program-xyz'" in str(e), "a program that cannot run is an error saying why", str(e))


def test_flood(t):
    r, w = os.pipe()
    try:
        prog = "seq 1 700000; echo DONE; echo finished >&%d; exec sleep 1000" % w
        with Term(["sh", "-c", prog], pass_fds=(w,)) as s:
            os.close(w)
            w = -1
            # No command runs while we wait here: vtdrive must keep reading
            # the PTY on its own, or seq blocks and never gets to the pipe.
            ready = select.select([r], [], [], 120)[0]
            t.ok(bool(ready) and os.read(r, 100) == b"finished\n",
                 "a program writes 4.8 MB to the PTY while no command runs, and finishes")
            screen = s.wait_regex("^700000\nDONE$")
            total = s.info()["total"]
            want = sum(len(str(i)) + 2 for i in range(1, 700001)) + len("DONE\r\n")
            t.eq(total, want, "every byte was read (\\n is \\r\\n on a PTY)")
            data = s.bytes_since(0)
            t.ok(len(data) == want and data.endswith(b"699999\r\n700000\r\nDONE\r\n"),
                 "and kept", "%d bytes, ending %r" % (len(data), data[-40:]))
            t.eq(s.info()["scrollback"], 10000, "the model keeps 10000 lines of history", screen)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    # More than the 64 MiB kept: the oldest output is dropped.
    with Term(["sh", "-c", "head -c 70000000 /dev/zero | tr '\\0' x; echo; echo DONE; exec sleep 1000"]) as s:
        s.wait_regex("^DONE$", timeout=300)
        total = s.info()["total"]
        t.eq(total, 70000000 + len("\r\nDONE\r\n"), "70 MB of output are all read")
        r = s._call({"cmd": "bytes", "since": 0, "limit": 10})
        kept = total - r["from"]
        t.ok(r["dropped"] == r["from"] > 0 and 56 << 20 <= kept <= 64 << 20,
             "at most 64 MiB are kept; the reply says how many requested bytes were dropped", r)
        t.eq(s.bytes_since(total - 12), b"xxxx\r\nDONE\r\n", "the newest are there")
        try:
            s.bytes_since(0, limit=10)
            t.ok(False, "bytes_since a dropped mark fails")
        except AssertionError as e:
            t.ok("no longer kept" in str(e), "bytes_since a dropped mark fails", str(e))
    # Input and output at once: 270 KB of input come back twice (the
    # terminal's echo and tr's copy) while they are still being sent; the
    # send must keep reading or both sides block.
    with Term(["tr", "y", "z"]) as s:
        lines = ["%05d %s end" % (i, "y" * 80) for i in range(3000)]
        s.send("".join(l + "\r" for l in lines))
        s.wait_regex(r"^02999 z+\nz+ end$")
        t.ok(True, "sending 270 KB to a program that echoes it while it is sent does not deadlock")
        # (The line discipline drops echoes it has no room for, and writes
        # others between a line and its "\r\n": only the program's lines are
        # sure to be whole.)
        copies = re.findall(rb"([0-9]{5}) z{80} end", s.bytes_since(0))
        t.ok(copies == [b"%05d" % i for i in range(3000)], "every line came back, in order",
             "%d lines" % len(copies))


def test_settle(t):
    with Term(["sh", "-c", "echo start; exec sleep 1000"]) as s:
        s.wait("start")
        start = time.monotonic()
        screen = s.settle(200)
        t.ok("start" in screen and time.monotonic() - start < 10, "settle returns once the program is quiet")
    with Term(["yes"]) as s:
        try:
            s.settle(200, timeout=1)
            t.ok(False, "settle fails for a program that keeps writing")
        except AssertionError as e:
            t.ok("kept writing" in str(e), "settle fails for a program that keeps writing", str(e))


def test_title_cursor(t):
    prog = r"printf '\033]2;my title\007\033[?25l\033[2J\033[3;7HX'; read x"
    with Term(["sh", "-c", prog]) as s:
        s.wait("X")
        info = s.info()
        t.eq(info["title"], "my title", "the window title (OSC 2)")
        t.eq(info["cursor"], [2, 7], "the cursor position (row, col), 0-based")
        t.eq(info["cursor_visible"], False, "the cursor is hidden (DECTCEM)")


def test_fullscreen(t):
    pager = shutil.which("less")
    editor = shutil.which("vi")
    if not pager and not editor:
        t.skip("a full-screen program draws and restores the screen", "neither less nor vi is installed")
        return
    d = tempfile.mkdtemp(prefix="tui")
    path = os.path.join(d, "lines.txt")
    with open(path, "w") as f:
        f.write("".join("line %d\n" % i for i in range(1, 201)))
    try:
        with sh() as s:
            run(s, "echo before-fullscreen", "before-fullscreen")
            if pager:
                s.send_line("less " + path)
            else:
                s.send_line("vi -u NONE " + path)
            screen = s.wait_regex("^line 23$")
            info = s.info()
            t.ok(info["alt_screen"], "%s switches to the alternate screen" % ("less" if pager else "vi"))
            t.ok("before-fullscreen" not in screen and screen.startswith("line 1\n"),
                 "and draws a full screen from the top", screen)
            if pager:
                s.keys("Down")
                s.wait_regex("^line 24$")
                t.eq(s.row(0), "line 2", "Down (sent as the mode wants it) scrolls by a line")
                s.keys("PgDn")
                s.wait_regex("^line 47$")
                t.eq(s.row(0), "line 25", "PgDn scrolls by a screen")
                s.send("q")
            else:
                s.send(":q\r")
            # The shell's next prompt (anything typed before it would be
            # echoed by the terminal driver ahead of it).
            screen = s.wait_regex("lines[.]txt\n" + "tui[$]$")
            t.ok(not s.info()["alt_screen"], "after quitting the primary screen is back")
            t.ok("before-fullscreen" in screen and "line 1\n" not in screen,
                 "with the shell's screen as it was, without the full-screen program's text", screen)
            run(s, "echo after-fullscreen", "after-fullscreen")
            t.ok(True, "and the shell works on")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_close(t):
    s = Term(["sh", "-c", "sleep 1000 & echo bg=$!; set -m; sleep 999 & echo job=$!; echo started; exec sleep 998"])
    screen = s.wait("started")
    pids = [s.pid]
    for line in screen.split("\n"):
        if line.startswith(("bg=", "job=")):
            pids.append(int(line.split("=")[1]))
    t.eq(len(pids), 3, "the program, a background child and a job in its own process group", screen)
    t.ok(all(pid_alive(p) for p in pids), "all running")
    s.close()
    t.ok(wait_until(lambda: not any(pid_alive(p) for p in pids)), "close() ends every process of the session")
    s.close()
    t.ok(True, "close() twice is fine")
    try:
        s.screen()
        t.ok(False, "a closed Term refuses commands")
    except RuntimeError:
        t.ok(True, "a closed Term refuses commands")


if __name__ == "__main__":
    run_tests(Tap(), [test_echo_and_wait, test_size_and_winch, test_colours, test_wide, test_bytes,
                      test_terminal_replies, test_keys, test_wait_failures, test_exit, test_flood, test_settle,
                      test_title_cursor, test_fullscreen, test_close])
