#!/usr/bin/env python3
"""corral log through the real server: a scripted interactive bash (with
corral's shell hook) runs commands, changes files, opens a connection
through the network proxy, gets a line approved and an escalation
approved with corral approve, has a line refused and its terminal
resized; an agent-style exec waits for approval first.  corral log --json
has an entry of every kind with its fields, numbered as corral diff
numbers commands; --kind, --grep and --since filter; the table shows
control characters made visible.  The recording has a marker at each
command's start and end, at the same numbers, and asciinema cat accepts
it.  Without a session, corral log lists the sessions, also with no server
running (and starts none) and after a restart.  A server killed with
SIGKILL while a session floods events leaves a log that loads up to a
torn last line with one warning; approvals.jsonl cut short gets the next
record on a line of its own."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORRAL, TIMEOUT, Tap, World, read_jsonl, run_in_pty, run_tests, wait_until  # noqa: E402
import proxyservers as ps  # noqa: E402

RULES = '''prefix_rule(pattern=["touch", "asked.txt"], decision="prompt", justification="needs a yes")
prefix_rule(pattern=["touch", "exec-asked"], decision="prompt", justification="an agent asks")
prefix_rule(pattern=["forbidden-tool"], decision="forbidden", justification="never from here")
network_rule(host="127.0.0.1", protocol="http", decision="allow")
'''
HAVE = shutil.which("bash") and shutil.which("curl")


def make_world():
    w = World()
    os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
    with open(os.path.join(w.config, "corral", "rules", "log.rules"), "w") as f:
        f.write(RULES)
    return w


class Monitor:
    """A subscribed connection: approvals, terminal bytes, session events."""

    def __init__(self, w):
        self.c = w.connect("monitor")
        self.c.call({"cmd": "subscribe"})

    def next(self, pred):
        return self.c.next_event(pred)

    def approval(self, kind):
        return self.next(lambda m: m.get("event") == "approval" and m["approval"]["kind"] == kind)["approval"]

    def screen_until(self, sid, marker):
        return self.c.screen_until(sid, marker)


def log_json(w, *args):
    r = w.corral("log", "--json", *args)
    return r, [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


# ---- the scripted session -------------------------------------------------------

class Scripted:
    pass


def scripted_session():
    """Run the session once; every test reads what it left."""
    S = Scripted()
    S.w = w = make_world()
    S.web = web = ps.WebServer("log-web")
    w.start_server()
    mon = S.mon = Monitor(w)
    sid = S.sid = mon.c.call({"cmd": "new", "argv": ["bash"], "cwd": w.ws, "name": "scripted"})["session"]["id"]
    mon.c.call({"cmd": "watch", "session": sid})

    def line(text, marker=None):
        mon.c.call({"cmd": "input", "session": sid, "data": text + "\r"})
        if marker:
            mon.screen_until(sid, marker)

    line("echo ready-$((40+2))", "ready-42")
    line("echo one > one.txt && echo step-$((0+1))", "step-1")
    line("curl -sS --max-time %d --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:%d/info -o /dev/null "
         "&& echo net-$((3+3))" % (TIMEOUT - 5, web.port), "net-6")
    line("touch asked.txt")
    a = S.hook_approval = mon.approval("command")
    S.approve_hook = w.corral("approve", str(a["id"]))
    line("echo asked-$((2+3))", "asked-5")
    line("forbidden-tool now")
    line("echo refused-$((1+6))", "refused-7")
    line("corral escalate -- sh -c 'exit 4'; echo esc=$?-$((8+1))")
    e = S.esc_approval = mon.approval("escalate")
    S.approve_esc = w.corral("approve", str(e["id"]))
    mon.screen_until(sid, "-9")
    S.resize = w.corral("resize", str(sid), "100x30")
    line("exit 3")
    path = os.path.join(w.session_dir(sid), "events.jsonl")

    def settled():
        ev = read_jsonl(path)
        names = [x["event"] for x in ev]
        return ("exited" in names and "network" in names
                and names.count("changes") == names.count("command_started")) and ev
    S.events = wait_until(settled) or read_jsonl(path)
    S.commands = mon.c.call({"cmd": "commands", "session": sid}).get("commands", [])

    # An agent's exec that waits for approval: its request is in approvals.jsonl.
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--", "touch", "exec-asked"], env=w.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    x = S.exec_approval = mon.approval("exec")
    S.approve_exec = w.corral("approve", str(x["id"]))
    p.communicate(timeout=TIMEOUT)
    # One with a control character in its command line.
    S.ctl = w.corral("exec", "-C", w.ws, "--", "sh", "-c", "echo 'ctl\x01here'")
    return S


S = None


def test_every_kind_with_its_fields(t):
    w, sid = S.w, S.sid
    r, entries = log_json(w, str(sid))
    t.eq(r.returncode, 0, "corral log --json SESSION reads the session's log", r.stderr)
    t.eq(r.stderr, "", "without a warning")
    kinds = {e["kind"] for e in entries}
    want = {"session", "command", "approval", "network", "escalation", "refused", "resize", "exit"}
    t.ok(want <= kinds, "every kind of entry is there", sorted(kinds))
    by = {}
    for e in entries:
        by.setdefault(e["kind"], []).append(e)
    cmds = by.get("command", [])
    lines = [c.get("line") for c in cmds]
    t.ok(lines[:2] == ["echo ready-$((40+2))", "echo one > one.txt && echo step-$((0+1))"]
         and "touch asked.txt" in lines and "exit 3" in lines, "the typed lines are the commands", lines)
    t.ok(cmds and [c.get("command") for c in cmds] == list(range(1, len(cmds) + 1)), "numbered 1, 2, ... in order",
         cmds)
    one = cmds[1] if len(cmds) > 1 else {}
    t.ok(one.get("cwd") == w.ws and one.get("state") == "ended" and one.get("exit_code") == 0
         and isinstance(one.get("duration_seconds"), (int, float)) and one.get("ended") and one.get("time"),
         "a command has its directory, start, end, duration and exit status", one)
    t.eq((one.get("counts") or {}).get("added"), 1, "and its diff counts (one file added)")
    asked = [c for c in cmds if c.get("line") == "touch asked.txt"]
    t.ok(asked and (asked[0].get("counts") or {}).get("added") == 1, "the approved line ran and added its file",
         asked)
    esc_line = [c for c in cmds if c.get("line", "").startswith("corral escalate")]
    t.ok(esc_line and esc_line[0].get("exit_code") == 0, "the line that escalated is a command too", esc_line)
    last = cmds[-1] if cmds else {}
    t.ok(last.get("line") == "exit 3" and "exit_code" not in last and last.get("state") == "ended",
         "the shell's last line ended with the session, its own status unknown", last)
    numbered = [(c["command"], c["line"]) for c in S.commands]
    t.eq([(c.get("command"), c.get("line")) for c in cmds], numbered, "the numbers are corral diff's")

    apps = {a.get("approval"): a for a in by.get("approval", [])}
    ha = apps.get(S.hook_approval["id"], {})
    t.ok(S.approve_hook.returncode == 0 and (ha.get("request") or {}).get("kind") == "command"
         and ha["request"].get("line") == "touch asked.txt", "the line's approval has its request", ha)
    t.ok(ha.get("answer") == "once" and ha.get("decision") == "approved" and ha.get("scope") == "once"
         and ha.get("by") == "user" and ha.get("decided") and ha.get("time"),
         "and its answer: once, approved, by whom and when", ha)
    ea = apps.get(S.esc_approval["id"], {})
    t.eq((ea.get("request") or {}).get("kind"), "escalate", "the escalation's approval is there too")

    net = [n for n in by.get("network", []) if n.get("port") == S.web.port]
    n = net[0] if net else {}
    t.ok(n.get("host") == "127.0.0.1" and n.get("decision") == "allow_explicit" and n.get("protocol") == "http"
         and n.get("bytes_to_client", 0) > 0 and n.get("bytes_to_server", 0) > 0 and n.get("time") and n.get("ended"),
         "the connection: host, port, protocol, decision, bytes, start and end", n)

    esc = by.get("escalation", [{}])[0]
    t.ok(esc.get("argv") == ["sh", "-c", "exit 4"] and esc.get("exit_code") == 4 and esc.get("status") == 4 << 8
         and esc.get("approval") == S.esc_approval["id"] and "duration_seconds" in esc,
         "the escalation: what ran, its exit status (and wait status), its approval, how long", esc)
    ref = by.get("refused", [{}])[0]
    t.ok("forbidden-tool" in ref.get("line", "") and "never from here" in ref.get("reason", ""),
         "the refused line and the rule's reason", ref)
    rs = by.get("resize", [{}])[0]
    t.ok(S.resize.returncode == 0 and (rs.get("cols"), rs.get("rows")) == (100, 30), "the resize", rs)
    ex = by.get("exit", [{}])[-1]
    t.eq((ex.get("event"), ex.get("code")), ("exited", 3), "and the session's end")
    sess = by.get("session", [{}])[0]
    t.ok(sess.get("session") == sid and sess.get("workspace") == w.ws and sess.get("session_kind") == "user",
         "the session's start names it and its workspace", sess)
    times = [e["time"] for e in entries]
    t.ok(times and times == sorted(times), "entries are in time order", times)


def test_exec_approval_from_approvals_log(t):
    w = S.w
    r, sessions = log_json(w, "--all")
    mine = [s for s in sessions if s.get("command") == ["touch", "exec-asked"]]
    t.ok(S.approve_exec.returncode == 0 and mine, "the approved exec ran as a session of its own", sessions)
    if not mine:
        return
    r, entries = log_json(w, mine[0]["session"])
    app = [e for e in entries if e["kind"] == "approval"]
    a = app[0] if app else {}
    t.ok(a.get("starts_session") is True and a.get("approval") == S.exec_approval["id"]
         and (a.get("request") or {}).get("command") == "touch exec-asked"
         and a.get("answer") == "once" and a.get("by") == "user",
         "its approval comes with the request and answer from approvals.jsonl", a)
    t.ok(entries and entries[0]["kind"] == "approval", "the request comes before the session it started",
         [e["kind"] for e in entries])


def test_filters(t):
    w, sid = S.w, str(S.sid)
    _, entries = log_json(w, sid)
    _, cmds = log_json(w, "--kind", "command", sid)
    t.ok(cmds and {e["kind"] for e in cmds} == {"command"}
         and len(cmds) == len([e for e in entries if e["kind"] == "command"]), "--kind command: the commands only")
    _, two = log_json(w, "--kind", "network,approval", sid)
    t.ok(two and {e["kind"] for e in two} == {"network", "approval"}, "--kind network,approval: those two kinds",
         [e["kind"] for e in two])
    _, found = log_json(w, "--grep", "asked.txt", sid)
    t.ok(sorted(e["kind"] for e in found) == ["approval", "command"],
         "--grep asked.txt: the line and its approval", found)
    r, none = log_json(w, "--grep", "no-such-text-anywhere", sid)
    t.ok(r.returncode == 0 and none == [], "--grep with text nowhere: nothing", r.stderr)
    _, upper = log_json(w, "-i", "--grep", "ASKED.TXT", sid)
    t.eq(len(upper), 2, "-i --grep ignores case")
    pivot = [e for e in entries if e["kind"] == "command" and e.get("line") == "touch asked.txt"]
    if pivot:
        _, since = log_json(w, "--since", pivot[0]["time"], sid)
        t.ok(since and all(e["time"] >= pivot[0]["time"] for e in since)
             and len(since) == len([e for e in entries if e["time"] >= pivot[0]["time"]])
             and since[0]["time"] == pivot[0]["time"], "--since ISO: what began at or after that time", since[:2])
    _, recent = log_json(w, "--since", "1d", sid)
    t.ok(entries and len(recent) == len(entries), "--since 1d: all of this session")
    r = w.corral("log", "--since", "last tuesday", sid)
    t.ok(r.returncode == 2 and "'last tuesday'" in r.stderr and "ISO 8601" in r.stderr and "10m" in r.stderr,
         "a bad --since names the value and the accepted forms", r.stderr)
    r = w.corral("log", "--kind", "commandz", sid)
    t.ok(r.returncode == 2 and "'commandz'" in r.stderr and "approval" in r.stderr,
         "a bad --kind names it and the kinds", r.stderr)
    r = w.corral("log", "424242")
    t.ok(r.returncode == 1 and "no session 424242" in r.stderr, "a session never recorded is named", r.stderr)


def test_table(t):
    w = S.w
    r = w.corral("log", str(S.sid))
    t.ok(r.returncode == 0 and "touch asked.txt" in r.stdout and "approved (once) by user" in r.stdout
         and "127.0.0.1:%d http allow_explicit" % S.web.port in r.stdout and "100x30" in r.stdout
         and "exited with code 3" in r.stdout, "the table: one line per entry", r.stdout)
    t.ok(r.returncode == 0 and "command" in r.stdout and "\033[" not in r.stdout,
         "no colour when stdout is not a terminal", r.stdout)
    r = w.corral("log", "--color", "always", str(S.sid))
    t.ok("\033[" in r.stdout, "--color always colours it")
    r = w.corral("log", "--color", "always", str(S.sid), env={"NO_COLOR": "1"})
    t.ok("\033[" in r.stdout, "--color always wins over NO_COLOR")
    code, out = run_in_pty([CORRAL, "log", str(S.sid)], dict(S.w.env, NO_COLOR="1"))
    t.ok(code == 0 and b"\033[3" not in out and b"touch asked.txt" in out, "on a terminal, NO_COLOR: no colour",
         out[-300:])
    code, out = run_in_pty([CORRAL, "log", str(S.sid)], {k: v for k, v in S.w.env.items() if k != "NO_COLOR"})
    t.ok(code == 0 and b"\033[" in out, "on a terminal: colour", out[-300:])
    _, sessions = log_json(w, "--all")
    ctl = [s for s in sessions if s.get("command") == ["sh", "-c", "echo 'ctl\x01here'"]]
    if ctl:
        r = w.corral("log", ctl[0]["session"])
        t.ok("ctl\\x01here" in r.stdout and "\x01" not in r.stdout,
             "a control character of the session is shown escaped, never written", r.stdout)
        r = w.corral("log")
        t.ok("\x01" not in r.stdout, "also in the list of sessions")
    else:
        t.ok(False, "the session with a control character is listed", sessions)


def test_markers(t):
    w, sid = S.w, S.sid
    cast = os.path.join(w.session_dir(sid), "output.cast")
    with open(cast) as f:
        events = [json.loads(line) for line in f.read().splitlines()[1:]]
    marks = [e[2] for e in events if e[1] == "m"]
    # The server's own list of the commands (corral diff --list), with
    # their exit status from their records.
    want = []
    for c in S.commands:
        want.append("cmd %d: %s" % (c["command"], c["line"]))
        rec = [e for e in S.events if e["event"] == "changes" and e["command"] == c["command"]]
        want.append("cmd %d end: exit %s" % (c["command"], rec[0].get("exit_code", "?") if rec else "?"))
    times = [e[0] for e in events]
    t.ok(len(want) >= 10 and marks[:-1] == want and marks[-1:] == ["exited with code 3"] and times == sorted(times),
         "a marker at each command's start and end, at corral diff's numbers, with its status (the exit marker "
         "still last, times never going backwards)", "got:  %r\nwant: %r" % (marks, want))
    if not shutil.which("asciinema"):
        t.skip("asciinema cat accepts the recording with markers", "asciinema is not installed (bootstrap installs it)")
        return
    code, out = run_in_pty(["asciinema", "cat", cast], S.w.env)
    t.ok(code == 0 and b"step-1" in out and len(marks) > 1, "asciinema cat accepts the recording with its markers",
         out[-400:])


def test_sessions_listed(t):
    w = S.w
    r, sessions = log_json(w)
    mine = [s for s in sessions if s.get("session") == str(S.sid)]
    s = mine[0] if mine else {}
    _, entries = log_json(w, str(S.sid))
    ncmd = len([e for e in entries if e["kind"] == "command"])
    t.ok(s.get("client") == "monitor" and s.get("workspace") == w.ws and s.get("commands") == ncmd
         and s.get("approvals") == 2 and s.get("hosts") == 1 and s.get("changes", {}).get("added") == 2
         and s.get("state") == "exited" and s.get("exit_code") == 3,
         "without a session: one line each, with its client, workspace, commands, approvals, hosts, changes", s)
    r = w.corral("log")
    t.ok("SESSION" in r.stdout and str(S.sid) in r.stdout and "exited 3" in r.stdout and "+2 ~0 -0" in r.stdout,
         "the table of sessions", r.stdout)
    live = w.corral("new", "--", "sleep", "300").stdout.strip()
    _, sessions = log_json(w)
    t.eq([x.get("state") for x in sessions if x.get("session") == live], ["running"], "a live session is running")
    w.corral("kill", live)
    r = w.corral("ls")
    row = [l for l in r.stdout.splitlines() if l.startswith(live + " ")]
    t.ok(row and "killed by you" in row[0] and "SIGKILL" not in row[0],
         "a session you killed is listed as killed by you, not as a failure", r.stdout)
    r = w.corral("log")
    lines = r.stdout.splitlines()
    head = next((l for l in lines if l.startswith("SESSION")), "")
    rows = [l for l in lines if l[:1].isdigit()]
    starts = [head.find(c) for c in ("STATE", "STARTED", "CHANGES", "NAME", "WORKSPACE")]
    t.ok(rows and all(s > 0 for s in starts) and
         all(all(x[s - 2:s] == "  " and x[s] != " " for s in starts[:2]) for x in rows),
         "corral log's table: every row's columns start under their heading", r.stdout)
    t.ok(any("killed by you" in x for x in rows if x.startswith(live + " ")) and "most recent first" in r.stdout,
         "with the killed session as killed by you, and the order said", r.stdout)
    w.stop()
    r, after = log_json(w)
    t.ok(r.returncode == 0 and {x["session"] for x in sessions} == {x["session"] for x in after},
         "with no server running, the same sessions are listed", (sessions, after))
    t.ok(r.returncode == 0 and after and not os.path.exists(w.socket_path), "and corral log started no server")
    w.start_server()
    _, again = log_json(w)
    t.ok(sessions and {x["session"] for x in sessions} <= {x["session"] for x in again},
         "after a restart they are still listed")
    r, limited = log_json(w, "-n", "1")
    t.eq(len(limited), 1, "-n 1 lists the most recent one")


# ---- a server killed while a session floods events ---------------------------------------

def test_sigkill_mid_flood(t):
    w = make_world()
    try:
        srv = w.start_server()
        c = w.connect()
        sid = c.call({"cmd": "new", "argv": ["cat"], "cwd": w.ws})["session"]["id"]
        # An approval first, so approvals.jsonl exists.
        mon = Monitor(w)
        p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--", "touch", "exec-asked"], env=w.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        w.corral("approve", str(mon.approval("exec")["id"]))
        p.communicate(timeout=TIMEOUT)
        mon.c.close()
        path = os.path.join(w.session_dir(sid), "events.jsonl")
        enough = threading.Event()
        count = [0]

        def flood():
            f = w.connect("flood")
            try:
                while True:
                    f.call({"cmd": "resize", "session": sid, "cols": 80 + count[0] % 50, "rows": 24})
                    count[0] += 1
                    if count[0] == 300:
                        enough.set()
            except (OSError, EOFError, ValueError):
                enough.set()
        th = threading.Thread(target=flood, daemon=True)
        th.start()
        enough.wait(TIMEOUT)
        srv.send_signal(signal.SIGKILL)
        srv.wait()
        th.join(TIMEOUT)
        data = open(path, "rb").read()
        t.diag("%d resizes were sent before the server was killed" % count[0])
        # The crash tore the last line, or (one write per line) it did not:
        # then tear it as a crash in the middle of a write would.
        if data.endswith(b"\n"):
            last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
            data = data[:len(data) - 1 - len(last) // 2]
            with open(path, "wb") as f:
                f.write(data)
        complete = data[:data.rfind(b"\n") + 1].decode().splitlines()
        whole = [json.loads(x) for x in complete]
        r, entries = log_json(w, str(sid))
        t.ok(r.returncode == 0 and count[0] >= 300, "corral log reads the log of a server killed mid-flood",
             r.stderr)
        t.eq(len([e for e in entries if e["kind"] == "resize"]),
             len([e for e in whole if e["event"] == "resized"]), "every resize before the torn line is there")
        warns = [x for x in r.stderr.splitlines() if x.strip()]
        t.ok(len(warns) == 1 and "%s:%d:" % (path, len(complete) + 1) in warns[0] and "cut short" in warns[0],
             "and one warning names the file and the torn line", r.stderr)
        r, listed = log_json(w)
        me = [x for x in listed if x.get("session") == str(sid)]
        t.ok(me and me[0].get("state") == "ended", "the session is listed as ended (no exit recorded)", listed)

        # approvals.jsonl cut short: the next record is a line of its own.
        ap = os.path.join(w.state, "corral", "approvals.jsonl")
        with open(ap, "ab") as f:
            f.write(b'{"time":"2026-11-29T07:41:25.000Z","event":"approval_req')
        w.start_server()
        mon = Monitor(w)
        p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--", "touch", "exec-asked"], env=w.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        again = mon.approval("exec")
        w.corral("approve", str(again["id"]))
        p.communicate(timeout=TIMEOUT)
        lines = open(ap, "rb").read().splitlines()
        parsed = []
        for x in lines:
            try:
                parsed.append(json.loads(x))
            except ValueError:
                parsed.append(None)
        t.ok(parsed.count(None) == 1 and parsed[-3] is None, "after a restart, approvals.jsonl loses only its torn line",
             lines[-3:])
        t.ok(parsed[-2] and parsed[-2].get("event") == "approval_requested"
             and parsed[-2].get("approval") == again["id"] and parsed[-1]
             and parsed[-1].get("event") == "approval_decided" and parsed[-1].get("approval") == again["id"],
             "and the new request and answer are whole lines", lines[-3:])
    finally:
        w.cleanup()


def main():
    global S
    t = Tap()
    if not HAVE:
        t.skip("corral log of a scripted session", "bash or curl is not installed (bootstrap installs them)")
        t.done()
    try:
        S = scripted_session()
    except Exception:
        import traceback
        t.ok(False, "the scripted session ran", traceback.format_exc())
        t.done()
    try:
        run_tests(t, [test_every_kind_with_its_fields, test_exec_approval_from_approvals_log, test_filters,
                      test_table, test_markers, test_sessions_listed, test_sigkill_mid_flood])
    finally:
        S.web.close()
        S.w.cleanup()


if __name__ == "__main__":
    main()
