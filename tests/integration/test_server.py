#!/usr/bin/env python3
"""Server lifecycle: autostart by any client, one server per socket (a
second start names the pid), SIGTERM and `server --stop` end every session
and leave complete logs, the socket directory is private, config errors
name file:line, lifetime limits kill abandoned processes."""
import os
import re
import signal
import stat

from harness import CORRAL, Tap, World, pid_alive, read_jsonl, run_in_pty, run_tests


def stop_on_a_terminal(w, answer):
    """corral server --stop with a terminal for stdin and stderr, answering
    its question: (status, everything printed)."""
    rc, out = run_in_pty([CORRAL, "server", "--stop"], env=w.env, answer=(b"[y/N]", answer))
    return rc, out.decode(errors="replace")


def lock_pid(w):
    with open(os.path.join(w.runtime, "corral", "default.lock")) as f:
        return int(f.read().strip())


def test_autostart_and_single_server(t):
    w = World()
    try:
        r = w.corral("ls")
        t.eq(r.returncode, 0, "ls with no server running starts one", r.stderr)
        t.ok(os.path.exists(w.socket_path), "the socket exists")
        mode = stat.S_IMODE(os.stat(os.path.dirname(w.socket_path)).st_mode)
        t.eq(oct(mode), oct(0o700), "the socket directory is private (0700)")
        pid = lock_pid(w)
        t.ok(pid_alive(pid), "the lock file names the live server pid")
        r = w.corral("server")
        t.eq(r.returncode, 1, "a second start fails")
        t.eq(r.stderr.strip(), "corral: a server is already running on %s (pid %d)" % (w.socket_path, pid),
             "and says which pid serves the socket")
        r = w.corral("server", "--foreground")
        t.ok("already running" in r.stderr and str(pid) in r.stderr, "so does a foreground start", r.stderr)
        v = w.corral("version")
        t.ok(re.search(r"server: corral \S+, pid %d" % pid, v.stdout), "version shows the server", v.stdout)
        r = w.corral("server", "--stop")
        t.eq(r.returncode, 0, "server --stop stops it", r.stderr)
        t.ok(not pid_alive(pid), "the server process is gone when --stop returns")
        t.ok(not os.path.exists(w.socket_path), "and its socket removed")
        r = w.corral("kill", "1234")
        t.ok(r.returncode == 1 and "no session with id 1234" in r.stderr, "a later command starts a new server",
             r.stderr)
    finally:
        w.cleanup()


def test_stop_says_what_ends(t):
    w = World()
    try:
        w.start_server()
        pid = lock_pid(w)
        w.corral("new", "--", "sleep", "1000")
        w.corral("new", "--", "sleep", "1000")
        rc, out = stop_on_a_terminal(w, b"n\n")
        t.ok("Stop the corral server (pid %d)? 2 running sessions end with it" % pid in out and rc != 0
             and "the server keeps running" in out, "on a terminal, --stop asks first, saying how many running "
             "sessions end; n keeps it", out)
        t.ok(pid_alive(pid), "and the server still runs")
        rc, out = stop_on_a_terminal(w, b"y\n")
        t.ok(rc == 0 and "server (pid %d) stopped; 2 running sessions ended" % pid in out, "y stops it, and it says "
             "how many sessions ended", out)
        t.ok(not pid_alive(pid), "the server is gone")
        w.start_server()
        w.corral("new", "--", "sleep", "1000")
        r = w.corral("server", "--stop")
        t.ok(r.returncode == 0 and "stopped; 1 running session ended" in r.stdout and "[y/N]" not in r.stderr,
             "without a terminal (a script) it does not ask, and still says what ended", r.stdout + r.stderr)
    finally:
        w.cleanup()


def test_sigterm_ends_sessions(t):
    w = World()
    try:
        srv = w.start_server()
        c = w.connect()
        a = c.call({"cmd": "new", "argv": ["sh", "-c", "echo hello; exec sleep 1000"], "cwd": w.ws})["session"]
        b = c.call({"cmd": "exec", "argv": ["sleep", "1000"], "workdir": w.ws, "yield_time_ms": 250})
        c.close()
        srv.send_signal(signal.SIGTERM)
        code = srv.wait(30)
        t.eq(code, 0, "SIGTERM: the server exits 0")
        t.ok(not pid_alive(a["pid"]), "the sessions' process trees are gone")
        t.ok(not os.path.exists(w.socket_path), "the socket is removed")
        for sid in (a["id"], b["session"]):
            ev = [e["event"] for e in read_jsonl(os.path.join(w.session_dir(sid), "events.jsonl"))]
            t.eq(ev, ["created", "command_started", "killed", "exited", "command_ended", "changes"],
                 "session %d's log ends with killed, exited, and its command's end and record (taken before the "
                 "server exits)" % sid)
        killed = [e for e in read_jsonl(os.path.join(w.session_dir(a["id"]), "events.jsonl"))
                  if e["event"] == "killed"]
        t.eq(killed[0].get("reason") if killed else None, "shutdown", "the kill reason is shutdown")
        with open(os.path.join(w.session_dir(a["id"]), "output.cast")) as f:
            lines = f.read().splitlines()
        output = [l for l in lines[1:] if '"o"' in l]
        t.ok(output and '"hello\\r\\n"' in output[0], "the recording kept the output", lines[:3])
        t.ok(lines[-1].endswith('"m", "killed by SIGKILL"]'), "and ends with the exit marker", lines[-1])
    finally:
        w.cleanup()


def test_config_error_names_file_and_line(t):
    w = World(config="[limits]\nexec-lifetime = 5m\nsession-lifetme = 1h\n")
    try:
        r = w.corral("ls")
        path = os.path.join(w.config, "corral", "config")
        t.eq(r.returncode, 1, "a bad config stops the server from starting")
        t.eq(r.stderr.strip(), "corral: %s:3: unknown key 'session-lifetme' in [limits] "
             "(known: session-lifetime, exec-lifetime) (the server reads these sections; fix them and start again)" % path, "the error names file:line and the known keys")
    finally:
        w.cleanup()


def test_lifetime_limit(t):
    w = World(config="[limits]\nexec-lifetime = 1s\n")
    try:
        w.start_server()
        c = w.connect()
        r = c.call({"cmd": "exec", "argv": ["sleep", "100"], "workdir": w.ws, "yield_time_ms": 250})
        sid = r["session_id"]
        r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "", "yield_time_ms": 30000})
        t.eq(r.get("exit_code"), 137, "an exec process past its lifetime is killed (the poll returns at its end)")
        ev = read_jsonl(os.path.join(w.session_dir(sid), "events.jsonl"))
        t.eq([(e["event"], e.get("reason")) for e in ev if e["event"] == "killed"], [("killed", "lifetime")],
             "the log says why")
        r = c.call({"cmd": "new", "argv": ["sleep", "100"], "cwd": w.ws})
        s = r["session"]
        r = c.call({"cmd": "write_stdin", "session_id": s["id"], "chars": "", "yield_time_ms": 5000})
        t.ok("session_id" in r, "user sessions have no lifetime limit by default")
        c.close()
    finally:
        w.cleanup()


try:
    run_tests(Tap(), [test_autostart_and_single_server, test_stop_says_what_ends, test_sigterm_ends_sessions,
                      test_config_error_names_file_and_line, test_lifetime_limit])
finally:
    pass
