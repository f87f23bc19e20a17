#!/usr/bin/env python3
"""Keys, the mouse and pastes reach what they are meant for, driven like a
user drives the supervisor screen: the real `corral` in a real PTY
(tests/tui/vtdrive), against a real server.

- Focus safety: typing meant for a pane never becomes supervisor commands,
  not after the pane's program ended, not as the focus changes, and a
  confirmation is never answered by keys typed before it showed.
- What a program receives: a tiny Python program in raw mode inside a pane
  prints the bytes of every read in hex; each key, click, wheel turn and
  paste is sent as xterm sends it to the outer terminal, and the program
  must receive it as xterm would have sent it to the program."""
import json
import os
import re

from tuilib import Tap, Term, World, run_tests

w = World()
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
ENV.pop("NO_COLOR", None)

# Prints "got<N>:HEX" for its Nth read; switches on the modes given as
# arguments (1000, 1002, 1006, 2004) first, then says READY.
ECHO = os.path.join(w.ws, "keyecho.py")
with open(ECHO, "w") as f:
    f.write("""import os, sys, tty
tty.setraw(0)
for mode in sys.argv[1:]:
    os.write(1, b"\\x1b[?%sh" % mode.encode())
os.write(1, b"READY\\r\\n")
n = 0
while True:
    data = os.read(0, 65536)
    if not data:
        break
    n += 1
    os.write(1, b"got%d:%s\\r\\n" % (n, data.hex().encode()))
""")


def tui(*args, rows=30, cols=120, env=None):
    return Term([os.environ.get("CORRAL_BIN", "corral")] + list(args), rows=rows, cols=cols,
                env=env or ENV, cwd=w.ws)


def new_session(name, *cmd):
    r = w.corral(*(["new", "-n", name, "-C", w.ws, "--"] + list(cmd)))
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def sessions():
    return {s["id"]: s for s in json.loads(w.corral("ls", "--json").stdout)["sessions"]}


def kill_all():
    for sid, s in sessions().items():
        if s["state"] == "running":
            w.corral("kill", str(sid))


def ready(term):
    """Supervisor focus taking keys (the badge says KEYS HELD while keys
    typed as the focus changed are dropped)."""
    return term.supervisor_ready()


def pane_focus(term):
    return term.wait_regex("^ PANE ")


def status_bar(term):
    return term.screen().split("\n")[-1]


# ---- focus safety --------------------------------------------------------------


def test_typing_after_the_program_ends(t):
    """The program in the focused pane ends; the user, not looking, types
    the next command line.  Before: the line's letters ran as commands (p
    pinned, t changed the layout, n opened a form that Enter submitted)."""
    sid = new_session("ender", "sh", "-c", "read x; echo ended-$((1+1))")
    with tui() as term:
        term.wait("ender")
        ready(term)
        term.keys("Enter")
        pane_focus(term)
        before = sessions()
        term.send_line("go")
        term.wait("ended-2")
        term.wait_regex("ender %d workspace-write exited" % sid)
        term.send_line("clear; python3 -c pass")
        screen = term.wait("keys typed here go nowhere")
        t.ok("program has ended" in screen.split("\n")[-1] and "C-] leaves the pane" in screen.split("\n")[-1],
             "keys typed into the ended pane are swallowed, saying so and how to leave", screen)
        t.ok(re.search(r"^ PANE ", screen, re.M), "the pane keeps the focus", status_bar(term))
        term.keys("C-]")  # handled after every key of the line: the state below is final
        screen = ready(term)
        after = sessions()
        t.eq(sorted(after), sorted(before), "no session was created", after)
        t.ok(not any(s["pinned"] for s in after.values()), "none was pinned", after)
        t.ok("\u2502 single \u2502" in status_bar(term), "the layout did not change", status_bar(term))
        t.ok("New session" not in screen and term.exit_status(timeout=0) is None,
             "no form opened, and the screen is still attached", screen)


def test_enter_on_an_ended_session(t):
    """Enter on a session whose program ended, then typing: before, Enter
    said "nothing to type into" and left supervisor focus, so q detached."""
    sid = new_session("gone", "sh", "-c", "exit 3")
    with tui() as term:
        term.wait_regex("gone %d workspace-write exited" % sid)
        ready(term)
        term.keys("Enter")
        screen = pane_focus(term)
        t.ok("its program has ended" in screen, "Enter focuses the pane and says its program has ended", screen)
        term.send("qxyQ")
        term.keys("C-]")
        ready(term)
        t.ok(term.exit_status(timeout=0) is None and "Stop the server" not in term.screen(),
             "q, x y and Q typed there did nothing", term.screen())


def test_keys_as_the_focus_changes(t):
    """Keys typed within 300 ms of a focus change are not commands: C-]
    followed at once by t (typed ahead) leaves the layout alone; t typed
    once SUPERVISOR shows changes it."""
    sid = new_session("guarded", "sh")
    with tui() as term:
        term.wait("guarded")
        ready(term)
        term.keys("Enter")
        pane_focus(term)
        term.send("\x1dt")  # at once
        term.wait_regex("^ (KEYS HELD|SUPERVISOR) ")
        screen = term.wait("key typed as the focus changed was ignored")
        t.ok("\u2502 single \u2502" in status_bar(term), "t right after C-] is ignored, and said to be", screen)
        ready(term)
        term.send("t")
        term.wait("vertical split")
        t.ok(True, "once the badge says SUPERVISOR, t changes the layout")
        term.send("t")
        term.wait("horizontal split")
        term.send("tt")
        term.wait("single")
    w.corral("kill", str(sid))


