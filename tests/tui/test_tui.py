#!/usr/bin/env python3
"""The supervisor screen, driven like a user drives it: the real `corral`
in a real PTY (tests/tui/vtdrive), keys in, the screen read back through
corral's terminal model, against a real server over its socket."""
import os
import re

from tuilib import Tap, Term, World, run_tests, wait_until

w = World()
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
ENV.pop("NO_COLOR", None)
ENV.pop("COLORTERM", None)  # 24-bit colour only where a test asks for it


def tui(*args, rows=30, cols=120, env=None):
    return Term([os.environ.get("CORRAL_BIN", "corral")] + list(args), rows=rows, cols=cols,
                env=env or ENV, cwd=w.ws)


def new_session(name, *cmd, size=None):
    args = ["new", "-n", name, "-C", w.ws]
    if size:
        args += ["--size", size]
    r = w.corral(*(args + ["--"] + list(cmd)))
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def kill(sid):
    w.corral("kill", str(sid))


def status_bar(t):
    return t.screen().split("\n")[-1]


def ready(term):
    """Supervisor focus taking keys: the badge says SUPERVISOR once the keys
    typed as the focus changed (here: as the screen started) are no longer
    held (it says KEYS HELD meanwhile)."""
    return term.supervisor_ready()


def bar_shows(term, mode):
    """Whether the status bar (the last row) comes to show this mode badge:
    waited for, since a screen can be read in the middle of a frame."""
    rows = term.info()["rows"]
    try:
        term.wait_regex("^(.*\n){%d} %s " % (rows - 1, mode), timeout=10)
        return True
    except AssertionError:
        return False


def test_attach_shows_sessions(t):
    a = new_session("alpha", "sh", "-c", "echo alpha-says-$((40+2)); exec sleep 1000")
    b = new_session("beta", "sh", "-c", "exec sleep 1000")
    with tui() as term:
        screen = term.wait("alpha")
        t.ok("alpha" in screen and "beta" in screen, "attach lists existing sessions in the sidebar", screen)
        t.ok(re.search(r"beta \d+ workspace-write running", screen.split("\n")[0]),
             "and shows the most recently used one in the pane", screen)
        t.ok(" user" in screen.split("\n")[0], "grouped under the client that made them", screen)
        # The screen can be caught mid-frame: wait for the status bar's own text.
        bar = term.wait_regex("SUPERVISOR .*2/64 live").split("\n")[-1]
        t.ok("SUPERVISOR" in bar, "in supervisor focus, said in the status bar", bar)
        t.ok("2/64 live" in bar, "with the live sessions and the store size", bar)
    kill(a)
    kill(b)


def test_new_session_and_typing(t):
    with tui() as term:
        term.wait("SUPERVISOR")
        term.send("n")
        term.wait("New session")
        term.send("typed-one")
        term.keys("Tab", "Tab")  # directory, profile: the defaults
        term.keys("Enter")
        term.wait_regex("typed-one [0-9]+ workspace-write running")
        t.ok(bar_shows(term, "PANE"), "n starts a session and focuses its pane", term.screen())
        term.send_line("echo typed-$((6*7))")
        screen = term.wait("typed-42")
        t.ok(True, "typed text reaches its shell and its output shows in the pane")
        term.send("\x1d")
        term.wait("SUPERVISOR")
        t.ok(bar_shows(term, "SUPERVISOR"), "C-] returns to supervisor focus", status_bar(term))
        # C-] twice sends it to the session: cat shows it as ^].
        term.send_line("")
        term.keys("Enter")  # focus again
        term.wait("PANE")
        term.send_line("cat -v")
        term.send("\x1d")
        term.wait("C-] again")
        term.send("\x1d")
        term.send_line("")
        term.wait("^]")
        t.ok(bar_shows(term, "PANE"), "C-] twice sends C-] to the session and stays in the pane",
             term.screen())
        term.send("\x03")
        sid = int(re.search(r"typed-one (\d+)", screen).group(1))
    kill(sid)


