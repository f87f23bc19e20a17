#!/usr/bin/env python3
"""The supervisor screen's snapshot views, driven like a user drives them
(real server, real commands, the real TUI in a real PTY): the sidebar's
+A ~M -D, d opens the last command's diff with its file list (risk marks
first) and coloured patch, n/N and ]/[ move through files and hunks, /
searches, w hides whitespace changes, a long patch is folded until opened,
D lists the session's commands, and u reverts a command after a
confirmation that lists what it will do, also in a session that ended
before the server restarted."""
import os
import re
import subprocess

from tuilib import CORRAL, TIMEOUT, Tap, Term, World, run_tests

w = World()
w.start_server()


def tui(rows=40, cols=140):
    env = dict(w.env, LANG="C.UTF-8")
    env.pop("NO_COLOR", None)
    return Term([CORRAL], rows=rows, cols=cols, env=env, cwd=w.ws)


def run(script):
    r = subprocess.run([CORRAL, "exec", "-C", w.ws, "-n", "maker", "--", "sh", "-c", script], env=w.env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert "exited with code 0" in r.stdout, r.stdout + r.stderr


with open(os.path.join(w.ws, "keep.txt"), "w") as f:
    f.write("a\n  b\nc\n")
with open(os.path.join(w.ws, "long.txt"), "w") as f:
    f.write("".join("old line %d\n" % i for i in range(600)))
run("printf 'a\\n    b\\nc\\nadded line\\n' > keep.txt && echo first > new.txt && "
    "mkdir -p sub/.git/hooks && echo evil > sub/.git/hooks/pre-commit && "
    "awk '{print \"new\" substr($0, 4)}' long.txt > l.tmp && mv l.tmp long.txt")


def fg_of(term, text):
    pos = term.find(text)
    return term.cell(pos[0], pos[1])["fg"] if pos else None


def test_diff_view(t):
    with tui() as term:
        screen = term.wait("+2~2-0")
        t.ok("maker" in screen.split("+2~2-0")[0].split("\n")[-1], "the sidebar shows the last command's +A ~M -D",
             screen)
        term.supervisor_ready()
        term.keys("d")
        screen = term.wait("hook pre-commit added")  # the list, which comes after the view's head
        # keep.txt's row in the list (the view's head names keep.txt too:
        # the command line that wrote it).
        screen = term.wait_regex("\u2502 M .*keep\\.txt")
        t.ok("command 1" in screen and "RISK hook" in screen and "hook pre-commit added" in screen,
             "d: the last command's diff, risk marks first", screen)
        t.ok("RISK hook: sub/.git/hooks \u2014 made inert by corral: hook pre-commit (5 bytes" in screen,
             "first of all what corral made inert after it, and what it would have run", screen)
        rows = screen.split("\n")
        sub_row = next((i for i, l in enumerate(rows) if "\u2502 A" in l and " sub " in l), None)
        keep_row = next((i for i, l in enumerate(rows) if "keep.txt" in l and "+2 -1" in l and "\u2502 M" in l), None)
        t.ok(keep_row is not None, "the file list: status, +x -y, path", screen)
        t.ok(sub_row is not None and keep_row is not None and sub_row < keep_row,
             "a risky file is listed before the others", screen)
        term.keys("n")
        screen = term.wait("+added line")
        t.ok(fg_of(term, "+added line") not in (None, "default"), "n: the next file; added lines are coloured",
             screen)
        term.keys("]")
        term.keys("/")
        term.send("ADDED\r")
        term.wait("not found: ADDED")
        term.keys("/")
        term.send("FIRST\r".lower())
        screen = term.wait_regex("n/N file.*\n.*\u2502\\+first")
        t.ok(True, "/ searches: the match comes to the top (smart case: capitals would match exactly)")
        term.keys("g", "n")
        term.wait_regex("n/N file.*\n.*\u2502modified keep.txt")
        term.keys("w")
        term.wait("whitespace ignored")
        screen = term.wait_absent("-  b")
        t.ok("+    b" not in screen and "+added line" in screen, "w: whitespace-only changes are hidden", screen)
        term.keys("w")
        screen = term.wait_absent("whitespace ignored")
        term.keys("g", "n", "n")
        screen = term.wait_regex("n/N file.*\n.*\u2502modified long.txt\n.*lines folded: Enter opens")
        t.ok("-old line 5" not in screen, "a long patch is folded until opened", screen)
        term.keys("Enter")
        screen = term.wait("-old line 0")
        t.ok(True, "Enter opens it")
        term.keys("q")
        screen = term.wait_absent("n/N file")
        t.ok(True, "q closes the view")


def test_commands_and_revert(t):
    with tui() as term:
        term.wait("+2~2-0")
        term.supervisor_ready()
        term.keys("D")
        screen = term.wait_regex("1 +\\+2 ~2 -0 .* RISK +printf")
        t.ok("Enter diff" in screen, "D lists the commands with counts and risk marks", screen)
        term.keys("u")
        term.wait("Revert command 1")
        screen = term.wait("n/Esc cancel")  # the dialog's last line: all of it is drawn
        t.ok("remove new.txt" in screen and "restore keep.txt" in screen,
             "u asks first, listing what the revert will do", screen)
        t.ok(os.path.exists(os.path.join(w.ws, "new.txt")), "nothing is done before the answer")
        term.keys("y")
        screen = term.wait("reverted command 1")
        t.ok(not os.path.exists(os.path.join(w.ws, "new.txt")) and
             open(os.path.join(w.ws, "keep.txt")).read() == "a\n  b\nc\n",
             "y: the command's changes are undone", screen)
        term.supervisor_ready()
        term.keys("D")
        screen = term.wait("corral revert")
        t.ok(re.search(r"by \S+: corral revert", screen), "and the revert is listed, as an action and by whom",
             screen)


def test_what_was_not_captured_is_never_hidden(t):
    """A command whose only change was left out of the snapshots (an
    excluded directory): the sidebar's counts carry a !, and d lists what
    was not captured without saying that no files changed."""
    run("mkdir -p node_modules/pkg && echo 1 > node_modules/pkg/index.js")
    with tui() as term:
        # Your finished corral exec runs are folded by now: unfold them.
        term.wait("finished")
        term.supervisor_ready()
        term.keys("Enter")
        screen = term.wait("+0~0-0!")
        t.ok(True, "the sidebar shows +0~0-0! for a command whose change was not captured")
        term.supervisor_ready()
        term.keys("j")  # from the folded row to that session's
        term.wait_regex("maker [0-9]+ workspace-write exited 0")
        term.keys("d")
        # The view's head comes before its list (the files are the
        # server's reply): wait for the list's line itself.
        screen = term.wait("not captured: node_modules/")
        t.ok("not captured: node_modules/ (excluded" in screen, "d lists what was not captured", screen)
        t.ok("(no files changed)" not in screen and "no captured file changed" in screen,
             "and never says no files changed beside it", screen)
        t.ok("(1 not captured)" in screen, "the counts line says it too", screen)
        term.keys("q")
        term.wait_absent("n/N file")


def test_revert_in_an_ended_session(t):
    """A session the server no longer has (it ended before a restart): E,
    Enter, d shows its last command's diff from the snapshot ids its log
    kept, and u reverts that command the same way, after the same
    confirmation."""
    run("echo late > late.txt")
    w.stop()
    w.start_server()
    with tui() as term:
        term.supervisor_ready()
        term.keys("E")
        term.wait_regex("^ ended +\u2502[^\n]*\n[^\n]* maker ")
        term.keys("Enter")
        term.wait("ended session: l timeline, r replay")
        term.supervisor_ready()
        term.keys("d")
        screen = term.wait("n/N file")
        screen = term.wait("late.txt")  # its list comes after the view's head
        t.ok("command" in screen, "d: the ended session's last command's diff", screen)
        term.keys("u")
        screen = term.wait("n/Esc cancel")
        t.ok("remove late.txt" in screen, "u asks first, listing what the revert will do", screen)
        t.ok(os.path.exists(os.path.join(w.ws, "late.txt")), "nothing is done before the answer")
        term.keys("y")
        screen = term.wait("not recorded: the session has ended")
        t.ok(not os.path.exists(os.path.join(w.ws, "late.txt")), "y: the ended session's command is undone", screen)


run_tests(Tap(), [test_diff_view, test_commands_and_revert, test_what_was_not_captured_is_never_hidden,
                  test_revert_in_an_ended_session])