def test_confirmation_not_answered_ahead(t):
    """x then y typed together never kills: the question holds keys typed
    before it was on the screen."""
    sid = new_session("keepme", "sh", "-c", "exec sleep 1000")
    with tui() as term:
        term.wait("keepme")
        ready(term)
        term.send("xy")
        term.wait("Kill keepme")
        screen = term.wait("y yes")  # the guard is over
        t.eq(sessions()[sid]["state"], "running", "y typed with x did not answer", screen)
        term.send("n")
        term.wait_absent("Kill keepme")
    w.corral("kill", str(sid))


def test_meta_binding(t):
    """An M- binding in [keys] acts in supervisor focus: Alt and the key
    come as ESC and the key together, which is the one key M-t."""
    cfg = os.path.join(w.config, "corral", "config")
    w.write_config("[keys]\nlayout = M-t\n")
    sid = new_session("alty", "sh")
    try:
        with tui() as term:
            term.wait("alty")
            ready(term)
            term.send("\x1bt")
            screen = term.wait("vertical split")
            t.ok(True, "M-t changes the layout", screen)
            term.send("t")  # t alone is no longer bound
            term.settle()
            t.ok("vertical split" in status_bar(term), "t alone does nothing", term.screen())
            term.send("\x1bt")
            term.wait("horizontal split")
            term.send("\x1bt")  # back to single (the layout is kept for the next screen)
            term.wait("grid")
            term.send("\x1bt")
            term.wait("single")
    finally:
        os.unlink(cfg)
        w.corral("kill", str(sid))


def test_small_terminal(t):
    """At 20x5 the sidebar shows the session's name (as much as fits) and
    dialogs stay inside their box, above the status bar."""
    sid = new_session("tinyname", "sh", "-c", "exec sleep 1000")
    with tui(rows=5, cols=20) as term:
        screen = ready(term)
        t.ok("tinyna" in screen.split("\n")[1][:10], "the sidebar shows the session's name", screen)
        term.send("x")
        # The question's answers and the badge are drawn in one frame, which
        # may reach the terminal in more than one read: wait for both.
        screen = term.wait_regex("y yes(.*\n)+ SUPERVISOR ")
        rows = screen.split("\n")
        t.ok("Kill tinyname" in rows[1] and rows[4].startswith(" SUPERVISOR "),
             "the kill question shows the name and its answers, above the status bar", screen)
        term.send("n")
        term.wait_absent("y yes")
        ready(term)
        term.send("n")
        term.wait("New session")
        screen = term.wait_regex("^  name")  # the field's row: the box is on the screen
        t.ok(screen.split("\n")[4].startswith(" SUPERVISOR "),
             "the new-session form shows its current field and leaves the status bar alone", screen)
        term.keys("Esc")
        term.wait_absent("New session")
    w.corral("kill", str(sid))


# ---- what a program receives ------------------------------------------------------


class EchoTerm(Term):
    """The screen with a keyecho session selected and its pane focused."""
    reads = 0  # the program's reads seen so far

    def received(self, data, want, what):
        """Send data to the outer terminal: the program's next reads must
        be want (a key may come in more than one read, in order)."""
        self.send(data)
        got = b""
        while len(got) < len(want):
            screen = self.wait("got%d:" % (self.reads + 1))
            for n, hexed in re.findall(r"got([0-9]+):([0-9a-f]*)", screen):
                if int(n) == self.reads + 1:
                    got += bytes.fromhex(hexed)
                    self.reads += 1
        if got != want:
            print("# %s: wanted %r, the program read %r" % (what, want, got))
        return got == want


def echo_tui(*modes):
    """A keyecho session with its modes on, then the screen with it selected
    (the newest) and its pane focused."""
    new_session("echo-" + "-".join(modes or ("plain",)), "python3", ECHO, *modes)
    term = EchoTerm([os.environ.get("CORRAL_BIN", "corral")], rows=30, cols=120, env=ENV, cwd=w.ws)
    term.wait("READY")
    ready(term)
    term.keys("Enter")
    pane_focus(term)
    return term


