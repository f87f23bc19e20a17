"""The TUI screen harness: run a program in a real PTY of a chosen size, send
it keys, and read its screen through corral's terminal model.

    from tuilib import Term, Tap, World, run_tests

    t = Term(["corral"], rows=24, cols=80, env=world.env)
    t.wait("sessions")             # the screen text, or AssertionError + screen
    t.keys("Down", "Enter")
    row, col = t.find("shell")
    t.cells(row)[col]["fg"]        # "default" | "idx:N" | "#rrggbb"
    t.close()

Term drives tests/tui/vtdrive (CORRAL_VTDRIVE names it; see README.md there
for its protocol).  Every wait is for an event (the screen changing, the
program exiting) and returns as soon as it happens; the timeout (30 s by
default, for slow CI machines) only bounds how long a missing event is
waited for.
"""
import atexit
import base64
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR") or os.path.dirname(_HERE),
                                "integration"))

from harness import CORRAL, TIMEOUT, Tap, World, pid_alive, run_tests, wait_until  # noqa: E402,F401

VTDRIVE = os.environ.get("CORRAL_VTDRIVE") or os.path.join(_HERE, "vtdrive")

# Keys as a terminal sends them (xterm).  Cursor keys and Home/End depend on
# the program's DECCKM mode and are in CURSOR_KEYS.
KEYS = {
    "Enter": "\r", "Return": "\r", "Tab": "\t", "S-Tab": "\x1b[Z", "BS": "\x7f",
    "Backspace": "\x7f", "Esc": "\x1b", "Space": " ",
    "PgUp": "\x1b[5~", "PgDn": "\x1b[6~", "Insert": "\x1b[2~", "Delete": "\x1b[3~",
    "F1": "\x1bOP", "F2": "\x1bOQ", "F3": "\x1bOR", "F4": "\x1bOS",
    "F5": "\x1b[15~", "F6": "\x1b[17~", "F7": "\x1b[18~", "F8": "\x1b[19~",
    "F9": "\x1b[20~", "F10": "\x1b[21~", "F11": "\x1b[23~", "F12": "\x1b[24~",
    "C-Space": "\x00", "C-@": "\x00", "C-[": "\x1b", "C-\\": "\x1c", "C-]": "\x1d",
    "C-^": "\x1e", "C-_": "\x1f", "C-?": "\x7f",
}
for _c in "abcdefghijklmnopqrstuvwxyz":
    KEYS["C-" + _c] = chr(ord(_c) - ord("a") + 1)
CURSOR_KEYS = {"Up": "A", "Down": "B", "Right": "C", "Left": "D", "Home": "H", "End": "F"}


def key_bytes(name, app_cursor=False):
    """The bytes of one key name: a KEYS or CURSOR_KEYS name, a single
    character (itself), or "M-" (Alt) before either."""
    if name in KEYS:
        return KEYS[name]
    if name in CURSOR_KEYS:
        return ("\x1bO" if app_cursor else "\x1b[") + CURSOR_KEYS[name]
    if len(name) == 1:
        return name
    if name.startswith("M-") and len(name) > 2:
        rest = name[2:]
        return "\x1b" + (rest if len(rest) == 1 else key_bytes(rest, app_cursor))
    raise ValueError("unknown key name %r (send text with send())" % name)


class VtdriveError(RuntimeError):
    """vtdrive itself failed (not the program under test)."""


