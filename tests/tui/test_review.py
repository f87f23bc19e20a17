#!/usr/bin/env python3
"""The supervisor screen's review of a session, driven like a user drives it
(real server, a real interactive bash with corral's shell hook, the real
TUI in a real PTY).  The session runs commands that write files, one that
needs an approval (given with corral approve before the screen opens), and
stays running.  Then: l opens its timeline with the commands and the
approval; f shows one kind at a time; / finds a command; Enter on a
command opens its diff in the diff view, on the approval its request and
answer in a box; r on command 2 replays the recording from that command's
marker (command 2's output, "command 2" on the status row), space pauses
and n goes to the next command.  Last, after a server restart, E shows the
session among the ended ones and l opens its timeline, d its last diff."""
import os
import re
import sys

from tuilib import CORRAL, Tap, Term, World, run_tests, wait_until

sys.path.insert(0, os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR") or
                                os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
from harness import read_jsonl  # noqa: E402

RULES = 'prefix_rule(pattern=["touch", "asked.txt"], decision="prompt", justification="needs a yes")\n'

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "review.rules"), "w") as f:
    f.write(RULES)
w.start_server()


class Monitor:
    """A subscribed connection: approvals and a session's terminal bytes."""

    def __init__(self):
        self.c = w.connect("monitor")
        self.c.call({"cmd": "subscribe"})

    def next(self, pred):
        return self.c.next_event(pred)

    def screen_until(self, sid, marker):
        self.c.screen_until(sid, marker)


def scripted_session():
    """A bash session: four commands, the third approved; it stays running."""
    mon = Monitor()
    sid = mon.c.call({"cmd": "new", "argv": ["bash"], "cwd": w.ws, "name": "reviewed"})["session"]["id"]
    mon.c.call({"cmd": "watch", "session": sid})

    def line(text, marker=None):
        mon.c.call({"cmd": "input", "session": sid, "data": text + "\r"})
        if marker:
            mon.screen_until(sid, marker)

    line("echo ready-$((40+2))", "ready-42")
    line("echo second-output-$((1+1)) | tee second.txt", "second-output-2")
    line("touch asked.txt")
    a = mon.next(lambda m: m.get("event") == "approval" and m["approval"]["kind"] == "command")["approval"]
    r = w.corral("approve", str(a["id"]))
    assert r.returncode == 0, r.stdout + r.stderr
    line("sleep 1; echo fourth-$((2+2))", "fourth-4")
    path = os.path.join(w.session_dir(sid), "events.jsonl")

    def settled():
        names = [x["event"] for x in read_jsonl(path)]
        return names.count("command_started") >= 4 and names.count("changes") == names.count("command_started")
    assert wait_until(settled), read_jsonl(path)
    mon.c.close()
    return sid


SID = scripted_session()


def tui(rows=40, cols=150):
    env = dict(w.env, LANG="C.UTF-8")
    env.pop("NO_COLOR", None)
    return Term([CORRAL], rows=rows, cols=cols, env=env, cwd=w.ws)


def entry_kinds(screen):
    """The kinds of the timeline's rows on the screen (right of the sidebar)."""
    return [m.group(1) for m in (re.search("\u2502 [0-9]{2}:[0-9]{2}:[0-9]{2}  ([a-z]+) ", r)
                                 for r in screen.split("\n")) if m]


def wait_kinds(term, want):
    """The screen once the timeline's rows are of the kinds want (or the
    last screen seen, when they never are)."""
    last = [""]

    def check():
        last[0] = term.screen()
        return entry_kinds(last[0]) == want
    wait_until(check)
    return last[0]


def open_timeline(term):
    term.wait("reviewed")
    term.supervisor_ready()
    term.keys("l")
    return term.wait_regex("timeline .* session %d \\(reviewed\\)(.|\n)*q close" % SID)


def test_timeline_opens(t):
    with tui() as term:
        screen = open_timeline(term)
        t.ok(re.search("#2 +exit 0 .*\\+1 ~0 -0  echo second-output-\\$\\(\\(1\\+1\\)\\) \\| tee second.txt", screen),
             "l: the session's commands, numbered as corral diff numbers them, with their diff counts", screen)
        t.ok("#4" in screen and "echo fourth-$((2+2))" in screen, "every one of them", screen)
        t.ok("approval" in screen and "approved" in screen and "touch asked.txt" in screen,
             "and the approval, with its answer", screen)
        t.ok("session    reviewed: bash" in screen, "and the session's start", screen)
        term.keys("q")
        screen = term.wait_absent("q close")
        t.ok("timeline" not in screen, "q closes it", screen)


def test_kind_filter(t):
    with tui() as term:
        open_timeline(term)
        screen = term.screen()
        t.ok({"session", "command", "approval"} <= set(entry_kinds(screen)), "at first every kind is shown", screen)
        term.keys("f")
        term.wait_regex("command: 4 of [0-9]+")
        # A frame can come in more than one read: until its rows are all there.
        screen = wait_kinds(term, ["command"] * 4)
        t.eq(entry_kinds(screen), ["command"] * 4, "f: only commands are shown", screen)
        t.ok("touch asked.txt" in screen and "approved" not in screen,
             "the approval is hidden, the command it asked for is not", screen)
        term.keys("f")
        term.wait_regex("approval: 1 of [0-9]+")
        screen = wait_kinds(term, ["approval"])
        t.eq(entry_kinds(screen), ["approval"], "f again: only the approval", screen)
        t.ok("tee second.txt" not in screen, "and no command", screen)


