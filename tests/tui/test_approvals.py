#!/usr/bin/env python3
"""The approval dialog, driven like a user drives it: real server, real
`corral exec` requests that wait for an answer, the real TUI in a real PTY
(tests/tui/vtdrive), keys in, the screen read back.  Every wait is for
screen content or a process exit; the one short real delay proves that
keys typed within the dialog's type-ahead guard do not answer it."""
import json
import os
import re
import subprocess
import time

from tuilib import CORRAL, TIMEOUT, Tap, Term, World, run_tests

RULES = ('prefix_rule(pattern=["echo", "ask"], decision="prompt", '
         'justification="echo ask asks first")\n')
TITLE = "Would you like to run the following command?"
FOOTER = "Enter confirm"  # shown once the type-ahead guard is over

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
ENV.pop("NO_COLOR", None)


def tui(world=None, rows=30, cols=120, args=()):
    world = world or w
    env = dict(world.env, LANG="C.UTF-8")
    env.pop("NO_COLOR", None)
    return Term([CORRAL] + list(args), rows=rows, cols=cols, env=env, cwd=world.ws)


def exec_bg(*argv, opts=(), world=None):
    """corral exec in the background: it waits until the request is answered."""
    world = world or w
    return subprocess.Popen([CORRAL, "exec", "-C", world.ws] + list(opts) + ["--"] + list(argv), env=world.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pending(world=None):
    return json.loads((world or w).corral("approvals", "--json").stdout)


def request_id(key, world=None):
    """The id of the pending request whose command contains key."""
    for a in pending(world):
        if key in " ".join(a["argv"]):
            return a["id"]
    raise AssertionError("no pending request with %r: %r" % (key, pending(world)))


def ready(term, key, world=None):
    """The dialog shows the request whose command contains key, and its
    type-ahead guard is over: keys now answer it.  Waited for on the
    footer, the box's last row, which names the request: the whole box is
    then on the screen (a frame is written top to bottom)."""
    term.wait(key)  # on the screen, so the server has it
    return term.wait_regex("%s[^\n]* request %d( |$)" % (FOOTER, request_id(key, world)))


def finish(p):
    out, err = p.communicate(timeout=TIMEOUT)
    return p.returncode, out, err


def test_dialog_and_yes(t):
    with tui() as term:
        term.wait("SUPERVISOR")
        mark = term.mark()
        p = exec_bg("echo", "ask", "hello world", opts=["--justification", "to greet the reviewer"])
        screen = term.wait_regex("keys held[^\n]* request [0-9]+")
        t.ok(TITLE in screen, "a waiting exec opens the dialog, holding keys for a moment", screen)
        screen = ready(term, "hello world")
        t.ok("$ echo ask 'hello world'" in screen, "it shows the argv, shell-quoted", screen)
        t.ok("Justification: to greet the reviewer" in screen, "the agent's justification", screen)
        t.ok("Why it asks: echo ask asks first (rule `echo ask`)" in screen, "why the policy asks, and the rule",
             screen)
        t.ok("from user, no session yet" in screen, "who asks", screen)
        t.ok("Waiting: its client waits (closing it withdraws the request)" in screen,
             "who waits for the answer, and how that wait ends", screen)
        t.ok("No, and tell the agent what to do differently" in screen and "Yes, proceed" in screen,
             "and the numbered options", screen)
        row, col = term.find("d  No, deny")
        t.ok("\u203a" in term.row(row), "the initial highlight is deny", term.row(row))
        screen = term.wait_regex("approvals 1 ")
        t.ok("? echo ask 'hello" in screen, "a request with no session yet has its own sidebar row", screen)
        t.ok(b"\x07" in term.bytes_since(mark), "a bell rang for it")
        term.keys("y")
        rc, out, err = finish(p)
        t.eq(rc, 0, "y: the waiting exec runs and exits 0", err)
        t.ok("Process exited with code 0" in out and "ask hello world" in out, "with the command's output", out)
        screen = term.wait_absent(TITLE)
        t.ok("approvals 0" in term.wait("approvals 0"), "the dialog closes and the count goes back to 0", screen)
        with open(os.path.join(w.state, "corral", "approvals.jsonl")) as f:
            decided = [json.loads(l) for l in f if '"approval_decided"' in l]
        t.ok(decided and decided[-1].get("key") == "y" and decided[-1].get("answer") == "once",
             "the log records the decision with the key that chose it", decided[-1:])


def test_session_answer(t):
    """a: the same exact request on the same connection (an agent's
    session) runs again without asking."""
    c = w.connect("agent-a")
    req = {"cmd": "exec", "argv": ["echo", "ask", "twice"], "workdir": w.ws, "yield_time_ms": 5000,
           "mcp_progress_s": 5}
    with tui() as term:
        term.wait("SUPERVISOR")
        rid = c.next_id
        c.next_id += 1
        c.send(dict(req, id=rid))
        screen = ready(term, "twice")
        t.ok("from agent-a" in screen, "the dialog names the asking client", screen)
        t.ok("Waiting: its MCP call is open, kept alive by progress" in screen,
             "and that its MCP call is open, kept alive by progress (as corral mcp says)", screen)
        term.keys("a")
        r = c.read_msg()
        while "event" in r:
            r = c.read_msg()
        t.eq((r.get("id"), r.get("exit_code"), r.get("output")), (rid, 0, "ask twice\n"), "a: it runs")
        term.wait_absent(TITLE)
        r = c.call(req)
        t.eq(r.get("output"), "ask twice\n", "the same request again runs without a dialog", r)
        t.ok(TITLE not in term.screen() and pending() == [], "and nothing waits", term.screen())
    c.close()


def test_deny_stop(t):
    with tui() as term:
        p = exec_bg("echo", "ask", "to-be-stopped")
        ready(term, "to-be-stopped")
        term.keys("n")
        rc, out, err = finish(p)
        t.ok(rc != 0 and "denied" in err, "n: the exec exits non-zero saying it was denied", "%d %s" % (rc, err))
        term.wait_absent(TITLE)
        t.ok(True, "and the dialog closes")
        log = [json.loads(x) for x in open(os.path.join(w.state, "corral", "approvals.jsonl"))]
        t.eq(log[-1].get("answer"), "stop", "logged as a stop")


def test_deny_with_note(t):
    with tui() as term:
        p = exec_bg("echo", "ask", "noted")
        ready(term, "noted")
        term.keys("e")
        term.wait("Tell the agent what to do differently:")
        term.send("run the tests first")
        term.wait("run the tests first")
        term.keys("Esc")
        screen = term.wait("n  No, stop")
        t.ok(pending() != [], "Esc in the note goes back to the options without answering", screen)
        term.keys("e")
        term.wait("Tell the agent what to do differently:")
        term.send("use make check")
        term.wait("use make check")
        term.keys("Enter")
        rc, out, err = finish(p)
        t.ok(rc != 0 and "denied" in err and "use make check" in err,
             "e + note + Enter: denied, and the agent gets the note", err)
        term.wait_absent(TITLE)


def test_type_ahead_guard(t):
    with tui() as term:
        term.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "typed-ahead")
        term.wait("keys held")  # drawn, the guard running
        term.keys("y", "Enter", "1", "a")  # at once: within the guard
        screen = term.wait(FOOTER)  # the guard is over
        time.sleep(0.2)  # proving a negative: nothing answered it meanwhile
        t.ok(TITLE in term.screen() and p.poll() is None and len(pending()) == 1,
             "keys typed within 300 ms of the dialog do not answer it", screen)
        row, col = term.find("d  No, deny")
        t.ok("\u203a" in term.row(row), "nor move the highlight", term.row(row))
        term.keys("Down", "Down", "Up", "Up", "Up", "Up")  # deny is 3rd of 5
        term.wait_regex("\u203a 1 y  Yes, proceed")
        term.keys("Enter")
        rc, out, err = finish(p)
        t.eq(rc, 0, "after it, arrows move the highlight and Enter answers the highlighted option", err)