def test_layouts(t):
    ids = [new_session("lay-%d" % i, "sh", "-c", "echo pane-%d-ready; exec sleep 1000" % i) for i in range(3)]
    with tui() as term:
        term.wait("pane-2-ready")
        ready(term)
        titles = lambda s: len(re.findall(r"lay-\d \d+ workspace-write", s))
        t.eq(titles(term.screen()), 1, "single layout: one pane")
        term.send("t")
        term.wait("vertical split")
        s = term.wait("pane-1-ready")
        t.eq(titles(s.split("\n")[0]), 2, "vertical split: two panes side by side", s)
        term.send("t")
        term.wait("horizontal split")
        s = term.wait("pane-1-ready")
        rows = s.split("\n")
        t.ok(titles(rows[0]) == 1 and any(titles(r) == 1 for r in rows[2:]), "horizontal split: two panes stacked", s)
        term.send("t")
        term.wait("grid")
        s = term.wait("pane-0-ready")
        t.ok(all(("pane-%d-ready" % i) in s for i in range(3)), "grid: all three shown", s)
        term.send("z")
        s = term.wait("zoom")
        t.ok(" user" not in s.split("\n")[0], "z zooms: the sidebar is gone", s)
        term.send("z")
        term.send("t")
        term.wait("single")
    for sid in ids:
        kill(sid)


def test_resize_follows_terminal(t):
    with tui(rows=30, cols=120) as term:
        term.wait("SUPERVISOR")
        term.send("n")
        term.wait("New session")
        term.send("sized")
        term.keys("Enter")
        term.wait_regex("sized [0-9]+ workspace-write running")
        term.send_line("stty size")
        # 30 rows - status - title = 28; 120 - sidebar 28 - separator = 91.
        term.wait("28 91")
        t.ok(True, "the session's terminal is the pane's size (stty size agrees)")
        term.resize(40, 150)
        term.wait_regex("^(.*\n){39} PANE")  # laid out again: the status bar on the new last row
        term.send_line("stty size")
        # 150 - the sidebar, which follows the terminal (35) - separator.
        term.wait("38 114")
        t.ok(True, "resizing the outer terminal resizes the session")
        sid = int(re.search(r"sized (\d+)", term.screen()).group(1))
    kill(sid)


def test_detach_and_reattach(t):
    sid = new_session("keep", "sh", "-c", "for i in 1 2 3; do echo kept-line-$i; done; exec sleep 1000")
    # The pane's screen once the session's terminal has the pane's size (until
    # then the columns it lacks are dotted): what attaching again shows.
    settled = "\u00b7\u00b7\u00b7"
    with tui() as term:
        term.wait("kept-line-3")
        first = term.wait_absent(settled)
        ready(term)
        term.send("q")
        status = term.exit_status()
        t.eq(status, 0, "q detaches with status 0")
        t.ok("keep running" in term.screen(), "and says the sessions keep running", term.screen())
    t.ok(w.corral("ls").stdout.count("running") >= 1, "the session still runs after detach")
    with tui() as term:
        term.wait("kept-line-3")
        again = term.wait_absent(settled)
        body = lambda s: [l[29:] for l in s.split("\n")[1:5]]
        t.eq(body(again), body(first), "attaching again shows the pane exactly as it was")
    kill(sid)


def test_two_tuis_live(t):
    sid = new_session("shared", "sh", "-c", "read x; echo shared-$x-done; exec sleep 1000")
    with tui() as one, tui() as two:
        one.wait("shared")
        two.wait("shared")
        w.corral("send", "--enter", str(sid), "ping")
        one.wait("shared-ping-done")
        two.wait("shared-ping-done")
        t.ok(True, "two attached TUIs both show new output live")
    kill(sid)


def test_session_escapes_stay_inside(t):
    sid = new_session("noisy", "sh", "-c", "read x; printf '\\033]52;c;c2VjcmV0\\007\\033]0;evil title\\007"
                      "\\033]2;other\\033\\\\\\033[?2004h\\033[?1049h\\033[?1000h\\033[?25l\\033=\\033[5 q"
                      "\\007\\033]7;file://x/tmp\\007\\033[?1049lquiet-2\\n'; exec sleep 1000")
    with tui() as term:
        term.wait("noisy")
        mark = term.mark()
        modes = sorted(term.info()["modes"])
        w.corral("send", "--enter", str(sid), "go")
        term.wait("quiet-2")
        out = term.bytes_since(mark)
        t.ok(b"\x1b]" not in out, "no OSC (clipboard, title) reaches the outer terminal", out[:300])
        t.ok(b"\x07" not in out, "no bell byte reaches it", out[:300])
        for seq in (b"\x1b[?2004h", b"\x1b[?1049h", b"\x1b[?1000h", b"\x1b=", b"\x1b[5 q"):
            t.ok(seq not in out, "mode change %r stays in the model" % seq, out[:300])
        info = term.info()
        t.eq(info["title"], "", "the outer terminal's title is untouched")
        t.eq(sorted(info["modes"]), modes, "the outer terminal's modes (bracketed paste, mouse, keypad) are the "
             "screen's own, untouched by the session's")
        s = term.wait("\u00b7 other")
        t.ok("\u00b7 other" in s.split("\n")[0], "the title shows, as text, in the pane's title row", s)
    kill(sid)


