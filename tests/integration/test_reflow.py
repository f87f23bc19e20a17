#!/usr/bin/env python3
"""The server's terminal model as `corral screen` and `corral ls` show it:
a line that wrapped stays whole through a resize (narrower, then wider
again, as tmux reflows it), characters take the columns glibc's wcwidth
gives them (emoji from Unicode 10 on are two wide), and `corral ls` keeps
its columns under names in CJK or with emoji."""
import ctypes
import locale

from harness import Tap, World, run_tests, wait_until

w = World()
w.start_server()

SEQ = " ".join(str(i) for i in range(1, 61))  # what `seq -s " " 1 60` prints


def screen(sid):
    r = w.corral("screen", str(sid))
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")


def new_shell(c, cols, rows, name=None):
    req = {"cmd": "new", "argv": ["sh"], "cwd": w.ws, "cols": cols, "rows": rows}
    if name:
        req["name"] = name
    return c.call(req)["session"]["id"]


def type_and_wait(c, sid, line, marker):
    c.call({"cmd": "input", "session": sid, "data": line + "\r"})
    wait_until(lambda: any(r.startswith(marker) for r in screen(sid)))


def test_resize_keeps_the_line_whole(t):
    c = w.connect("reflow")
    sid = new_shell(c, 120, 24)
    type_and_wait(c, sid, "echo; seq -s ' ' 1 60; echo DONE-$((6*7))", "DONE-42")
    rows = screen(sid)
    t.ok(SEQ[:120].rstrip() in rows, "at 120 columns the line takes two rows", rows[:6])
    at = rows.index(SEQ[:120].rstrip())
    t.eq(rows[at + 1], SEQ[120:], "the second one has the rest")

    r = w.corral("resize", str(sid), "80x24")
    t.eq(r.returncode, 0, "corral resize to 80 columns", r.stderr)
    rows = screen(sid)
    at = rows.index(SEQ[:80].rstrip())
    t.eq(rows[at + 1:at + 3], [SEQ[80:160].rstrip(), SEQ[160:]],
         "at 80 columns it wraps in three rows, nothing cut", rows[at:at + 4])

    r = w.corral("resize", str(sid), "120x24")
    t.eq(r.returncode, 0, "corral resize back to 120 columns", r.stderr)
    rows = screen(sid)
    t.ok(SEQ[:120].rstrip() in rows, "widened again, the first row is whole up to column 120", rows[:6])
    at = rows.index(SEQ[:120].rstrip()) if SEQ[:120].rstrip() in rows else 0
    t.eq(rows[at + 1], SEQ[120:], "and the rest of the line follows: ...44 45 .. 60, not ...19 20")
    t.ok(any(r.startswith("DONE-42") for r in rows[at + 2:]), "the shell's output after it stays below")

    w.corral("resize", str(sid), "200x24")
    t.ok(SEQ in screen(sid), "at 200 columns the whole line is one row")
    # The shell goes on where its cursor was.
    type_and_wait(c, sid, "echo AFTER-$((6*7))", "AFTER-42")
    t.ok(SEQ in screen(sid), "and stays whole after more output")
    c.call({"cmd": "kill", "session": sid})
    c.close()


def test_emoji_widths(t):
    c = w.connect("widths")
    sid = new_shell(c, 40, 6)
    # The bars land after two columns of emoji each; Z is written at column
    # 7, right after the second bar.
    type_and_wait(c, sid, "printf '\\033[H\\033[2J\\360\\237\\247\\252|\\360\\237\\237\\240|\\033[1;7HZ\\n'; "
                  "echo END-$((6*7))", "END-42")
    t.eq(screen(sid)[0], "\U0001F9EA|\U0001F7E0|Z", "emoji take two columns, as glibc's wcwidth says")
    c.call({"cmd": "kill", "session": sid})
    c.close()


def display_width(s):
    """Columns as glibc's wcwidth under C.UTF-8 counts them."""
    libc = ctypes.CDLL(None)
    libc.wcwidth.restype = ctypes.c_int
    return sum(max(libc.wcwidth(ctypes.c_wchar(ch)), 0) for ch in s)


def test_ls_aligns_wide_names(t):
    locale.setlocale(locale.LC_ALL, "C.UTF-8")
    c = w.connect("ls-cjk")
    names = ["\u4f1a\u8bdd\u4e00", "plain", "\U0001F9EA test", "\u4f1a\u8bdd\u4e00\u4f1a\u8bdd\u4e00\u4f1a\u8bdd\u4e00x"]
    for n in names:
        new_shell(c, 80, 24, name=n)
    r = w.corral("ls")
    t.eq(r.returncode, 0, "corral ls", r.stderr)
    lines = r.stdout.split("\n")
    header = lines[0]
    state_col = display_width(header[:header.index("STATE")])
    client_col = display_width(header[:header.index("CLIENT")])
    rows = [line for line in lines[1:] if "ls-cjk" in line]
    t.eq(len(rows), len(names), "every session is listed", r.stdout)
    for line in rows:
        at = line.index("running")
        t.eq(display_width(line[:at]), state_col, "STATE starts in the same column: %r" % line)
        t.eq(display_width(line[:line.index("ls-cjk")]), client_col, "so does CLIENT: %r" % line)
    long_name = names[-1]
    t.ok(any(long_name[:8] + " running" in line for line in rows),
         "a name wider than the column is cut at a whole character", rows)
    c.close()


if __name__ == "__main__":
    run_tests(Tap(), [test_resize_keeps_the_line_whole, test_emoji_widths, test_ls_aligns_wide_names])