def test_two_tuis_and_cli(t):
    with tui() as one, tui(rows=24, cols=80) as two:
        one.wait("SUPERVISOR")
        two.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "seen-twice")
        ready(one, "seen-twice")
        ready(two, "seen-twice")
        t.ok(True, "two attached TUIs show the same request")
        two.keys("y")
        rc, out, err = finish(p)
        t.eq(rc, 0, "one answers it", err)
        screen = one.wait_absent(TITLE)
        t.ok(True, "the other's dialog closes")
        screen = one.wait("answered elsewhere")
        t.ok("once (by user)" in screen, "saying it was answered elsewhere", screen)

        p = exec_bg("echo", "ask", "from-the-cli")
        ready(one, "from-the-cli")
        two.wait("from-the-cli")
        ids = [a["id"] for a in pending()]
        r = w.corral("approve", str(ids[0]))
        t.eq(r.returncode, 0, "corral approve ID answers it", r.stderr)
        one.wait_absent(TITLE)
        two.wait_absent(TITLE)
        t.ok(True, "and both dialogs close")
        rc, out, err = finish(p)
        t.eq(rc, 0, "the exec runs", err)


def test_queue_tab_and_details(t):
    with tui() as term:
        term.wait("SUPERVISOR")
        p1 = exec_bg("echo", "ask", "first-one")
        term.wait("first-one")
        p2 = exec_bg("echo", "ask", "second-one", "$HOME", opts=["--prefix-rule", "echo ask"])
        term.wait("second-one")
        screen = term.wait("Tab next request")
        t.ok("$ echo ask first-one" in screen and "1 of 2" in screen, "the oldest is shown first, and how many wait",
             screen)
        term.keys("Tab")
        screen = ready(term, "second-one")
        t.ok("$ echo ask second-one '$HOME'" in screen, "quoted so it reads as what runs", screen)
        t.ok("2 of 2" in screen, "Tab shows the next one", screen)
        t.ok("3 p  Yes, and always allow commands starting with `echo ask` without asking" in screen,
             "a suggested prefix rule is an option, naming the prefix", screen)
        term.keys("v")
        screen = term.wait("v or Esc: back")  # the details' last row
        t.ok("y a p d e n answer" in screen, "its footer lists p, which this request offers", screen)
        t.ok("  3  '$HOME'" in screen and "  0  echo" in screen, "v: the details, one word of argv a line", screen)
        t.ok("Timeout: none" in screen, "and whether a timeout applies", screen)
        term.keys("Esc")
        screen = term.wait("Tab next request")
        t.ok(len(pending()) == 2, "Esc in the details goes back without answering", screen)
        term.keys("4")
        rc, out, err = finish(p2)
        t.ok(rc != 0 and "denied" in err, "4 (deny, the 4th option here) denies the one shown", err)
        screen = ready(term, "first-one")
        t.ok("1 of 2" not in screen, "then the other one is shown", screen)
        term.keys("3")  # no prefix rule: 3 is deny
        rc, out, err = finish(p1)
        t.ok(rc != 0 and "denied" in err, "options are numbered as shown", err)