def test_bell_is_a_mark(t):
    a = new_session("ringer", "sh", "-c", "read x; printf '\\007rang\\n'; exec sleep 1000")
    b = new_session("other", "sh", "-c", "exec sleep 1000")  # selected: newest
    with tui() as term:
        term.wait("ringer")
        mark = term.mark()
        w.corral("send", "--enter", str(a), "x")
        s = term.wait_regex("!ringer")
        t.ok(True, "a bell from a session becomes a mark in the sidebar")
        t.ok(b"\x07" not in term.bytes_since(mark), "and never a beep", s)
    kill(a)
    kill(b)


def test_fullscreen_program(t):
    sid = new_session("pager", "sh", "-c", "seq 1 500 > nums.txt; exec less nums.txt")
    # less up first: a resize that came while it starts (after it read the
    # size, before it took SIGWINCH) would be lost to it.
    wait_until(lambda: "nums.txt" in w.corral("screen", str(sid)).stdout)
    with tui(rows=30, cols=120) as term:
        # Resized to its pane (28 rows): lines 1-27 and less's prompt.
        s = term.wait_regex("│27\n.*│(:|nums)")
        rows = s.split("\n")
        t.ok(rows[1][29:].strip() == "1" and rows[2][29:].strip() == "2", "less draws from the pane's top", s)
        t.ok(re.match(r"^.{29}(:|nums\.txt)", rows[28]), "its prompt on the pane's last row", s)
        ready(term)
        term.keys("Enter")  # focus
        term.wait("PANE")
        term.send(" ")  # a page down inside less
        s = term.wait_regex("│28\n.*│29\n")
        t.ok(rows[1] != s.split("\n")[1], "keys reach the full-screen program", s)
        term.send("q")  # less quits: the shell session's command ends
        term.wait("exited 0")
        t.ok(True, "quitting it ends the session cleanly")
    kill(sid)


def test_scrollback_and_search(t):
    sid = new_session("long", "sh", "-c", "i=1; while [ $i -le 300 ]; do echo entry-$i; i=$((i+1)); done; "
                      "exec sleep 1000")
    with tui() as term:
        term.wait("entry-300")
        ready(term)
        term.keys("PgUp")
        s = term.wait("SCROLL")
        t.ok("entry-300" not in s, "PgUp scrolls the pane back", s)
        term.send("G")
        term.wait("entry-300")
        term.send("/")
        term.wait("Search")
        term.send("entry-42")
        term.keys("Enter")
        s = term.wait_regex("entry-42$")
        pos = term.find_regex("entry-42$")
        cell = term.cell(pos[0], pos[1]) if pos else {}
        normal = term.cell(pos[0] - 1, pos[1]) if pos else {}
        t.ok(pos is not None and (cell["bg"], cell["attrs"]) != (normal["bg"], normal["attrs"]),
             "search scrolls to the match and highlights it", s)
        term.keys("Esc")
        term.wait("entry-300")
        t.ok(bar_shows(term, "SUPERVISOR"), "Esc leaves scroll mode back to the live screen")
    kill(sid)


