#!/usr/bin/env python3
"""Several machines on one screen (issue 20): the real TUI in a real PTY,
this machine's server and two other machines' servers, each reached
through OpenSSH's sshd on 127.0.0.1 (tests/integration/sshlab.py: a
machine is a corral server with directories of its own, behind a Host
alias of the lab's ssh config).  Through that: the sessions of every
machine in the sidebar, grouped by machine, with their output; a request
raised on another machine answered from this screen (its machine named
first, red and bold), and answered once; the link to a machine killed
(its sessions greyed with the time, its session still running there) and
coming back by itself; `n` asking on which machine; `corral attach -H`;
a machine that cannot be reached; and a hostile stand-in server that the
screen survives.  Every wait is for the screen or a process; when sshd is
missing or does not start, the tests report SKIP."""
import json
import os
import re
import signal
import subprocess
import sys

from tuilib import CORRAL, TIMEOUT, Tap, Term, World, run_tests, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import pids_whose_argv  # noqa: E402
from sshlab import ME, SshLab  # noqa: E402

t = Tap()
RULES = 'prefix_rule(pattern=["echo", "deploy"], decision="prompt", justification="deploys to production")\n'

local = World()
local.start_server()
one, two = World(), World()
os.makedirs(os.path.join(one.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(one.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
lab = SshLab()
lab.add("one", one)
lab.add("two", two)


def hosts_config(extra=""):
    local.write_config("[hosts]\none = %s\ntwo = %s\nssh-command = ssh -F %s\n%s" %
                       (lab.url("one"), lab.url("two"), lab.config, extra))


def screen(args=(), env=None, rows=30, cols=130):
    e = dict(local.env, LANG="C.UTF-8")
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return Term([CORRAL] + list(args), rows=rows, cols=cols, env=e, cwd=local.ws)


def ls(world):
    c = world.connect("test")
    r = c.call({"cmd": "ls"})
    c.close()
    return r["sessions"]


def new_session(world, name, script):
    r = world.corral("new", "--name", name, "-C", world.ws, "--", "sh", "-c", script)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[0])


def ssh_of(alias):
    """The ssh processes of the screen's link to alias."""
    return pids_whose_argv(lambda argv: os.path.basename(argv[0]) == b"ssh" and alias.encode() in argv and
                           lab.config.encode() in b" ".join(argv))


def select(term, title):
    """Select the sidebar's session named title (its row: a state glyph,
    then the name): from the top, as many j as session rows above it;
    the screen once its pane has that title."""
    for _ in range(12):
        term.keys("k")
    lines = term.wait(title).split("\n")
    rows = [l for l in lines if len(l) > 3 and not l[1].isalnum() and l[1] != " " and l[2] == " " and "\u2502" in l]
    names = [l[3:].split()[0] for l in rows]
    for _ in range(names.index(title)):
        term.keys("j")
    return term.wait_regex("\u2502 %s " % title)


def up(term):
    """Wait until no machine of the screen is still connecting (the status
    bar, drawn with the first frame, says which are); on a timeout, which
    ssh and serve-stdio processes there were."""
    term.wait("SUPERVISOR")
    try:
        return term.wait_absent("connecting")
    except AssertionError:
        t.diag(subprocess.run("ps -eo pid,ppid,stat,wchan:20,args | grep -E 'ssh|serve-stdio' | grep -v grep",
                              shell=True, capture_output=True, text=True).stdout)
        raise


HERE = os.path.dirname(os.path.abspath(__file__))


def helper(name):
    """A file of the tests: beside this one (the unprivileged user's run
    has them all in one directory), or where the tree keeps it."""
    for d in (HERE, os.environ.get("CORRAL_VTDRIVE") and os.path.dirname(os.environ["CORRAL_VTDRIVE"]),
              os.path.join(HERE, "..", "integration")):
        if d and os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    raise AssertionError("no %s beside %s" % (name, HERE))


def records_copies():
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return {d for d in os.listdir(tmp) if d.startswith("corral-records-")}


def needs_sshd(fn):
    def wrapped(tap):
        if lab.why_not:
            tap.skip(fn.__name__, lab.why_not)
            return
        fn(tap)
    wrapped.__name__ = fn.__name__
    return wrapped


@needs_sshd
def test_every_machine_on_one_screen(t):
    a = new_session(one, "on-one", "echo hello from one; exec sleep 600")
    b = new_session(two, "on-two", "echo hello from two; exec sleep 600")
    new_session(local, "on-here", "echo hello from here; exec sleep 600")
    hosts_config()
    with screen() as term:
        up(term)
        s = term.wait_regex("on-here(.|\n)*on-one(.|\n)*on-two")
        s = term.wait_regex(" 1/64 live, 2 remote ")
        t.ok(True, "the status bar counts this machine's live sessions against its server's store, "
                   "and the other machines' apart")
        t.ok("one: user" in s and "two: user" in s,
             "the sidebar lists this machine's sessions and both other machines', grouped by machine", s)
        lines = s.split("\n")
        order = [i for name in ("on-here", "on-one", "on-two") for i, l in enumerate(lines) if name in l[:28]]
        t.ok(order == sorted(order), "this machine first, then the others in the order of [hosts]", s)
        select(term, "on-one")
        s = term.wait("hello from one")
        t.ok("on-one one:%d" % a in s, "a session of another machine is named MACHINE:ID in its pane", s)
        select(term, "on-two")
        s = term.wait("hello from two")
        t.ok("on-two two:%d" % b in s, "and the next machine's session shows its own output", s)
        term.keys("Enter")
        term.wait(" PANE ")
        term.send("x")  # no terminal input for sh -c ... sleep; the key must go to two's session only
        term.keys("C-]")
        term.wait("SUPERVISOR")
    for w, sid in ((one, a), (two, b)):
        w.corral("kill", str(sid))


@needs_sshd
def test_a_request_there_answered_here(t):
    hosts_config()
    with screen() as term:
        up(term)
        p = subprocess.Popen([CORRAL, "exec", "-C", one.ws, "--", "echo", "deploy", "now"], env=one.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        s = term.wait("On one, another machine")
        t.ok("Would you like to run the following command?" in s and "echo deploy now" in s,
             "a request raised on another machine opens the dialog here", s)
        row, col = term.find("On one, another machine")
        cell = term.cells(row)[col]
        t.ok("bold" in cell["attrs"] and cell["fg"] in ("idx:1", "idx:9"), "its machine is named first, red and bold",
             cell)
        s = term.wait_regex("Enter confirm[^\n]* request one:[0-9]+")
        t.ok(True, "the request is numbered as that machine's (one:N)")
        term.keys("y")
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(p.returncode == 0 and out.strip().endswith("\ndeploy now"), "y here lets the command run there",
             out + err)
        t.eq(json.loads(one.corral("approvals", "--json").stdout), [], "and nothing is left waiting there")
        s = term.wait_absent("On one, another machine")
        t.ok("Would you like" not in s, "and the dialog closes", s)


@needs_sshd
def test_rules_error_there(t):
    """Another machine's rules file that does not load: named as that
    machine's in the status bar, listed under it by ?, gone when fixed."""
    hosts_config()
    bad = os.path.join(two.config, "corral", "rules", "zz-bad.rules")
    os.makedirs(os.path.dirname(bad), exist_ok=True)
    with screen() as term:
        up(term)
        with open(bad, "w") as f:
            f.write('prefix_rule(pattern=["ls"], decision="maybe")\n')
        try:
            two.corral("exec", "-C", two.ws, "--", "true")  # its server reads its rules again
            bar = term.wait("two: rules: zz-bad.rules:1:").split("\n")[-1]
            t.ok("invalid decision" in bar, "another machine's broken rules file is named as that machine's", bar)
            term.supervisor_ready()
            term.keys("?")
            h = term.wait("Machines ([hosts])")
            h = term.wait_regex("rules: /[^ ]*zz-bad")  # the whole path: not the status bar's short form
            t.ok(-1 < h.find("two: up") < h.find("rules: /"), "? lists it, whole, under that machine", h)
            term.keys("q")
            term.wait_absent("Machines ([hosts])")
        finally:
            os.unlink(bad)
        two.corral("exec", "-C", two.ws, "--", "true")
        term.wait_absent("zz-bad.rules")
        t.ok(True, "and it goes when that machine's file is fixed")


@needs_sshd
def test_link_lost_and_back(t):
    sid = new_session(one, "survivor", "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.3; done")
    hosts_config()
    with screen() as term:
        up(term)
        select(term, "survivor")
        term.wait("tick")
        before = ssh_of("one")
        t.ok(len(before) >= 1, "the screen's link to one is an ssh process", before)
        for pid in before:
            os.kill(pid, signal.SIGKILL)
        s = term.wait_regex("one: link lost [0-9]")  # the status bar (the pane's title says "lost at"), drawn last
        t.ok(True, "the status bar says the link to one is lost, with the time")
        t.ok(" ~ survivor" in s or "~ survivor" in s, "its session is greyed in the sidebar", s)
        t.ok(any(x["id"] == sid and x["state"] == "running" for x in ls(one)),
             "the session still runs on its machine")
        s = term.wait_absent("link lost", timeout=TIMEOUT)
        after = ssh_of("one")
        t.ok(after and not set(after) & set(before), "the screen reconnects by itself, through a new ssh", after)
        s = term.wait_regex("tick [0-9]+")
        t.ok("survivor one:%d" % sid in s, "and the session comes back with its output", s)
    one.corral("kill", str(sid))


@needs_sshd
def test_a_flood_there_comes_in_frames(t):
    """Another machine's heavy output comes as frames (server/watch.c):
    the pane shows its end; searching its scrollback asks for the whole
    history again, so a line that scrolled past between two frames is
    found."""
    go = os.path.join(one.ws, "go-flood")
    sid = new_session(one, "flood", "i=1; while [ $i -le 40 ]; do echo pre-$i; i=$((i+1)); done; "
                      "while [ ! -e go-flood ]; do sleep 0.05; done; seq 1 200000; echo flood-over; exec sleep 600")
    hosts_config()
    with screen() as term:
        up(term)
        select(term, "flood")
        term.wait("pre-40")
        open(go, "w").close()
        s = term.wait("flood-over", timeout=TIMEOUT)
        t.ok("200000" in s, "a flood on another machine ends on screen as it ends there", s)
        term.supervisor_ready()
        term.send("/")
        term.wait("Search")
        term.send("195000")
        term.keys("Enter")
        s = term.wait("SCROLL")
        s = term.wait_regex("195000$")
        t.ok("194999" in s and "195001" in s,
             "a line that scrolled past between frames is in its history when searched", s)
        term.keys("Esc")
    os.unlink(go)
    one.corral("kill", str(sid))


@needs_sshd
def test_ended_there(t):
    """E lists the ended sessions of every machine: another machine's that
    its server no longer has, named MACHINE:ID; l reviews one from there."""
    r = one.corral("exec", "-n", "gone-there", "-C", one.ws, "--", "sh", "-c", "echo ended-output-$((6*7))")
    assert r.returncode == 0, r.stdout + r.stderr
    sid = [x["id"] for x in ls(one) if x.get("name") == "gone-there"][0]
    r = one.corral("rm", str(sid))
    assert r.returncode == 0, r.stderr
    before = records_copies()
    hosts_config()
    with screen() as term:
        up(term)
        term.supervisor_ready()
        term.keys("E")
        s = term.wait_regex("gone-there +one:%d " % sid)
        t.ok(s.index("ended") < s.index("gone-there"),
             "E lists an ended session of another machine, named as that machine's", s)
        select(term, "gone-there")
        s = term.wait("its recording is on one")
        t.ok("gone-there one:%d" % sid in s, "selected, it says its recording is there, and how to see it", s)
        term.supervisor_ready()
        term.keys("l")
        s = term.wait("timeline \u00b7 session one:%d (gone-there)" % sid)
        t.ok(True, "l: its timeline, from the records copied from there")
        term.keys("q")
        term.wait_absent(" timeline \u00b7 ")
        term.supervisor_ready()
        term.keys("r")
        term.wait("replay \u00b7 session one:%d (gone-there)" % sid)
        term.wait("ended-output-42")
        t.ok(True, "r: its recording replays here")
        term.keys("q")
    # The copy goes with the screen (its exit may come a moment after vtdrive's).
    t.ok(wait_until(lambda: records_copies() - before == set()), "and the records copied go with the screen",
         records_copies() - before)


@needs_sshd
def test_timeline_and_replay_there(t):
    sid = new_session(one, "reviewed", "echo recorded-output-$((6*7)); exec sleep 600")
    before = records_copies()
    hosts_config()
    with screen() as term:
        up(term)
        select(term, "reviewed")
        term.wait("recorded-output-42")
        term.supervisor_ready()
        term.keys("l")
        s = term.wait("timeline \u00b7 session one:%d (reviewed)" % sid)
        t.ok("created" in s or "started" in s, "l on another machine's session: its timeline, from its records", s)
        term.keys("q")
        term.wait_absent(" timeline \u00b7 ")
        term.supervisor_ready()
        term.keys("r")
        s = term.wait("replay \u00b7 session one:%d (reviewed)" % sid)
        s = term.wait("recorded-output-42")
        t.ok(True, "r: its recording replays here")
        term.keys("q")
        term.wait_absent(" replay \u00b7 ")
        copies = records_copies() - before
        t.ok(len(copies) == 1, "the records were copied into a private directory", copies)
    one.corral("kill", str(sid))
    wait_until(lambda: records_copies() - before == set())  # its exit may come a moment after vtdrive's
    t.eq(records_copies() - before, set(), "which goes when the screen does")


@needs_sshd
def test_n_asks_on_which_machine(t):
    hosts_config()
    with screen() as term:
        up(term)
        term.keys("n")
        s = term.wait("machine: here, one, two")
        t.ok("machine    here" in s, "with [hosts], the form asks on which machine (here, to start with)", s)
        term.keys("S-Tab")
        term.keys("C-u")
        term.send("two")
        term.keys("Tab")
        term.send("made-here-for-two")
        term.keys("Enter")
        s = term.wait("which one on two?")
        t.ok("this machine's" in s, "this machine's directory is not taken for the other's", s)
        term.keys("Tab", "C-u")
        term.send(two.ws)
        term.keys("Enter")
        s = term.wait_regex("\u2502 made-here-for-two two:[0-9]+")
        made = [x for x in ls(two) if x["name"] == "made-here-for-two"]
        t.ok(len(made) == 1 and made[0]["cwd"] == two.ws, "Enter starts the session on that machine, there", s)
        t.ok(not any(x["name"] == "made-here-for-two" for x in ls(local)), "not here")
        term.keys("C-]")
        two.corral("kill", str(made[0]["id"]))


@needs_sshd
def test_attach_h(t):
    local.write_config("")
    sid = new_session(two, "zoom-me", "echo zoomed on two; exec sleep 600")
    with screen(args=("-H", lab.url("two"), "attach", str(sid)), env=lab.env) as term:
        s = term.wait("zoomed on two")
        s = term.wait(" PANE ")
        t.ok("\u2502" not in s.split("\n")[0] and "zoom-me two:%d" % sid in s.split("\n")[0],
             "corral -H HOST attach ID zooms on that machine's session, in pane focus", s)
        term.keys("C-]")
    with screen(args=("-H", lab.url("two"), "attach", "99999"), env=lab.env) as term:
        status = term.exit_status()
        t.eq(status, 1, "an id that machine does not have ends the screen, saying so")
    two.corral("kill", str(sid))


@needs_sshd
def test_unreachable_machine(t):
    local.write_config("[hosts]\nnowhere = ssh://%s@127.0.0.1:1\nssh-command = ssh -F %s\n" % (ME, lab.config))
    with screen() as term:
        s = term.wait("nowhere: Connection refused (? shows the machines)")
        t.ok(True, "why it cannot be reached is said, in ssh's own words")
        term.wait("nowhere: unreachable")
        s = term.wait("SUPERVISOR")
        term.keys("?")
        h = term.wait_regex("nowhere: link failed at [0-9:]+ [(]ssh: connect to host 127.0.0.1")
        h = term.wait("trying again in")  # the wrapped line's end
        t.ok("Machines ([hosts])" in h and "Connection refused" in h,
             "? lists the machines, and why one is not up, whole", h)
        term.keys("q")
        s = term.wait_absent("Machines ([hosts])")
        t.ok("nowhere: unreachable" in s, "a machine that cannot be reached does not keep the screen from opening", s)
        term.keys("q")
        t.eq(term.exit_status(), 0, "and q leaves as always")
    with screen(args=("-H", "nowhere", "attach", "5")) as term:
        status = term.exit_status()
        s = term.screen()
        t.ok(status == 1 and "cannot attach to session 5 on nowhere" in s and "Connection refused" in s,
             "corral -H HOST attach ID with HOST unreachable ends the screen, saying why, instead of waiting",
             (status, s))
    t.eq(ssh_of("nowhere") + ssh_of("127.0.0.1"), [], "no ssh is left behind")


def test_a_link_that_never_answers(t):
    """ssh that starts and never says a word (a hung ProxyCommand, a server
    there that hangs): the machine is taken for down after 20 s, and its
    ssh does not outlive the screen."""
    local.write_config("[hosts]\nmute = ssh://me@mute.example\n")
    mute = "sleep 7777 #"  # sh -c 'sleep 7777 # "$@"': ssh's arguments are a comment
    with screen(env={"CORRAL_SSH_COMMAND": mute}) as term:
        s = term.wait("mute: connecting")
        t.ok("SUPERVISOR" in s or "KEYS HELD" in s, "the screen opens while it waits", s)
        s = term.wait("mute: no answer within 20 s", timeout=40)
        t.ok(True, "after 20 s without an answer the link is taken for down, saying so")
        term.keys("q")
        t.eq(term.exit_status(), 0, "and q leaves")
    mine = lambda argv: argv[:2] == [b"sleep", b"7777"]  # noqa: E731
    wait_until(lambda: not pids_whose_argv(mine))  # the signal to its group is delivered, not waited for
    t.eq(pids_whose_argv(mine), [], "no ssh of it is left running")


def test_hostile_machine(t):
    """A stand-in server (tests/integration/test_hostile_remote.py --serve)
    that answers the screen's subscribe and watch with terminal take-overs,
    ids of other machines, sizes no terminal has, and 100 KB strings."""
    serve = "%s %s --serve" % (sys.executable, helper("test_hostile_remote.py"))
    local.write_config("[hosts]\nevil = ssh://me@evil.example\n")
    for mode in ("hostile", "huge", "types", "missing", "badjson", "error-after-hello", "flood", "ended"):
        with screen(env={"CORRAL_SSH_COMMAND": serve, "CORRAL_TEST_HOSTILE": mode}) as term:
            term.wait("SUPERVISOR")
            term.keys("E")  # and its ended sessions (records with glance)
            term.settle(500)
            info = term.info()
            t.ok("HOSTILE-TITLE" not in (info.get("title") or ""), "%s: the screen's title is its own" % mode,
                 info.get("title"))
            s = term.screen()
            t.ok("\x1b" not in s and "\u202e" not in s, "%s: nothing hostile is drawn raw" % mode, s)
            if mode == "hostile":
                t.ok("On evil, another machine" in s and "\\x1b]52" in s.replace("\n", ""),
                     "its request is in the dialog, named as the other machine's, its text made visible", s)
            if mode == "ended":
                s = term.wait("evil:1000")
                ended = [l for l in s.split("\n") if "evil:" in l.split("\u2502")[0]]
                t.ok(len(ended) == 1 and "evil:1000 " in ended[0] + " ",
                     "E: of its ended sessions only the one with a name and an id a server gives is listed", s)
            if mode == "flood":
                term.wait_regex("[0-9]+ of [0-9]+")  # the dialog's "1 of N"
                term.wait_regex("/64 live, [0-9]+ remote")  # its sessions counted (they may come after)
                term.settle(500)  # the flood's last events drawn
                s = term.screen()
                n = int(re.search("[0-9]+ of ([0-9]+)", s).group(1))
                live = int(re.search("/64 live, ([0-9]+) remote", s).group(1))
                t.ok(n <= 256 and live <= 256 + 1,
                     "thousands of sessions and requests: the screen takes what one machine may have (%d, %d)" %
                     (live, n), s)
            # The dialog of its request, when one came, takes q: a signal
            # detaches, as from any screen.
            term.kill(signal.SIGTERM)
            t.eq(term.exit_status(), 1, "%s: the screen survives to detach on a signal, no crash" % mode)


@needs_sshd
def test_kept_tile_there(t):
    """K keeps another machine's session in its tile; the layout is kept
    by this machine's server, and the next screen puts the session back
    in that tile once its machine is up."""
    a = new_session(one, "kept-there", "echo kept-there-ready; exec sleep 600")
    hosts_config()
    with screen() as term:
        up(term)
        select(term, "kept-there")
        term.wait("kept-there-ready")
        term.send("t")
        term.wait("vertical split")
        term.send("K")
        s = term.wait("kept-there stays in tile")
        top = s.split("\n")[0]
        t.ok("kept-there one:%d" % a in top and "[kept]" in top, "K keeps another machine's session in a tile", s)
        tile = top.index("kept-there")
    with screen() as term:
        up(term)
        s = term.wait_regex("kept-there one:%d [^\n]*\\[kept\\]" % a)
        top = s.split("\n")[0]
        t.ok(abs(top.index("kept-there") - tile) < 4,
             "the next screen puts it back in the same tile once its machine is up", s)
        # Back as the other tests expect it: nothing kept, one pane.
        select(term, "kept-there")
        term.send("K")
        term.wait("no longer kept")
        for _ in range(3):
            term.send("t")
        term.wait_regex("live[^\n]* single ")
    one.corral("kill", str(a))


def test_as_an_unprivileged_user(t):
    """The same as the temporary user, with an sshd of its own (root only;
    the user's run skips this)."""
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    if lab.why_not:
        t.skip("the run as an unprivileged user", lab.why_not)
        return
    sys.path.insert(0, os.path.join(HERE, ".."))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, shell="/bin/sh",
                       helpers=[helper(f) for f in ("tuilib.py", "vtdrive", "harness.py", "sshlab.py",
                                                    "test_hostile_remote.py", "hostile.py")])


try:
    lab.start()
    if lab.why_not:
        t.diag("the tests through sshd skip: " + lab.why_not)
    else:
        one.start_server()
        two.start_server()
    run_tests(t, [test_every_machine_on_one_screen, test_a_request_there_answered_here, test_rules_error_there,
                  test_link_lost_and_back,
                  test_a_flood_there_comes_in_frames, test_ended_there, test_timeline_and_replay_there, test_n_asks_on_which_machine, test_attach_h, test_unreachable_machine,
                  test_a_link_that_never_answers, test_hostile_machine, test_kept_tile_there,
                  test_as_an_unprivileged_user])
finally:
    lab.stop()
    for w in (one, two, local):
        w.cleanup()
