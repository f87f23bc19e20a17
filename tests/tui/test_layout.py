#!/usr/bin/env python3
"""What the supervisor screen keeps in place for the user, driven like a
user drives it (the real `corral` on a PTY, tests/tui/vtdrive, against a
real server): an agent's finished one-shot commands fold into one sidebar
row, a session kept in a tile stays there while new sessions arrive,
exited sessions can be cleared (X), and the layout survives detach and
attach.

A frame is drawn sidebar first, then the panes, then the status bar: a
wait for something a frame draws late (a pane title, the status bar)
means what it drew before it is on the screen too."""
import json
import os
import re
import time

from tuilib import TIMEOUT, Tap, Term, World, run_tests, wait_until

w = World()
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
ENV.pop("NO_COLOR", None)
SIDEBAR = 28  # [ui] sidebar-width's default (auto) on the 120 columns tui() opens
EXIT_0 = "\u21920"  # the sidebar's "exited 0"


def tui(rows=30, cols=120):
    return Term([os.environ.get("CORRAL_BIN", "corral")], rows=rows, cols=cols, env=ENV, cwd=w.ws)


def new_session(name, *cmd):
    r = w.corral("new", "-n", name, "-C", w.ws, "--", *cmd)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def ls():
    return json.loads(w.corral("ls", "--json").stdout)["sessions"]


def agent_exec(name, *cmd, client="codex", wait=True):
    """An agent's exec_command: a one-shot whose reply waits for its exit
    (wait), or one still running when its short yield ends."""
    r = w.corral("exec", "-n", name, "-C", w.ws, "--yield", "30000" if wait else "250", "--", *cmd,
                 env={"CORRAL_CLIENT": client})
    sids = [s["id"] for s in ls() if s["name"] == name]
    assert sids, (r.stdout, r.stderr)
    return sids[0]


def clean_slate():
    """Every session ended and removed, and no layout kept: each test
    starts from an empty screen."""
    for s in ls():
        if s["state"] == "running":
            w.corral("kill", str(s["id"]))
    ids = [str(s["id"]) for s in ls()]
    if ids:
        r = w.corral("rm", *ids)
        assert r.returncode == 0, r.stderr
    c = w.connect(client="user")
    c.call({"cmd": "layout", "set": {}})
    c.close()


def sidebar(screen):
    return "\n".join(row[:SIDEBAR] for row in screen.split("\n")[:-1])


def status(screen):
    return screen.split("\n")[-1]


def selected_row(term, want=None):
    """The sidebar row drawn as selected (its background is not the
    terminal's), or None.  With want: the first such row that holds want,
    waiting for the screen to show it (rows are read one by one, so a
    frame being drawn could otherwise be read half old, half new)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        row = None
        for r in range(term.info()["rows"] - 1):
            cells = term.cells(r)
            if cells[1]["bg"] != "default":
                row = "".join(c["ch"] or " " for c in cells[:SIDEBAR]).strip()
                break
        if want is None or (row and want in row) or time.monotonic() > deadline:
            return row
        term.settle(50)


def pane_titles(screen):
    """Session names in the panes' title rows, left to right, top to
    bottom."""
    return re.findall(r"([a-z][a-z0-9-]*) [0-9]+ (?:workspace-write|read-only|full) ",
                      "\n".join(row[SIDEBAR + 1:] for row in screen.split("\n")))


def title(name):
    """A pane's title row for session name."""
    return "%s [0-9]+ workspace-write" % name