def test_a_flood_comes_in_frames(t):
    """A flood is drawn as frames (the screen cannot show more than ~60 a
    second; server/watch.c): the pane shows its end at once, and scrolling
    back or searching brings the whole history, so lines that scrolled
    past between two frames are there, in order."""
    go = os.path.join(w.ws, "go-flood")
    sid = new_session("flood", "sh", "-c", "i=1; while [ $i -le 40 ]; do echo pre-$i; i=$((i+1)); done; "
                      "while [ ! -e go-flood ]; do sleep 0.05; done; seq 1 200000; echo flood-over; exec sleep 1000")
    with tui() as term:
        term.wait("pre-40")
        ready(term)
        open(go, "w").close()
        s = term.wait("flood-over", timeout=60)
        t.ok("200000" in s, "a flood ends on screen as it ends", s)
        # PgUp on a pane whose history came in frames asks for the whole
        # history again; the page scrolled back stays while it comes.
        term.keys("PgUp")
        term.wait("SCROLL")

        def whole_page():
            s = term.screen()
            nums = [int(x) for x in re.findall(r"\u2502(\d+)\s*$", s, re.M)]
            return "flood-over" not in s and len(nums) > 10 and all(b == a + 1 for a, b in zip(nums, nums[1:]))
        t.ok(wait_until(whole_page, timeout=20), "scrolled back, the flood's lines follow one another without a gap",
             term.screen())
        term.keys("Esc")
        term.wait("flood-over")
        term.send("/")
        term.wait("Search")
        term.send("195000")
        term.keys("Enter")
        term.wait("SCROLL")
        s = term.wait_regex("195000$")
        t.ok("194999" in s and "195001" in s,
             "a line that scrolled past between frames is in the history when searched", s)
        term.keys("Esc")
    os.unlink(go)
    kill(sid)


def test_scroll_mode_keys(t):
    """G stays in scroll mode; the hint shows the search key '/'; the search
    prompt starts with the last query selected (typing replaces it); n past
    the oldest match goes on from the newest, saying so."""
    sid = new_session("scrolly", "sh", "-c", "i=1; while [ $i -le 300 ]; do echo row-$i; i=$((i+1)); done; "
                      "exec sleep 1000")
    with tui() as term:
        term.wait("row-300")
        ready(term)
        term.keys("PgUp")
        bar = term.wait_regex("^ SCROLL ").split("\n")[-1]
        t.ok("/ scroll-search" in bar, "the scroll-mode hint shows the / key", bar)
        term.send("G")
        screen = term.wait("row-300")
        t.ok(bar_shows(term, "SCROLL"), "G goes to the newest line and stays in scroll mode", screen)
        term.send("/")
        screen = term.wait_regex(" search$")  # the field's row, after the box's title
        t.ok("Search the scrollback" in screen, "the first search prompt starts empty", screen)
        term.send("row-299")
        term.keys("Enter")
        term.wait_regex("row-299$")
        term.send("n")  # older: there is none, so it goes on from the newest
        screen = term.wait("passed the oldest line, went on from the newest")
        t.ok(True, "n past the oldest match wraps around with a notice")
        term.send("/")
        screen = term.wait_regex(" search +row-299$")
        t.ok(True, "the prompt shows the last query again")
        term.send("row-42")
        term.keys("Enter")
        screen = term.wait_regex("row-42$")
        t.ok("not found" not in screen.split("\n")[-1], "typing replaced the selected query", screen)
    kill(sid)


def test_search_steps_through_a_line(t):
    """n and N go from match to match, also between matches on one line:
    the current match (drawn apart from the others) moves along the line
    before it goes to another one."""
    sid = new_session("several", "sh", "-c", "echo 'hit0'; echo 'line hitA hitB hitC'; exec sleep 1000")
    with tui() as term:
        term.wait("hitC")
        ready(term)
        term.send("/")
        term.wait("Search")
        term.send("hit")
        term.keys("Enter")
        term.wait("SCROLL")
        row, col = term.find("hitA")

        def style(c):
            cell = term.cell(row, c)
            return (cell["fg"], cell["bg"], tuple(cell["attrs"]))

        a, b, c = col, col + 5, col + 10

        def current_is(x, others):
            for _ in range(100):  # 5 s: a frame is drawn within 16 ms of the key
                if all(style(x) != style(o) for o in others) and style(others[0]) == style(others[1]):
                    return True
                term.settle(50)
            return False

        t.ok(current_is(c, [a, b]), "the search starts at the newest match, hitC", term.screen())
        term.send("n")
        t.ok(current_is(b, [a, c]), "n goes to the match before it on the same line, hitB", term.screen())
        term.send("n")
        t.ok(current_is(a, [b, c]), "n again: hitA", term.screen())
        term.send("N")
        t.ok(current_is(b, [a, c]), "N goes back along the line: hitB", term.screen())
        term.send("N")
        t.ok(current_is(c, [a, b]), "N again: hitC", term.screen())
        term.send("N")  # past the newest: from the oldest, hit0
        term.wait("passed the newest line, went on from the oldest")
        t.ok(current_is(a, [a, b]) or style(a) == style(c), "N past hitC goes on from the oldest", term.screen())
    kill(sid)