def test_modified_keys_reach_the_program(t):
    keys = [
        ("S-Left", "\x1b[1;2D"), ("S-Right", "\x1b[1;2C"), ("S-Up", "\x1b[1;2A"), ("S-Down", "\x1b[1;2B"),
        ("S-Home", "\x1b[1;2H"), ("S-End", "\x1b[1;2F"), ("S-Delete", "\x1b[3;2~"), ("S-Insert", "\x1b[2;2~"),
        ("S-PgUp", "\x1b[5;2~"), ("S-PgDn", "\x1b[6;2~"), ("C-Up", "\x1b[1;5A"), ("M-Left", "\x1b[1;3D"),
        ("C-S-Right", "\x1b[1;6C"), ("C-M-S-Up", "\x1b[1;8A"), ("C-Delete", "\x1b[3;5~"),
        ("S-F1", "\x1b[1;2P"), ("M-F1", "\x1b[1;3P"), ("C-F4", "\x1b[1;5S"), ("C-F5", "\x1b[15;5~"),
        ("S-F12", "\x1b[24;2~"), ("C-M-F5", "\x1b[15;7~"), ("C-S-F8", "\x1b[19;6~"),
        ("C-Space", "\x00"), ("F5", "\x1b[15~"), ("Up", "\x1b[A"), ("M-x", "\x1bx"),
    ]
    with echo_tui() as term:
        for name, seq in keys:
            t.ok(term.received(seq.encode(), seq.encode(), name), "%s reaches the program as %r" % (name, seq))


def test_mouse_reaches_the_program(t):
    with echo_tui("1000", "1006") as term:
        # The pane: screen columns 29.., its content from row 1.  A press
        # at screen row 5, column 40 is row 5, column 12 of the program's
        # screen (1-based, as the reports count).
        t.ok(term.received(b"\x1b[<0;41;6M", b"\x1b[<0;12;5M", "press"),
             "a click (SGR, as the program asked) reaches it relative to the pane")
        t.ok(term.received(b"\x1b[<0;41;6m", b"\x1b[<0;12;5m", "release"), "and its release")
        t.ok(term.received(b"\x1b[<2;30;2M", b"\x1b[<2;1;1M", "right press"),
             "the right button too, at the pane's first cell")
        term.received(b"\x1b[<2;30;2m", b"\x1b[<2;1;1m", "right release")
        t.ok(term.received(b"\x1b[<64;41;6M", b"\x1b[<64;12;5M", "wheel"), "the wheel goes to the program")
        t.ok(term.received(b"\x1b[<69;41;6M", b"\x1b[<69;12;5M", "shift wheel"), "with its modifiers")
        t.ok("SCROLL" not in status_bar(term), "and does not scroll the pane back", status_bar(term))
    kill_all()
    with echo_tui("1002") as term:
        # The normal encoding: CSI M, then 32 + button, column and row.
        t.ok(term.received(b"\x1b[<0;41;6M", b"\x1b[M" + bytes([32, 32 + 12, 32 + 5]), "press"),
             "without SGR, the normal encoding")
        t.ok(term.received(b"\x1b[<32;43;7M", b"\x1b[M" + bytes([64, 32 + 14, 32 + 6]), "drag"),
             "a drag, for a program that asked for drags (1002)")
        t.ok(term.received(b"\x1b[<0;43;7m", b"\x1b[M" + bytes([35, 32 + 14, 32 + 6]), "release"),
             "the release (button 3 in this encoding)")


def test_wheel_scrolls_without_mouse_mode(t):
    sid = new_session("wheel", "sh", "-c", "seq 1 200; exec sleep 1000")
    with tui() as term:
        term.wait("200")
        ready(term)
        term.send("\x1b[<64;41;6M")
        screen = term.wait_regex("^ SCROLL ")
        t.ok("wheel [3/" in screen or "[3/" in screen.split("\n")[0],
             "a program that did not ask for the mouse: the wheel scrolls the pane back", screen)
    w.corral("kill", str(sid))


def test_paste(t):
    with echo_tui("2004") as term:
        paste = b"\x1b[200~echo hi\rls -l\x1b[201~"
        t.ok(term.received(paste, b"\x1b[200~echo hi\rls -l\x1b[201~", "bracketed"),
             "a paste reaches a program that asked for bracketed paste, bracketed")
        evil = b"\x1b[200~safe\x1b[201~rm -rf ~\r\x1b[201~"
        t.ok(term.received(evil, b"\x1b[200~saferm -rf ~\r\x1b[201~", "bracket inside"),
             "a bracket end inside a paste's content never ends it early: it is taken out")
    kill_all()
    with echo_tui() as term:
        t.ok(term.received(b"\x1b[200~plain text\r\x1b[201~", b"plain text\r", "unbracketed"),
             "a program that did not ask gets the text alone")
        term.keys("C-]")
        ready(term)
        term.send(b"\x1b[200~tqn\x1b[201~")
        screen = term.wait("a paste is not commands")
        t.ok("\u2502 single \u2502" in status_bar(term) and "New session" not in screen,
             "a paste in supervisor focus is dropped, never read as keys", screen)


def cleaned(fn):
    def run(t):
        try:
            fn(t)
        finally:
            kill_all()
    run.__name__ = fn.__name__
    return run


if __name__ == "__main__":
    run_tests(Tap(), [cleaned(f) for f in [
        test_typing_after_the_program_ends, test_enter_on_an_ended_session, test_keys_as_the_focus_changes,
        test_confirmation_not_answered_ahead, test_meta_binding, test_small_terminal, test_modified_keys_reach_the_program,
        test_mouse_reaches_the_program, test_wheel_scrolls_without_mouse_mode, test_paste]])