class Term:
    """A program on a PTY of rows x cols, its screen modelled by vtdrive.

    argv: the program and its arguments (found on PATH).  env: its whole
    environment (default: this process's); TERM is set to term unless term
    is None, and LINES/COLUMNS are removed (they would override the PTY's
    size).  timeout: the default bound of every wait, in seconds."""

    def __init__(self, argv, rows=24, cols=80, env=None, cwd=None, term="xterm-256color",
                 timeout=TIMEOUT, pass_fds=()):
        e = dict(os.environ if env is None else env)
        if term is not None:
            e["TERM"] = term
        e.pop("LINES", None)
        e.pop("COLUMNS", None)
        self.argv = list(argv)
        self.timeout = timeout
        self.closed = False
        self._buf = bytearray()
        self._stderr = tempfile.TemporaryFile()
        if not os.access(VTDRIVE, os.X_OK):
            raise VtdriveError("vtdrive not found at %s (build it: make tests/tui/vtdrive, "
                               "or set CORRAL_VTDRIVE)" % VTDRIVE)
        self.proc = subprocess.Popen(
            [VTDRIVE, str(rows), str(cols), "--"] + self.argv, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=e, cwd=cwd, pass_fds=pass_fds)
        self._stderr_shown = False
        atexit.register(self.close)
        try:
            self.pid = self._call({"cmd": "screen"})["pid"]
        except VtdriveError:
            self.close()  # its stderr is in the exception
            raise

    # ---- protocol -----------------------------------------------------------

    def vtdrive_stderr(self):
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def _read_line(self, bound):
        end = time.monotonic() + bound
        fd = self.proc.stdout.fileno()
        scanned = 0  # a reply can be tens of MB: look at each byte once
        while (nl := self._buf.find(b"\n", scanned)) < 0:
            scanned = len(self._buf)
            left = end - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                raise VtdriveError("vtdrive did not answer within %.0f s" % bound)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self._died()
            self._buf += chunk
        line = bytes(self._buf[:nl])
        del self._buf[:nl + 1]
        return json.loads(line)

    def _died(self):
        st = self.proc.wait()
        self._stderr_shown = True
        raise VtdriveError("vtdrive exited with status %s; its stderr:\n%s" % (st, self.vtdrive_stderr()))

    def _call(self, req):
        """Send one command, return its reply (a dict, ok or not)."""
        if self.closed:
            raise VtdriveError("Term is closed")
        try:
            self.proc.stdin.write(json.dumps(req).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._died()
        # vtdrive answers within the command's own timeout; the margin is for
        # a vtdrive that hangs, which must not hang the test.
        return self._read_line(float(req.get("timeout", 0)) + 60)

    def _ok(self, req):
        r = self._call(req)
        if not r.get("ok"):
            raise AssertionError(self._explain(r))
        return r

    def _explain(self, r):
        msg = r.get("error", "failed")
        if "screen" in r:
            msg += "\n" + format_screen(r["screen"])
        return msg

    # ---- input --------------------------------------------------------------

    def send(self, data, timeout=None):
        """Write data (str: as UTF-8; bytes: as they are) to the program."""
        req = {"cmd": "send", "timeout": self._t(timeout)}
        if isinstance(data, bytes):
            req["data_b64"] = base64.b64encode(data).decode()
        else:
            req["data"] = data
        self._ok(req)

    def send_line(self, text):
        """text then Enter (a carriage return, as a terminal sends it)."""
        self.send(text + "\r")

    def keys(self, *names):
        """Press keys by name: "Enter", "Tab", "S-Tab", "BS", "Esc", "Space",
        "Up" "Down" "Left" "Right" "Home" "End" (CSI, or SS3 when the
        program has set application cursor mode, as xterm does), "PgUp",
        "PgDn", "Insert", "Delete", "F1".."F12", "C-a".."C-z", "C-]", "C-\\",
        "C-^", "C-_", "C-Space", "M-x" (Alt: Esc first)."""
        app = False
        if any((n[2:] if n.startswith("M-") else n) in CURSOR_KEYS for n in names):
            app = "app_cursor" in self.info()["modes"]
        self.send("".join(key_bytes(n, app) for n in names))

    # ---- screen -------------------------------------------------------------

    def _t(self, timeout):
        return self.timeout if timeout is None else timeout

    def wait(self, text, timeout=None):
        """Wait until the screen contains text; return the screen text.
        Rows are joined with "\\n" and their trailing blanks trimmed, so a
        prompt "$ " is found as "$".  Raises AssertionError with the screen
        on timeout or if the program exits first."""
        return self._ok({"cmd": "wait", "text": text, "timeout": self._t(timeout)})["screen"]

    def supervisor_ready(self):
        """Supervisor focus taking keys: the status bar's badge says
        SUPERVISOR once keys typed as the focus changed (the screen
        starting, C-], a dialog closing) are no longer held (it says KEYS
        HELD meanwhile).  Wait for it before sending supervisor keys."""
        return self.wait_regex("^ SUPERVISOR ")

    def wait_regex(self, pattern, timeout=None):
        """Wait for a POSIX extended regex (REG_NEWLINE: ^ and $ match at
        each row) to match the screen text; return the screen text."""
        return self._ok({"cmd": "wait", "regex": pattern, "timeout": self._t(timeout)})["screen"]

    def wait_match(self, pattern, timeout=None):
        """Like wait_regex, but return the groups: [whole match, group 1, ...]."""
        return self._ok({"cmd": "wait", "regex": pattern, "timeout": self._t(timeout)})["groups"]

    def wait_absent(self, text, timeout=None):
        """Wait until text is no longer on the screen; return the screen text."""
        return self._ok({"cmd": "wait", "absent": text, "timeout": self._t(timeout)})["screen"]

    def settle(self, ms=200, timeout=None):
        """Wait until the program has written nothing for ms milliseconds;
        return the screen text.  Only for asserting that nothing more
        happens: to wait for something, use wait()."""
        return self._ok({"cmd": "settle", "quiet_ms": ms, "timeout": self._t(timeout)})["screen"]

    def screen(self):
        """The visible screen: one line per row joined with "\\n"."""
        return self.info()["text"]

    def info(self):
        """Everything vtdrive knows: text, rows, cols, cursor [row, col],
        cursor_visible, title, modes (list: app_cursor, app_keypad,
        bracketed_paste, mouse_*, cursor_visible, alt_screen), alt_screen,
        scrollback, pid, exited, total (bytes written so far)."""
        return self._ok({"cmd": "screen"})

    def row(self, n):
        return self.screen().split("\n")[n]

    def cells(self, row):
        """The cells of a row (negative: history, -1 newest): dicts with ch
        ("" for a blank or the right half of a wide character), fg, bg
        ("default" | "idx:N" | "#rrggbb"), attrs (list of "bold", "dim",
        "italic", "underline", "blink", "reverse", "conceal", "strike") and
        width (1, 2 for a wide character, 0 for its right half).  The index
        is the column."""
        return self._ok({"cmd": "cells", "row": row})["cells"]

    def cell(self, row, col):
        return self.cells(row)[col]

    def find(self, text):
        """(row, col) of the first occurrence of text on the screen, top to
        bottom, in screen columns (a wide character counts 2); None if
        absent."""
        r = self._ok({"cmd": "find", "text": text})
        return (r["row"], r["col"]) if r["found"] else None

    def find_regex(self, pattern):
        r = self._ok({"cmd": "find", "regex": pattern})
        return (r["row"], r["col"]) if r["found"] else None

    def resize(self, rows, cols):
        """Resize the PTY (the program's foreground process group gets
        SIGWINCH) and the model."""
        self._ok({"cmd": "resize", "rows": rows, "cols": cols})

    # ---- raw output and the process -----------------------------------------

    def mark(self):
        """The number of bytes the program has written so far."""
        return self.info()["total"]

    def bytes_since(self, mark, limit=None):
        """Exactly what the program wrote from byte offset mark on (at most
        limit bytes).  Only the last 64 MiB are kept: an older mark raises
        AssertionError."""
        req = {"cmd": "bytes", "since": mark}
        if limit is not None:
            req["limit"] = limit
        r = self._ok(req)
        if r["dropped"]:
            raise AssertionError("%d bytes after mark %d are no longer kept" % (r["dropped"], mark))
        return base64.b64decode(r["data_b64"])

    def exit_status(self, timeout=None):
        """The program's exit status (128 + N if killed by signal N), or None
        if it is still running after timeout seconds."""
        r = self._ok({"cmd": "status", "timeout": self._t(timeout)})
        return r["status"] if r["exited"] else None

    def kill(self, sig=signal.SIGTERM, group=False):
        """Send sig to the program (group=True: to its process group)."""
        self._ok({"cmd": "kill", "signal": int(sig), "group": group})

    def close(self):
        """End the program (SIGHUP to its process group, then SIGKILL to
        everything in its session) and vtdrive.  Idempotent; also runs at
        interpreter exit."""
        if self.closed:
            return
        self.closed = True
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            # Stuck in a command nobody waits for: SIGTERM makes it clean up.
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        err = self.vtdrive_stderr()
        if err and not self._stderr_shown:
            sys.stderr.write(err)
        self._stderr.close()
        self._buf = bytearray()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def format_screen(text):
    """A screen for a failure message: numbered rows between rules."""
    lines = text.split("\n")
    width = max([len(l) for l in lines] + [20])
    out = ["+" + "-" * (width + 4)]
    for i, l in enumerate(lines):
        out.append("%3d|%s" % (i, l))
    out.append("+" + "-" * (width + 4))
    return "screen:\n" + "\n".join(out)