def sidebar_names(screen):
    """The session names in the sidebar, top to bottom."""
    return [m.group(1) for m in (re.match(r"^ \S[! ](\S+) ", row) for row in screen.split("\n")[1:-1]) if m]


def test_selection_stops_at_the_ends(t):
    a = new_session("end-a", "sh", "-c", "exec sleep 1000")
    b = new_session("end-b", "sh", "-c", "exec sleep 1000")  # the newest: first, selected
    with tui() as term:
        term.wait("end-a")
        ready(term)
        screen = term.settle(100)  # a whole frame: the sidebar to its last row
        names = sidebar_names(screen)
        t.eq(names[:2], ["end-b", "end-a"], "the newest session first", screen)
        term.send("kj")
        screen = term.wait_regex("end-a [0-9]+ workspace-write")
        t.ok(True, "k on the first row stays there, so j then selects the second")
        term.send("j" * (len(names) + 2) + "k")
        screen = term.wait_regex("│ %s [0-9]+ workspace-write" % names[-2])
        t.ok(True, "j on the last row stays there, so k then selects the one above it")
    kill(a)
    kill(b)


def test_kill_asks_first(t):
    sid = new_session("victim", "sh", "-c", "exec sleep 1000")
    with tui() as term:
        term.wait("victim")
        ready(term)
        term.send("x")
        term.wait("Kill victim")
        term.wait("y yes")  # once keys typed as it opened are no longer held
        term.send("n")
        term.wait_absent("Kill victim")
        t.ok("running" in w.corral("ls").stdout.split(str(sid))[1].split("\n")[0], "x then n keeps the session")
        ready(term)
        term.send("x")
        term.wait("y yes")
        term.send("y")
        term.wait_regex("victim [0-9]+ workspace-write killed")
        t.ok(True, "x then y kills it, and the pane says so")


def test_mouse_click_selects(t):
    a = new_session("first-click", "sh", "-c", "echo in-first; exec sleep 1000")
    b = new_session("second-click", "sh", "-c", "echo in-second; exec sleep 1000")
    with tui() as term:
        term.wait("in-second")
        row, col = term.find("first-click")
        # xterm's SGR mouse report (what ncurses asks for): press and release.
        term.send("\x1b[<0;%d;%dM\x1b[<0;%d;%dm" % (col + 1, row + 1, col + 1, row + 1))
        term.wait("in-first")
        t.ok(term.screen().split("\n")[0].find("first-click") > 28, "a click on a sidebar row selects it")
    kill(a)
    kill(b)


def test_help_lists_keys(t):
    cfg = os.path.join(w.config, "corral", "config")
    w.write_config("[keys]\nnew = N\nsearch = / C-s\n")
    with tui(rows=70) as term:
        ready(term)
        term.send("?")
        s = term.wait("never read as keys")  # the help's last line: all of it is on the screen
        t.ok(re.search(r"N\s+new", s) is not None, "the help overlay shows the configured bindings", s)
        t.ok(re.search(r"  / C-s\s+search ", s) is not None,
             "an action's keys are apart by blanks, so the key / reads as itself", s)
        t.ok("Approval dialog" in s and re.search(r"e\s+no, with a note for the agent", s)
             and re.search(r"n Esc\s+no, and the agent is told to stop", s),
             "and the approval dialog's keys", s)
        t.ok(re.search(r"click a pane\s+focus it", s) and re.search(r"wheel\s+scroll", s),
             "and what the mouse does", s)
        term.send("q")
        term.wait_absent("Keys (")
    os.unlink(cfg)