def test_small_sizes(t):
    with tui(rows=24, cols=80) as term:
        term.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "tiny-" + "x" * 200, opts=["--justification", "a long reason " * 20])
        term.wait("tiny-")
        for rows, cols in [(12, 40), (6, 30), (3, 12), (2, 5), (1, 2), (40, 20), (8, 200)]:
            term.resize(rows, cols)
            term.settle(100)
            t.ok(term.exit_status(timeout=0) is None, "%dx%d: still running" % (rows, cols), term.screen())
        term.resize(10, 50)
        screen = term.wait("No, deny")
        t.ok("\u203a 3 d" in screen, "at 10x50 the highlighted option is still there", screen)
        term.resize(24, 80)
        ready(term, "tiny-")
        term.keys("d")
        rc, out, err = finish(p)
        t.ok(rc != 0 and "denied" in err, "and it still answers", err)


def test_themes(t):
    p = exec_bg("echo", "ask", "themed")
    themes = ["default", "light", "solarized-dark", "gruvbox", "high-contrast", "mono"]
    for name in themes:
        with tui(rows=24, cols=80, args=["--theme", name]) as term:
            screen = ready(term, "themed")
            hl_row, _ = term.find("d  No, deny")
            other_row, _ = term.find("1 y  Yes, proceed")
            hl = term.cells(hl_row)[20]
            other = term.cells(other_row)[20]
            t.ok((hl["fg"], hl["bg"], hl["attrs"]) != (other["fg"], other["bg"], other["attrs"]),
                 "%s: the highlighted option stands out" % name, screen)
    w.corral("deny", str(pending()[0]["id"]))
    finish(p)


