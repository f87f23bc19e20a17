#!/usr/bin/env python3
"""Server lifecycle: autostart by any client, one server per socket (a
second start names the pid), SIGTERM and `server --stop` end every session
and leave complete logs, the socket directory is private, config errors
name file:line, lifetime limits kill abandoned processes."""
import os
import re
import signal
import stat

from harness import CORRAL, Tap, World, pid_alive, read_jsonl, reader_pids, run_in_pty, run_tests, wait_until


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


def pids_cgroup_dir(pid):
    """The cgroup v1 pids directory (or v2 directory) corral made for pid's
    sandbox, or None when it made none (no writable hierarchy here)."""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f.read().splitlines():
            _, controllers, path = line.split(":", 2)
            if os.path.basename(path).startswith("corral-"):
                if controllers == "":
                    return "/sys/fs/cgroup/unified" + path if os.path.isdir("/sys/fs/cgroup/unified") \
                        else "/sys/fs/cgroup" + path
                if "pids" in controllers.split(","):
                    return "/sys/fs/cgroup/pids" + path
    return None


def test_sigterm_leaves_no_cgroup(t):
    """Every sandbox the server ran has its cgroup removed when the server
    stops, the workspace's snapshot reader's too (it is ended after the
    server has stopped reaping through its signal handler)."""
    w = World()
    try:
        srv = w.start_server()
        c = w.connect()
        r = c.call({"cmd": "exec", "argv": ["true"], "workdir": w.ws, "yield_time_ms": 30000})
        t.eq(r.get("exit_code"), 0, "a command ran in the workspace (its snapshots start a reader)", r)
        readers = reader_pids(w.ws)
        dirs = [d for d in (pids_cgroup_dir(p) for p in readers) if d]
        c.close()
        srv.send_signal(signal.SIGTERM)
        t.eq(srv.wait(30), 0, "SIGTERM: the server exits 0")
        if not dirs:
            t.skip("the reader's cgroup is gone with it", "no cgroup is made for sandboxes here (no writable hierarchy)")
        else:
            t.eq([d for d in dirs if os.path.isdir(d)], [], "the reader's cgroup is gone with it")
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


def children_of(pid):
    """The pids whose parent is pid."""
    kids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(name))
    return kids


def fd_targets(pid):
    """What each open descriptor of pid names (pipe:[N], a path ...), sorted."""
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return sorted(out)


def test_ended_sessions_leave_no_descriptor_behind(t):
    """A server runs for days and starts thousands of sandboxes: each one
    it has started and reaped leaves none of its descriptors open in the
    server (a pipe per launch once did, until the server ran out).  What a
    session kept in the store holds by design, its event log and
    recording, is not counted: the store keeps at most 64."""
    w = World()
    try:
        srv = w.start_server()
        sessions = os.path.join(w.state, "corral", "sessions") + "/"

        def run_one():
            r = w.corral("new", "-C", w.ws, "--", "true")
            if r.returncode != 0:
                return "corral new: " + r.stderr
            r = w.corral("poll", "--yield", "30000", r.stdout.strip())
            return None if "Process exited with code 0" in r.stdout else "corral poll: " + r.stdout + r.stderr

        def held():
            return [f for f in fd_targets(srv.pid) if not f.startswith(sessions)]

        # One session first: what the server opens once and keeps (the
        # workspace's store, its logs) is open before the count.
        t.eq(run_one(), None, "a session runs to its end")
        before = held()
        errors = [e for e in (run_one() for _ in range(10)) if e]
        t.eq(errors, [], "ten more sessions run to their end")
        # A session's last descriptors close as the server finishes with
        # its end, which no event of the protocol follows.
        wait_until(lambda: len(held()) <= len(before))
        after = held()
        t.ok(len(after) <= len(before),
             "and the server holds no more descriptors than after the first (%d then, %d now; pipes %d, %d)"
             % (len(before), len(after), len([f for f in before if f.startswith("pipe:")]),
                len([f for f in after if f.startswith("pipe:")])), sorted(set(after) - set(before)))
    finally:
        w.cleanup()


def test_a_session_without_its_files_does_not_run(t):
    """The server makes a session's directory, log and recording while its
    sandbox sets itself up.  When they cannot be made, the request fails
    naming the path, and the sandbox already started is gone: no command
    runs unrecorded."""
    w = World(config="[snapshots]\nenabled = false\n[sandbox]\nkeep-warm = 0\n")
    try:
        srv = w.start_server()
        c = w.connect()
        sessions = os.path.join(w.state, "corral", "sessions")
        ok = c.call({"cmd": "new", "argv": ["true"], "cwd": w.ws})
        t.ok("session" in ok, "a session starts", ok)
        t.ok(wait_until(lambda: children_of(srv.pid) == []), "and ends", children_of(srv.pid))
        os.rename(sessions, sessions + ".away")
        with open(sessions, "w") as f:
            f.write("not a directory\n")
        marker = os.path.join(w.ws, "ran")
        for req in ({"cmd": "new", "argv": ["sh", "-c", "touch %s; exec sleep 1000" % marker], "cwd": w.ws},
                    {"cmd": "exec", "argv": ["sh", "-c", "touch %s; exec sleep 1000" % marker], "workdir": w.ws,
                     "yield_time_ms": 250}):
            r = c.call(req)
            t.ok("error" in r and sessions in r["error"].get("message", "") and
                 "Not a directory" in r["error"].get("message", ""),
                 "%s: refused, naming the path and why" % req["cmd"], r)
            kids = children_of(srv.pid)
            t.eq(kids, [], "%s: no sandbox is left running" % req["cmd"],
                 [open("/proc/%d/cmdline" % k).read().replace("\0", " ") for k in kids])
        t.ok(not os.path.exists(marker), "and the command never ran")
        os.unlink(sessions)
        os.rename(sessions + ".away", sessions)
        r = c.call({"cmd": "exec", "argv": ["echo", "back"], "workdir": w.ws, "yield_time_ms": 30000})
        t.eq((r.get("exit_code"), r.get("output", "").strip()), (0, "back"),
             "once the directory is back, commands run again", r)
        c.close()
    finally:
        w.cleanup()


try:
    run_tests(Tap(), [test_autostart_and_single_server, test_stop_says_what_ends, test_sigterm_ends_sessions,
                      test_sigterm_leaves_no_cgroup,
                      test_config_error_names_file_and_line, test_lifetime_limit,
                      test_ended_sessions_leave_no_descriptor_behind,
                      test_a_session_without_its_files_does_not_run])
finally:
    pass