def test_drawing(t):
    sid = new_session("paint", "sh", "-c", "printf '\\033[38;5;196mR\\033[0m \\033[38;2;0;255;0mG\\033[0m "
                      "\\033[1mB\\033[0m\\033[4mU\\033[0m\\033[7mV\\033[0m \\346\\274\\242x-end\\n'; exec cat")
    with tui() as term:
        s = term.wait("x-end")
        ready(term)
        row, col = term.find("R G")
        cells = term.cells(row)
        t.eq(cells[col]["fg"], "idx:196", "a 256-colour cell keeps its colour", cells[col])
        t.eq(cells[col + 2]["fg"], "idx:46", "an RGB cell is drawn as the nearest of 256 colours", cells[col + 2])
        t.ok("bold" in cells[col + 4]["attrs"] and "underline" in cells[col + 5]["attrs"]
             and "reverse" in cells[col + 6]["attrs"], "bold, underline and reverse are kept", cells[col + 4:col + 7])
        t.eq((cells[col + 8]["width"], cells[col + 10]["ch"]), (2, "x"), "a wide character takes two columns", s)
        term.keys("Enter")
        term.wait("PANE")
        term.send("abc")
        term.wait("abc")
        term.settle(100)  # a whole frame: one that came in two reads can leave the cursor on its way
        r, c = term.find("abc")
        info = term.info()
        t.eq((info["cursor"], info["cursor_visible"]), ([r, c + 3], True),
             "in pane focus the cursor is the session's cursor, in its pane", term.screen())
    kill(sid)


def test_many_marks_drawn(t):
    """Every combining mark the terminal model keeps on a cell is drawn,
    not only the four a curses cell holds, in the cell's colours, also when
    the frame after draws the row again."""
    marks = "".join(chr(0x301 + k) for k in range(7))
    sid = new_session("marks", "sh", "-c", "printf 'x \\033[32mo%s\\033[0m y-end\\n'; exec cat" %
                      "".join("\\%03o\\%03o" % tuple(chr(0x301 + k).encode()) for k in range(7)))
    with tui() as term:
        term.wait("y-end")
        ready(term)
        term.settle(100)
        row, col = term.find("x ")
        cell = term.cell(row, col + 2)
        t.eq(cell["ch"], "o" + marks, "all seven marks are on the cell", cell)
        t.eq(cell["fg"], "idx:2", "in the cell's colour", cell)
        after = term.cell(row, col + 4)
        t.eq((after["ch"], after["fg"]), ("y", "default"), "and the cell after is as it was", after)
        term.keys("Enter")
        term.wait("PANE")
        term.send("typed")
        term.wait("typed")
        term.settle(100)
        t.eq(term.cell(row, col + 2)["ch"], "o" + marks, "still all there after more frames", term.screen())
        info = term.info()
        r, c = term.find("typed")
        t.eq(info["cursor"], [r, c + 5], "the cursor is back where curses put it", term.screen())
    kill(sid)


def test_themes(t):
    for name in ("default", "light", "solarized-dark", "gruvbox", "high-contrast", "mono"):
        with tui("--theme", name) as term:
            term.wait("SUPERVISOR")
            rows = term.info()["rows"]
            c = term.cell(rows - 1, 1)
            if name == "mono":
                t.ok(c["fg"] == "default" and c["bg"] == "default" and c["attrs"],
                     "theme mono: no colours, attributes only", c)
            else:
                t.ok(c["bg"] != "default" or c["fg"] != "default", "theme %s loads and colours the status bar" % name, c)
    with tui(env=dict(ENV, NO_COLOR="1")) as term:
        term.wait("SUPERVISOR")
        c = term.cell(term.info()["rows"] - 1, 1)
        t.eq((c["fg"], c["bg"]), ("default", "default"), "NO_COLOR selects mono")


def test_bad_theme_error(t):
    path = os.path.join(w.base, "broken.theme")
    with open(path, "w") as f:
        f.write("[colors]\nstatus = black on cyan\nsidebar = purpel\n")
    with tui("--theme", path) as term:
        status = term.exit_status()
        s = term.screen()
        t.eq(status, 1, "a bad theme stops the TUI before it starts, with status 1")
        t.ok("broken.theme:3:" in s.replace("\n", "") and "purpel" in s.replace("\n", ""),
             "with file:line and the bad value", s)


def dialog_text(screen):
    """The text of a dialog drawn right of the session list: each row's
    part after the list's border, the rows joined and their spaces
    collapsed, so that a line the dialog wrapped reads whole."""
    parts = [row.split("\u2502", 1)[1] for row in screen.split("\n") if "\u2502" in row]
    return " ".join(" ".join(parts).split())