def test_search(t):
    with tui() as term:
        open_timeline(term)
        term.keys("g", "/")
        term.wait("Search the timeline")
        term.send("tee\r")
        term.wait_absent("Search the timeline")

        def selected():  # its row in the selection's colours (the others have the terminal's)
            pos = term.find("echo second-output-$((1+1)) | tee second.txt")
            return pos is not None and term.cell(pos[0], pos[1])["bg"] != "default"
        t.ok(wait_until(selected), "/ finds the command and selects it", term.screen())
        term.keys("/")
        term.wait("Search the timeline")
        term.send("no-such-text\r")
        term.wait("'no-such-text' not found")
        t.ok(True, "a query found nowhere says so")


def test_enter_opens_diff_and_approval(t):
    with tui() as term:
        open_timeline(term)
        term.keys("g", "/")
        term.wait("Search the timeline")
        term.send("tee\r")
        term.wait_absent("Search the timeline")
        term.keys("Enter")
        screen = term.wait("n/N file")
        screen = term.wait("+second-output-2")
        t.ok("command 2" in screen and "second.txt" in screen,
             "Enter on a command: its diff in the diff view (the file and its lines)", screen)
        term.keys("q")
        term.wait_absent("n/N file")
        screen = term.wait("q close")
        t.ok("timeline" in screen, "q leaves the diff for the timeline", screen)
        term.keys("/")
        term.wait("Search the timeline")
        term.send("approved\r")
        term.wait_absent("Search the timeline")
        term.keys("Enter")
        screen = term.wait("j/k scroll, q close")
        screen = term.wait('"decision": "approved"')
        t.ok('"request": {' in screen and '"line": "touch asked.txt"' in screen and '"answer": "once"' in screen,
             "Enter on the approval: its whole request and answer", screen)
        term.keys("q")
        term.wait_absent("j/k scroll, q close")


def test_replay_from_command(t):
    with tui() as term:
        open_timeline(term)
        term.keys("g", "/")
        term.wait("Search the timeline")
        term.send("tee\r")
        term.wait_absent("Search the timeline")
        term.keys("r")
        term.wait_regex("replay .* paused .* command 2 of 4")
        term.wait("second-output-2")
        screen = term.settle()  # paused: nothing more comes
        t.ok("fourth-4" not in screen and "# touch asked.txt" not in screen,
             "r on command 2: the replay plays it from its marker and pauses where it ends", screen)
        term.keys("n")
        screen = term.wait_regex("replay .* paused .* command 3 of 4")
        t.ok("fourth-4" not in screen, "n: the next command's start", screen)
        term.keys("n")
        term.wait_regex("replay .* command 4 of 4")
        term.keys(*["-"] * 6)
        term.wait_regex("replay .* 1/64x")
        term.keys("Space")
        term.wait_regex("replay .* playing ")
        term.keys("Space")
        term.wait_regex("replay .* paused .* command 4 of 4")
        screen = term.settle()  # paused: nothing more comes
        t.ok("fourth-4" not in screen, "space plays and pauses (command 4 sleeps first: 64 s at 1/64)", screen)
        term.keys(*["+"] * 12)
        term.wait_regex("replay .* 64x")
        term.keys("Space")
        screen = term.wait_regex("replay .* the end ")
        screen = term.wait("fourth-4")
        t.ok(True, "+ speeds it up, space plays on to the end")
        term.keys("q")
        screen = term.wait_absent("replay \u00b7")
        t.ok("timeline" in screen, "q leaves the replay for the timeline", screen)


def test_replay_key(t):
    with tui() as term:
        term.wait("reviewed")
        term.supervisor_ready()
        term.keys("r")
        screen = term.wait_regex("replay .* session %d \\(reviewed\\) .* playing" % SID)
        screen = term.wait("fourth-4")
        t.ok(True, "r in supervisor focus replays the selected session from its start")
        term.keys("Esc")
        term.wait_absent("replay \u00b7")


def test_ended_after_restart(t):
    w.stop()
    w.start_server()
    with tui() as term:
        term.supervisor_ready()
        term.keys("E")
        screen = term.wait_regex("^ ended +\u2502[^\n]*\n[^\n]* reviewed ")
        t.ok(True, "E: the session that ended with the old server is listed among the ended")
        screen = term.wait_regex("reviewed %d \u00b7 ended \u00b7 its last screen" % SID)
        screen = term.wait("fourth-4")
        t.ok(True, "selected, the panes show its last screen, rebuilt from its recording")
        term.keys("Enter")
        screen = term.wait("ended session: l timeline, r replay")
        t.ok(True, "a key for live sessions says what works on an ended one")
        term.supervisor_ready()
        term.keys("l")
        screen = term.wait_regex("timeline .* session %d \\(reviewed\\)(.|\n)*q close" % SID)
        t.ok("tee second.txt" in screen and "touch asked.txt" in screen,
             "l opens its timeline from its files", screen)
        term.keys("q")
        term.wait_absent("q close")
        term.supervisor_ready()
        term.keys("d")
        screen = term.wait("n/N file")
        t.ok("command 4" in screen, "d: its last command's diff, from the snapshot ids its log kept", screen)
        term.keys("q")
        term.wait_absent("n/N file")
        term.supervisor_ready()
        term.keys("E")
        screen = term.wait_absent("reviewed")
        t.ok(True, "E again hides them")


run_tests(Tap(), [test_timeline_opens, test_kind_filter, test_search, test_enter_opens_diff_and_approval,
                  test_replay_from_command, test_replay_key, test_ended_after_restart])