def test_rules_error_and_refused_answer(t):
    """A broken rules file: its error stays in the status bar.  An answer
    the server refuses (here: the "always" rule cannot be saved, since
    default.rules is a directory) shows in the dialog, which stays."""
    bad = World()
    rules = os.path.join(bad.config, "corral", "rules")
    os.makedirs(os.path.join(rules, "default.rules"))
    with open(os.path.join(rules, "bad.rules"), "w") as f:
        f.write('prefix_rule(pattern=["ls"], decision="maybe")\n')
    bad.start_server()
    try:
        with tui(world=bad) as term:
            term.wait_regex("^ SUPERVISOR ")  # keys are taken (not held as the screen starts)
            screen = term.wait("rules (2 errors): bad.rules:1:")
            bar = screen.split("\n")[-1]
            t.ok(bar.startswith(" SUPERVISOR  approvals 0") and "bad.rules:1:38: invalid decision" in bar,
                 "a rules file that did not load shows in the status bar, with the first error", bar)
            row, col = term.find("rules (2 errors)")
            t.ok(term.cells(row)[col]["fg"] != term.cells(row)[2]["fg"], "in the error style", bar)
            p = exec_bg("git", "push", "nowhere", opts=["--prefix-rule", "git push"], world=bad)
            screen = ready(term, "git push nowhere", world=bad)
            t.ok("Risks: touches .git" not in screen, "(risks are the server's)", screen)
            term.keys("p")
            screen = term.wait("not answered: cannot save the rule")
            t.ok(TITLE in screen and p.poll() is None, "a refused answer shows its error; the dialog stays",
                 screen)
            term.keys("d")
            rc, out, err = finish(p)
            t.ok(rc != 0 and "denied" in err, "another answer still works", err)
            term.wait_absent(TITLE)
            t.ok("rules (2 errors)" in term.screen().split("\n")[-1], "the rules error stays", term.screen())
    finally:
        bad.cleanup()


def test_timeout_countdown(t):
    slow = World()
    slow.write_config("[approvals]\ntimeout = 4s\n")
    slow.start_server()
    try:
        with tui(world=slow) as term:
            term.wait("SUPERVISOR")
            p = exec_bg("git", "push", "later", world=slow)
            screen = term.wait_regex("denied in 0:0[0-4]")
            t.ok(True, "[approvals] timeout shows as a countdown in the dialog's title")
            term.wait_regex("denied in 0:0[0-2]")
            t.ok(True, "counting down")
            rc, out, err = finish(p)
            t.ok(rc != 0 and "in time" in err, "nobody answers: it is denied", err)
            screen = term.wait_absent(TITLE)
            t.ok("request 1 answered elsewhere: timeout" in term.wait("timeout"), "the dialog closes, saying why",
                 screen)
    finally:
        slow.cleanup()