def test_bad_theme_in_config(t):
    cfg = os.path.join(w.config, "corral", "config")
    w.write_config("[ui]\nmouse = true\n\ntheme = gruvbx\n")
    with tui(rows=70, cols=220) as term:
        ready(term)
        s = term.wait("config: 1 error, ? lists it")
        t.ok("config:4: [ui] theme = gruvbx cannot be used" in status_bar(term)
             and "older settings" not in status_bar(term),
             "a [ui] theme that does not load: the screen opens anyway and says so (the server does not "
             "read [ui]: its settings are not older)", s)
        term.send("?")
        # The dialog wraps its lines where the paths in them (this clone's
        # among them) make it: its text is read across its rows.
        term.wait_regex("used\\)$")
        s = dialog_text(term.screen())
        t.ok(cfg + ":4: [ui] theme = gruvbx" in s and "unknown theme 'gruvbx'" in s
             and "(the default theme is used)" in s,
             "? names the config file, the line that sets it, and why", s)
        term.send("q")
        term.wait_absent("any other key closes")
        ready(term)
        term.send("q")
        t.eq(term.exit_status(), 0, "and the screen detaches as ever")
    os.unlink(cfg)


def test_truecolour(t):
    cmd = "printf '\\033[38;2;255;100;0mX\\033[48;2;1;2;3mY\\033[0m \\033[38;5;202mZ\\033[0m true-end\\n'; " \
          "exec sleep 1000"
    sid = new_session("rgb", "sh", "-c", cmd)
    for env, config, want, why in [
            (dict(ENV, COLORTERM="truecolor"), "", "#ff6400", "COLORTERM=truecolor: RGB is drawn as RGB"),
            (dict(ENV, COLORTERM="24bit"), "", "#ff6400", "COLORTERM=24bit too"),
            (ENV, "[ui]\ntruecolor = on\n", "#ff6400", "[ui] truecolor = on without COLORTERM"),
            (dict(ENV, COLORTERM="truecolor"), "[ui]\ntruecolor = off\n", "idx:202",
             "[ui] truecolor = off: the nearest of 256"),
            (ENV, "", "idx:202", "a terminal that does not say it has 24-bit colour: the nearest of 256")]:
        w.write_config(config)
        with tui(env=env) as term:
            term.wait("true-end")
            row, col = term.find("XY Z")
            cells = term.cells(row)
            t.eq(cells[col]["fg"], want, why, cells[col])
            if want.startswith("#"):
                t.eq((cells[col + 1]["bg"], cells[col + 3]["fg"]), ("#010203", "idx:202"),
                     "an RGB background too, and a 256-colour cell stays one", cells[col:col + 4])
    os.unlink(os.path.join(w.config, "corral", "config"))
    kill(sid)


def test_demo(t):
    with tui("demo") as term:
        for name in ("demo-agent", "demo-shell", "demo-build", "demo-tests", "demo-download"):
            s = term.wait(name)
        t.ok(True, "corral demo shows its sessions, the agent's grouped apart")
        term.wait_regex(r"demo-tests\s+ws\s+\S1")
        t.ok(True, "and the failing one shows its exit code")
        ready(term)
        term.send("Q")
        term.wait("Stop the server")
        term.wait("y yes")
        term.send("y")
        t.eq(term.exit_status(), 0, "Q then y stops the server and leaves")
    w.server.wait()  # the server the world started has stopped
    w.start_server()


if __name__ == "__main__":
    run_tests(Tap(), [test_attach_shows_sessions, test_new_session_and_typing, test_layouts,
                      test_resize_follows_terminal, test_detach_and_reattach, test_two_tuis_live,
                      test_session_escapes_stay_inside, test_bell_is_a_mark, test_fullscreen_program,
                      test_scrollback_and_search, test_a_flood_comes_in_frames, test_scroll_mode_keys, test_selection_stops_at_the_ends,
                      test_kill_asks_first, test_mouse_click_selects, test_help_lists_keys, test_drawing,
                      test_themes, test_bad_theme_error, test_bad_theme_in_config, test_truecolour, test_demo,
                      # after the demo's restart: the sidebar is short of ended sessions again
                      test_search_steps_through_a_line, test_many_marks_drawn])