def test_finished_commands_fold(t):
    clean_slate()
    agent_exec("solo-run", "true", client="gemini")
    new_session("my-shell", "sh", "-c", "exec sleep 1000")
    agent_exec("my-oneshot", "true", client="user")
    agent_exec("my-second", "true", client="user")
    agent_exec("worker", "sleep", "1000", wait=False)
    for i in range(3):
        agent_exec("oneshot-%d" % i, "sh", "-c", "exit %d" % (i == 1))
    with tui() as term:
        term.wait("3 finished")
        term.wait("2 finished")
        s = term.wait_regex("solo-run +ws")
        bar = sidebar(s)
        t.ok("\u25b8 3 finished (1 failed)" in bar, "an agent's finished commands fold into one row, saying "
             "how many failed", bar)
        t.ok("oneshot-" not in bar, "and their own rows are gone", bar)
        t.ok("worker" in bar, "the agent's running command keeps its row", bar)
        t.ok("my-shell" in bar and "my-oneshot" not in bar and "my-second" not in bar and
             "\u25b8 2 finished" in bar, "your own finished corral exec runs fold too; your shell keeps its row", bar)
        t.ok(re.search("solo-run +ws", bar) and "1 finished" not in bar,
             "an agent's only finished command keeps its row (folding starts at two)", bar)
        term.wait_regex(title("worker"))
        term.supervisor_ready()
        t.ok("worker" in (selected_row(term, "worker") or ""), "the first session's row is selected", selected_row(term))
        # The folded row is the next one: selecting it shows the most
        # recent session in the pane (no session is selected).
        term.send("j")
        term.wait_regex(title("oneshot-2"))
        t.ok("3 finished" in (selected_row(term, "3 finished") or ""), "j selects the folded row", selected_row(term))
        term.keys("Enter")
        term.wait("\u25be 3 finished")
        s = term.wait_regex("oneshot-0 +ws(.*\n)*.*my-shell +ws")
        t.ok(all(("oneshot-%d" % i) in sidebar(s) for i in range(3)), "Enter unfolds it", sidebar(s))
        term.send("j")
        term.send("j")
        term.wait_regex(title("oneshot-1"))
        t.ok("oneshot-1" in (selected_row(term, "oneshot-1") or ""), "the unfolded commands are rows to select",
             selected_row(term))
        term.keys("Space")
        s = term.wait("\u25b8 3 finished")
        t.ok("oneshot-" not in sidebar(s), "Space folds them again", sidebar(s))
        t.ok("3 finished" in (selected_row(term, "3 finished") or ""), "and the folded row takes the selection",
             selected_row(term))
        agent_exec("oneshot-3", "true")
        s = term.wait("\u25b8 4 finished")
        t.ok("oneshot-3" not in sidebar(s), "a command finishing later folds too", sidebar(s))


def test_kept_tile(t):
    clean_slate()
    new_session("my-shell", "sh", "-c", "echo mine-ready; exec sleep 1000")
    with tui() as term:
        term.wait("mine-ready")
        term.supervisor_ready()
        term.send("t")
        term.wait("vertical split")
        agent_exec("agent-a", "sleep", "1000", wait=False)
        term.wait_regex(title("agent-a"))
        s = term.wait("2/64 live")
        t.ok("my-shell" in pane_titles(s), "split: my shell and the agent's session side by side", s)
        term.send("K")  # my shell is selected: it came first
        s = term.wait("my-shell stays in tile")
        tile = pane_titles(s).index("my-shell")
        t.ok("[kept]" in s.split("\n")[0], "K keeps the selected session in its tile, and the title says so", s)
        # Select the agent's session (its row is above mine) and let the
        # agent start more: the newest would take both tiles but the kept one.
        term.send("k")
        term.keys("Enter")
        term.wait("no terminal: keys go nowhere")  # its pane has the focus, and says so
        term.keys("C-]")
        term.supervisor_ready()
        for name in ("agent-b", "agent-c"):
            agent_exec(name, "sleep", "1000", wait=False)
        s = term.wait_regex("4/64 live")
        names = pane_titles(s)
        t.ok(len(names) == 2 and names[tile] == "my-shell",
             "new sessions never displace the kept tile: my shell stays in tile %d" % (tile + 1), s)
        t.ok(names[1 - tile] == "agent-a", "the other tile shows the selected session", s)
        term.send("t")
        term.send("t")
        s = term.wait("layout: grid")
        names = pane_titles(s)
        t.ok(len(names) == 4 and names[tile] == "my-shell", "the grid keeps it in the same tile", s)
        term.send("j")
        term.send("K")
        term.wait("my-shell is no longer kept")
        s = term.wait_absent("[kept]")
        t.ok(True, "K on a kept session frees its tile")