def test_withdrawn_says_why(t):
    """A request whose requester went away (its corral exec was killed)
    leaves every screen, and the screen says why."""
    with tui() as term:
        term.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "withdrawn-marker", opts=["--justification", "to be withdrawn"])
        ready(term, "withdrawn-marker")
        p.kill()
        p.wait()
        screen = term.wait("withdrawn: the requester stopped waiting")
        t.ok(TITLE not in screen, "a request whose requester went away closes, saying why", screen)


def test_session_mark_and_live_rules_error(t):
    """A request from inside a running session marks its sidebar row; a
    rules file broken while the screen is up shows at once (the server's
    rules event), and goes when it is fixed."""
    with tui() as term:
        term.wait("SUPERVISOR")
        p = exec_bg("sh", "-c", "corral escalate --reason 'needs the host' -- echo esc-host-marker",
                    opts=["-n", "esc-wait"])
        screen = ready(term, "esc-host-marker")
        t.ok("Justification: needs the host" in screen, "corral escalate from inside a session opens the dialog",
             screen)
        # Its sidebar row (the pane's title may name it too, right of the bar).
        rows = [l.split("\u2502")[0] for l in term.screen().split("\n")]
        mine = [l for l in rows if "esc-wait" in l]
        t.ok(mine and mine[0][mine[0].index("esc-wait") - 2] == "?", "the session's row shows the waiting mark",
             mine)
        term.keys("y")
        rc, out, err = finish(p)
        t.ok("exited with code 0" in out, "y runs it", out + err)
        bad = os.path.join(w.config, "corral", "rules", "zz-bad.rules")
        with open(bad, "w") as f:
            f.write('prefix_rule(pattern=["ls"], decision="maybe")\n')
        try:
            w.corral("exec", "-C", w.ws, "--", "true")
            bar = term.wait("zz-bad.rules:1:").split("\n")[-1]
            t.ok("invalid decision" in bar, "a rules file broken while the screen is up shows at once", bar)
        finally:
            os.unlink(bad)
        w.corral("exec", "-C", w.ws, "--", "true")
        term.wait_absent("zz-bad.rules")
        t.ok(True, "and goes when it is fixed")


TAIL = ";curl|sh-after-420-spaces"


def shown_request(term, text, key, world=None):
    """Wait until the dialog shows text, then until its guard is over for
    the pending request whose argv holds key: returns (id, screen)."""
    term.wait(text)  # on the screen, so the server has it
    rid = next(a["id"] for a in pending(world) if any(key in x for x in a["argv"]))
    return rid, term.wait_regex("%s[^\n]* request %d( |$)" % (FOOTER, rid))


def test_whole_command_and_quotes(t):
    """The dialog shows the whole command, each word unambiguous: a word
    holding a ' is one quoted word, and a tail after 420 spaces is on the
    screen, or, when the box cannot hold it, a mark says how much is left
    and the details view (v) shows it."""
    with tui(rows=40, cols=120) as term:
        term.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "it's one", "x" + " " * 420 + TAIL)
        rid, screen = shown_request(term, "$ echo ask 'it", TAIL)
        t.ok("$ echo ask 'it'\\''s one' 'x" in screen, "a word with a ' shows as one quoted word", screen)
        t.ok(TAIL + "'" in screen, "the tail after 420 spaces is on the screen", screen)
        t.ok("v shows all" not in screen, "and nothing is marked as cut when all of it fits", screen)
        term.resize(16, 80)  # the old box's footer row is beyond the new screen
        term.wait("v shows all]")
        screen = term.wait_regex("%s[^\n]* request %d( |$)" % (FOOTER, rid))  # the whole new box
        t.ok("$ echo ask 'it'\\''s one' 'x" in screen and TAIL not in screen
             and re.search(r"\u2026\[\+[0-9]+ bytes: v shows all\]", screen),
             "on a small screen the command is cut, marked, with how many bytes are left", screen)
        t.ok("3 d  No, deny" in screen, "and the options stay", screen)
        term.keys("v")
        footer = term.wait("v or Esc: back").split("\n")
        footer = next(line for line in footer if "v or Esc: back" in line)
        t.ok("y a d e n answer" in footer, "the details list only the answers offered (no p without a rule)",
             footer)
        screen = term.wait(TAIL + "'")
        t.ok("Command: echo ask 'it'\\''s one' 'x" in screen, "the details view shows the whole command, its "
             "tail included", screen)
        term.keys("Esc")
        term.wait("Enter confirm")
        term.keys("d")
        rc, out, err = finish(p)
        t.ok(rc != 0 and "denied" in err, "and it answers as usual", err)


