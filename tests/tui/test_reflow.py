#!/usr/bin/env python3
"""The supervisor screen's panes through width changes: narrowing the
terminal (so the pane, and the session, get narrower) and widening it again
leaves a long line whole, wrapped at each width, in the pane as in `corral
screen`; characters are drawn at the width the model gives them."""
import os

from tuilib import Tap, Term, World, run_tests

# The pane's widths below are the test's: the sidebar is pinned, not the
# default that follows the terminal (test_layout.py tests that).
w = World(config="[ui]\nsidebar-width = 28\n")
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
ENV.pop("NO_COLOR", None)
SIDEBAR = 28  # [ui] sidebar-width as set above; the pane starts one column after it

SEQ = " ".join(str(i) for i in range(1, 61))  # what `seq -s " " 1 60` prints: 170 columns


def tui(rows, cols):
    return Term([os.environ.get("CORRAL_BIN", "corral")], rows=rows, cols=cols, env=ENV, cwd=w.ws)


def new_shell(name):
    r = w.corral("new", "-n", name, "-C", w.ws, "--", "sh")
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def pane_rows(screen):
    """The pane's text, row by row (what is right of the sidebar), from a
    screen a wait returned (a screen read later may be mid-frame)."""
    return [row[SIDEBAR + 1:].rstrip() for row in screen.split("\n")[:-1]]


def test_narrow_and_widen(t):
    sid = new_shell("reflowed")
    with tui(30, 200) as term:  # the pane: 171 columns
        term.wait("reflowed")
        term.supervisor_ready()
        term.keys("Enter")
        term.wait_regex("PANE")
        term.send_line("echo; seq -s ' ' 1 60; echo DONE-$((6*7))")
        screen = term.wait_regex("^.*DONE-42$")
        t.ok(SEQ in pane_rows(term.wait(SEQ)), "at 171 columns the line is one row of the pane", screen)

        term.resize(30, 100)  # the pane: 71 columns
        parts = [SEQ[:71].rstrip(), SEQ[71:142].rstrip(), SEQ[142:]]
        screen = term.wait_regex("%s\n.*%s\n.*%s$" % tuple(parts))
        rows = pane_rows(screen)
        t.ok(parts[0] in rows and parts[1] in rows and parts[2] in rows,
             "narrowed to 71 columns it wraps in three rows, nothing cut", screen)
        t.ok(SEQ[:71].rstrip() in w.corral("screen", str(sid)).stdout.split("\n"),
             "corral screen shows the session the same")

        term.resize(30, 200)
        screen = term.wait_regex("│%s$" % SEQ)
        t.ok(SEQ in pane_rows(screen), "widened again the line is whole: ...59 60, not cut at 71", screen)
        t.ok(SEQ in w.corral("screen", str(sid)).stdout.split("\n"), "and in corral screen")

        # The shell's cursor stayed on its line: output goes on below.
        term.send_line("echo AFTER-$((6*7))")
        screen = term.wait_regex("%s\n(.*\n)*.*│AFTER-42$" % SEQ)
        t.ok(True, "and what comes after stays below it")
        term.send("\x1d")
        term.wait("SUPERVISOR")
    w.corral("kill", str(sid))


def test_wide_characters_in_a_pane(t):
    sid = new_shell("emoji")
    with tui(20, 100) as term:
        term.wait("emoji")
        term.supervisor_ready()
        term.keys("Enter")
        term.wait_regex("PANE")
        term.send_line("printf '\\033[H\\033[2J\\360\\237\\247\\252|\\360\\237\\237\\240|\\033[1;7HZ\\n'")
        term.wait("\U0001F9EA|\U0001F7E0|Z")
        row, col = term.find("\U0001F9EA|")
        cells = term.cells(row)
        t.eq((cells[col]["width"], cells[col + 2]["ch"], cells[col + 3]["width"], cells[col + 5]["ch"],
              cells[col + 6]["ch"]), (2, "|", 2, "|", "Z"),
             "an emoji of Unicode 11 and 12 takes two columns of the pane, as in the session's model")
        term.send("\x1d")
        term.wait("SUPERVISOR")
    w.corral("kill", str(sid))


if __name__ == "__main__":
    run_tests(Tap(), [test_narrow_and_widen, test_wide_characters_in_a_pane])