def test_layout_survives_detach(t):
    clean_slate()
    new_session("my-shell", "sh", "-c", "echo mine-ready; exec sleep 1000")
    agent_exec("agent-run", "sleep", "1000", wait=False)
    agent_exec("done-1", "true")
    agent_exec("done-2", "true")
    with tui() as term:
        term.wait("2 finished")
        term.supervisor_ready()
        term.send("t")
        term.wait("vertical split")
        term.send("j")  # agent-run, then the folded row, then my shell
        term.send("j")
        term.send("K")
        s = term.wait("my-shell stays in tile")
        tile = pane_titles(s).index("my-shell")
        term.send("k")
        term.keys("Space")
        term.wait("done-2")
        term.wait("\u25be 2 finished")
        term.send("q")
        t.eq(term.exit_status(), 0, "q detaches")
    with tui() as term:
        s = term.wait("[kept]")
        s = term.wait_regex("live .* vertical split")
        t.ok(True, "attaching again restores the layout mode")
        names = pane_titles(s)
        t.ok(len(names) == 2 and names[tile] == "my-shell", "and the kept tile, with the same session in it", s)
        s = term.wait("\u25be 2 finished")
        t.ok("done-1" in sidebar(s) and "done-2" in sidebar(s), "and the agent's unfolded commands", sidebar(s))
        term.supervisor_ready()
        term.send("z")
        term.wait_regex("live .* zoom")
        term.send("q")
        term.exit_status()
    with tui() as term:
        s = term.wait_regex("live .* zoom")
        t.ok(" user" not in s.split("\n")[0], "zoom is kept as well", s)


def test_clear_exited(t):
    clean_slate()
    new_session("still-here", "sh", "-c", "exec sleep 1000")
    gone = [new_session("short-%d" % i, "true") for i in range(2)]
    keep = new_session("pinned-one", "true")
    w.corral("pin", str(keep))
    with tui() as term:
        for name in ("short-0", "short-1", "pinned-one"):
            term.wait_regex("%s +ws +%s" % (name, EXIT_0))
        term.supervisor_ready()
        term.send("x")  # on the newest: pinned-one, which has exited
        s = term.wait("has already exited")
        t.ok("pinned-one has already exited: X removes exited sessions" in status(s),
             "x on an exited session says how to remove it", status(s))
        term.send("X")
        term.wait("Remove 2 exited sessions?")
        term.wait("y yes")  # the question's type-ahead guard is over
        t.ok(True, "X asks before removing more than one exited session")
        term.send("n")
        term.wait_absent("Remove 2 exited")
        t.eq(len(ls()), 4, "any key but y keeps them")
        term.send("X")
        term.wait("Remove 2 exited sessions?")
        term.wait("y yes")
        term.send("y")
        term.wait("removed 2 exited sessions")
        s = term.screen()
        t.ok("short-" not in sidebar(s) and "still-here" in sidebar(s) and "pinned-one" in sidebar(s),
             "y removes the exited ones; running and pinned sessions stay", sidebar(s))
        t.eq(sorted(x["name"] for x in ls()), ["pinned-one", "still-here"], "the server's list agrees")
        t.ok(all(os.path.isfile(os.path.join(w.session_dir(g), "output.cast")) for g in gone),
             "their recordings stay on disk")
        new_session("lone-exit", "true")
        term.wait_regex("lone-exit +ws +%s" % EXIT_0)
        term.send("X")
        s = term.wait("removed 1 exited session")
        t.ok("Remove" not in s and "lone-exit" not in sidebar(s), "a single exited session goes without asking", s)
        term.send("X")
        s = term.wait("pinned and stays")
        t.ok(True, "with only a pinned one left, X says it stays")


def size_of(sid):
    s = [x for x in ls() if x["id"] == sid]
    return (s[0]["rows"], s[0]["cols"]) if s else None


def test_sizes_come_back_when_a_smaller_screen_detaches(t):
    """Two screens show one terminal: the later one to size it wins (tmux's
    window-size latest); the other shows what its pane has beyond the
    terminal dotted, and says another screen holds it smaller; when the
    later screen detaches, the terminal gets the first screen's size back
    at once."""
    clean_slate()
    sid = new_session("sized", "sh", "-c", "while :; do sleep 1; done")
    with tui(rows=30, cols=120) as big:
        big.wait(" sized %d " % sid)
        t.ok(wait_until(lambda: size_of(sid) not in (None, (24, 80))), "the first screen sizes the terminal to its "
             "pane", size_of(sid))
        big_size = size_of(sid)
        with tui(rows=20, cols=80) as small:
            small.wait(" sized %d " % sid)
            big.wait("another screen holds it smaller")
            # The title is drawn before the body: the dots come with the body.
            screen = big.wait("\u00b7" * 10)
            small_size = size_of(sid)
            t.ok(small_size[0] < big_size[0] and small_size[1] < big_size[1],
                 "a smaller screen attached later sizes it smaller", (big_size, small_size))
            t.ok("%dx%d: another screen holds it smaller" % (small_size[1], small_size[0]) in screen and
                 "\u00b7" * 10 in screen, "the first screen says so in the pane's title and dots what its pane has "
                 "beyond the terminal", screen)
        # The pane's body is drawn after its title: wait for the body.
        screen = big.wait_absent("\u00b7" * 10)
        t.eq(size_of(sid), big_size, "the smaller screen detached: the terminal has the first screen's size again, "
             "with no key pressed")
        t.ok("holds it smaller" not in screen, "and the first screen's pane is whole again, its title without the "
             "note", screen)