def test_outside_the_sandbox(t):
    """An escalation says it runs OUTSIDE the sandbox, in the danger style,
    and keeps saying it on a small screen."""
    with tui(rows=30, cols=100) as term:
        term.wait("SUPERVISOR")
        p = exec_bg("echo", "ask", "esc-outside", opts=["--sandbox-permissions", "require_escalated",
                                                         "--justification", "needs the host",
                                                         "--prefix-rule", "echo ask"])
        rid, screen = shown_request(term, "esc-outside", "esc-outside")
        t.ok("Runs OUTSIDE the sandbox" in screen, "an escalation says it runs OUTSIDE the sandbox", screen)
        t.ok("p  Yes, always run commands starting with `echo ask` OUTSIDE the sandbox, without asking" in screen,
             "its always-answer says later matching commands run outside the sandbox with no dialog", screen)
        t.ok("exec request, in " in screen, "with the kind of request and where it runs", screen)
        t.ok("Permissions: runs OUTSIDE the sandbox" in screen, "and in its permissions", screen)
        row, col = term.find("Runs OUTSIDE")
        why_row, why_col = term.find("Why it asks")
        danger, body = term.cells(row)[col], term.cells(why_row)[why_col]
        t.ok((danger["fg"], danger["bg"], danger["attrs"]) != (body["fg"], body["bg"], body["attrs"]),
             "in the danger style", (danger, body))
        term.resize(12, 60)  # the old box's footer row is beyond the new screen
        term.wait_absent("Why it asks")  # the small box drops the less important lines
        screen = term.wait("No, stop")  # its last row: the whole new box
        t.ok("Runs OUTSIDE the sandbox" in screen and "$ echo ask esc-outside" in screen,
             "a small screen keeps the command and the OUTSIDE line", screen)
        term.resize(30, 100)
        term.wait("Why it asks")
        term.keys("d")
        rc, out, err = finish(p)
        t.ok(rc != 0 and "denied" in err, "denied", err)


def test_typed_line_as_typed(t):
    """A line typed in a session's shell that needs an answer is shown as
    it was typed, not as the shell's -c argv."""
    rules = os.path.join(w.config, "corral", "rules", "typed.rules")
    with open(rules, "w") as f:
        f.write('prefix_rule(pattern=["touch", "typed-asked.txt"], decision="prompt")\n')
    c = w.connect("typed-test")
    sid = c.call({"cmd": "new", "argv": ["bash"], "cwd": w.ws, "name": "typer"})["session"]["id"]
    try:
        with tui(rows=30, cols=160) as term:
            term.wait("SUPERVISOR")
            c.call({"cmd": "input", "session": sid, "data": "touch typed-asked.txt && echo typed-$((1+1))\r"})
            term.wait("Would you like to run")  # the dialog, not the line echoed in the pane
            screen = ready(term, "typed-asked")
            t.ok("$ touch typed-asked.txt && echo typed-$((1+1))" in screen and "-c '" not in screen,
                 "the dialog shows the line as typed", screen)
            out = w.corral("approvals").stdout
            t.ok("touch typed-asked.txt && echo typed-$((1+1))" in out and "-c '" not in out,
                 "and so does corral approvals", out)
            term.keys("d")
            term.wait_absent("Would you like to run")
    finally:
        c.call({"cmd": "kill", "session": sid})
        c.close()
        os.unlink(rules)