def test_sidebar_hides(t):
    clean_slate()
    sid = new_session("wide", "sh", "-c", "exec sleep 1000")
    with tui() as term:
        term.wait_regex("\u25cf wide +ws")
        term.supervisor_ready()
        term.keys("s")
        # Frames draw the pane's title before its body: wait for the title
        # at the new width (the session resized to it), then for the body
        # without the list's row.
        term.wait_regex("^ wide %d workspace-write running *$" % sid)
        screen = term.wait_absent("\u25cf wide")
        t.ok(not any("\u2502" in l[:SIDEBAR + 2] for l in screen.split("\n")[:3]),
             "s hides the session list: the pane starts at the left edge", screen)
        term.keys("s")
        term.wait_regex("\u25cf wide +ws")
        t.ok(True, "s again shows it")


def separator_column(screen):
    """Where the sidebar ends: the column of the separator on the first row."""
    return screen.split("\n")[0].find("\u2502")


def test_sidebar_follows_the_terminal(t):
    clean_slate()
    new_session("follows", "sh", "-c", "exec sleep 1000")
    with tui(rows=30, cols=120) as term:
        screen = term.wait_regex("\u25cf follows +ws")
        t.eq(separator_column(screen), 28, "by default the session list takes 28 of 120 columns")
        term.resize(30, 190)
        screen = term.wait_regex("^.{44}\u2502")
        t.eq(separator_column(screen), 44, "widened to 190 columns, it takes 44: more of each row shows")
        term.resize(30, 80)
        screen = term.wait_regex("^.{20}\u2502")
        t.eq(separator_column(screen), 20, "narrowed to 80, it takes 20: the pane keeps most of the width")
    w.write_config("[ui]\nsidebar-width = 30%\n")
    with tui(rows=30, cols=100) as term:
        screen = term.wait_regex("^.{30}\u2502")
        t.eq(separator_column(screen), 30, "sidebar-width = 30% takes 30 of 100 columns")
    w.write_config("[ui]\nsidebar-width = 33\n")
    with tui(rows=30, cols=150) as term:
        screen = term.wait_regex("^.{33}\u2502")
        t.eq(separator_column(screen), 33, "and sidebar-width = 33 takes 33, whatever the width")
    w.write_config("")


def test_killed_by_you_is_no_failure(t):
    clean_slate()
    ok = new_session("fails", "sh", "-c", "exit 3")
    sid = new_session("victim", "sleep", "1000")
    w.corral("kill", str(sid))
    with tui() as term:
        # Each row from a screen on which that row is drawn whole (a frame
        # draws the list row by row).
        def row_of(name):
            screen = term.wait_regex("%s +ws[^\n]*\u2502" % name)
            return next((l.split("\u2502")[0] for l in screen.split("\n") if name in l.split("\u2502")[0]), "")
        row = row_of("victim")
        failed = row_of("fails")
        t.ok("\u25a0" in row and "\u2717" not in row, "a session you killed has the ended mark, not the failure's",
             row)
        t.ok("\u2717" in failed, "one that failed keeps the failure's", failed)
        w.corral("pin", str(sid))
        screen = term.wait_regex("\u2691victim")
        t.ok(True, "a pinned session's row carries the pin mark")


run_tests(Tap(), [test_finished_commands_fold, test_sidebar_follows_the_terminal, test_kept_tile, test_layout_survives_detach, test_clear_exited,
                  test_sizes_come_back_when_a_smaller_screen_detaches, test_sidebar_hides,
                  test_killed_by_you_is_no_failure])