def test_retry_names_the_failed_session(t):
    """A run that failed like a sandbox denial is offered once more outside
    the sandbox: the dialog says which session failed."""
    import tempfile
    outside = tempfile.mkdtemp(prefix="corral-tui-retry-", dir="/var/tmp")  # /tmp is private in a sandbox
    with tui(rows=30, cols=200) as term:
        term.wait("SUPERVISOR")
        p = exec_bg("touch", os.path.join(outside, "x"), opts=["-n", "toucher"])
        term.wait("which failed in the sandbox")
        screen = ready(term, "corral-tui-retry-")  # the whole box, and keys now answer it
        t.ok(re.search(r"Retrying: session toucher \(\d+\), which failed in the sandbox", screen) is not None,
             "the retry names the session that failed", screen)
        term.keys("d")
        rc, out, err = finish(p)
        t.ok(not os.path.exists(os.path.join(outside, "x")), "denied, nothing ran again", out + err)
    os.rmdir(outside)


def test_network_host(t):
    """A sandboxed curl reaching for a host through the proxy: the dialog
    asks about the host, port and protocol, names the command running and
    what p and d save; two connections share it; the sidebar counts the
    open connections; p saves an allow rule, d a deny rule."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
    import proxyservers
    net = World()
    net.start_server()
    web = proxyservers.WebServer("host-web")
    curl = "curl -sS --max-time %d --noproxy '' " % (TIMEOUT - 5)
    url = "http://localhost:%d/info" % web.port
    rules = os.path.join(net.config, "corral", "rules", "default.rules")
    try:
        with tui(world=net, cols=140) as term:
            term.supervisor_ready()
            p = exec_bg("sh", "-c", "%s -x http://127.0.0.1:3128 %s > a.out & %s -x http://127.0.0.1:3128 %s; wait; "
                        "cat a.out" % (curl, url, curl, url), world=net)
            screen = ready(term, "localhost:%d" % web.port, world=net)
            t.ok('Allow network access to "localhost"?' in screen, "the dialog asks about the host", screen)
            t.ok(("Port %d \u00b7 protocol http" % web.port) in screen and "Running: curl -sS" in screen,
                 "with its port, protocol and the command running", screen)
            t.ok("localhost is this machine (loopback): allowing lets the program reach the services" in screen,
                 "and that an allow reaches this machine, before the answer", screen)
            t.ok('Yes, always: save network_rule(host="localhost", protocol="http", decision="allow")' in screen
                 and 'No, never: save network_rule(host="localhost", protocol="http", decision="deny")' in screen
                 and "Yes, this connection" in screen and "tell the agent" not in screen,
                 "its options say what each saves (and there is no note to type)", screen)
            row, _ = term.find("n  No, not this time")
            t.ok("\u203a" in term.row(row), "the initial highlight is the no that saves nothing", term.row(row))
            screen = term.wait_regex("\u21c52 +ws")
            t.ok(True, "the sidebar counts the session's two waiting connections")
            t.eq(len(pending(net)), 1, "two connections to one host: one question")
            term.keys("p")
            rc, out, err = finish(p)
            t.eq(out.count('"server": "host-web"'), 2, "p: both connections reach the host's service", out + err)
            t.ok('network_rule(host="localhost", protocol="http", decision="allow")' in open(rules).read(),
                 "and the rule is saved")
            term.wait_absent("Allow network access")
            p = exec_bg("sh", "-c", "%s -x socks5h://127.0.0.1:1080 %s; echo rc=$?" % (curl, url), world=net)
            term.wait("protocol socks5_tcp")  # the new question (the old command is still in a pane)
            ready(term, "localhost:%d" % web.port, world=net)
            term.keys("d")
            rc, out, err = finish(p)
            t.ok("rc=0" not in out and "host-web" not in out, "d: the connection is refused", out + err)
            t.ok('network_rule(host="localhost", protocol="socks5_tcp", decision="deny")' in open(rules).read(),
                 "and a deny rule is saved")
    finally:
        web.close()
        for a in pending(net):
            net.corral("deny", str(a["id"]))
        net.cleanup()


def test_network_running_is_the_typed_line(t):
    """A connection from a line typed in a session's shell: the dialog's
    Running: is that line, not the session's shell."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
    import proxyservers
    net = World()
    net.start_server()
    web = proxyservers.WebServer("typed-web")
    c = net.connect("net-typed")
    sid = c.call({"cmd": "new", "argv": ["bash"], "cwd": net.ws, "name": "typed-net"})["session"]["id"]
    try:
        with tui(world=net, cols=160) as term:
            term.supervisor_ready()
            line = "curl -sS --max-time %d --noproxy '' -x http://127.0.0.1:3128 http://localhost:%d/typed" % (
                TIMEOUT - 5, web.port)
            c.call({"cmd": "input", "session": sid, "data": line + "\r"})
            term.wait("Allow network access")  # the dialog, not the line echoed in the pane
            screen = ready(term, "localhost:%d" % web.port, world=net)
            running = screen[screen.index("Running: "):screen.index("network request")]
            t.ok("Running: curl -sS --max-time" in running and "localhost:%d/typed" % web.port in running
                 and "bash" not in running, "Running: is the line typed, not the shell", screen)
            term.keys("d")
            term.wait_absent("Allow network access")
    finally:
        c.call({"cmd": "kill", "session": sid})
        c.close()
        web.close()
        for a in pending(net):
            net.corral("deny", str(a["id"]))
        net.cleanup()


def test_network_wait_is_shown(t):
    """A program's connection waits for an answer: its pane's title and its
    sidebar row say what for (the program itself says nothing)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
    import proxyservers
    net = World()
    net.start_server()
    web = proxyservers.WebServer("wait-web")
    curl = "curl -sS --max-time %d --noproxy '' -x http://127.0.0.1:3128 " % (TIMEOUT - 5)
    try:
        with tui(world=net, rows=40, cols=200) as term:
            term.supervisor_ready()
            p = exec_bg("sh", "-c", curl + "http://localhost:%d/wait" % web.port, world=net)
            ready(term, "localhost:%d" % web.port, world=net)
            aid = pending(net)[0]["id"]
            screen = term.wait("waits for your answer: network access to localhost:%d (request %d)"
                               % (web.port, aid))
            t.ok(True, "the pane's title says the program waits, for which host, and the request")
            side = [row.split("\u2502")[0] for row in screen.split("\n")]
            t.ok(any(re.search(r"ws \? localhost", row) for row in side), "and its sidebar row names the host",
                 "\n".join(side))
            term.keys("d")
            term.wait_absent("waits for your answer")
            t.ok(True, "the answer takes the notice away")
            finish(p)
    finally:
        web.close()
        for a in pending(net):
            net.corral("deny", str(a["id"]))
        net.cleanup()


def cleaned(fn):
    """A failed test leaves no request waiting for the next one."""
    def run(t):
        try:
            fn(t)
        finally:
            for a in pending():
                w.corral("deny", str(a["id"]))
    run.__name__ = fn.__name__
    return run


if __name__ == "__main__":
    run_tests(Tap(), [cleaned(f) for f in [test_dialog_and_yes, test_withdrawn_says_why, test_session_answer, test_deny_stop, test_deny_with_note,
                      test_type_ahead_guard, test_two_tuis_and_cli, test_queue_tab_and_details, test_small_sizes,
                      test_themes, test_rules_error_and_refused_answer, test_timeout_countdown,
                      test_session_mark_and_live_rules_error, test_whole_command_and_quotes,
                      test_outside_the_sandbox, test_typed_line_as_typed, test_retry_names_the_failed_session, test_network_host,
                      test_network_running_is_the_typed_line, test_network_wait_is_shown]])
