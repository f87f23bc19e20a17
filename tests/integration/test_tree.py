#!/usr/bin/env python3
"""No process outlives its session: kill ends the whole tree, including
children that put themselves in a new session or were orphaned; a command
that exits takes its background children with it; the server's exit (even
a SIGKILL of the server) ends every session."""
import os
import signal
import subprocess

from harness import CORRAL, Tap, World, descendants, pid_alive, run_tests, wait_until

w = World()
w.start_server()
c = w.connect()

# Three kinds of children: a background job, a job in its own session
# (setsid), and an orphan whose parent exits at once (double fork).
TREE = "sleep 1001 & setsid sleep 1002 & (sleep 1003 &); echo ready; exec sleep 1004"


def sleeps_below(pid):
    found = {}
    for p in descendants(pid):
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if args[0] == b"sleep":
            found[args[1].decode()] = p
    return found


def test_kill_ends_whole_tree(t):
    r = c.call({"cmd": "new", "argv": ["sh", "-c", TREE], "cwd": w.ws})
    s = r["session"]
    init = s["pid"]
    # No event says when the shell has forked its children: watch /proc.
    tree = wait_until(lambda: (lambda f: f if len(f) == 4 else None)(sleeps_below(init)))
    t.ok(tree is not None, "all four sleeps run below the session's init", sleeps_below(init))
    if not tree:
        return
    t.ok(os.getsid(tree["1002"]) != os.getsid(tree["1004"]), "one of them is in a session of its own")
    t.eq(subprocess.run(["cat", "/proc/%d/stat" % tree["1003"]], capture_output=True,
                        text=True).stdout.rsplit(")", 1)[1].split()[1], str(init),
         "the orphan was re-parented to the session's init (a subreaper)")
    r = c.call({"cmd": "kill", "session": s["id"]})
    t.eq(r.get("state"), "killed SIGKILL", "kill answers once the session has ended")
    alive = [p for p in list(tree.values()) + [init] if pid_alive(p)]
    t.eq(alive, [], "no process of the tree is left when kill returns")


def processes_running(argv0, arg):
    """Host pids whose command line is exactly argv0 arg."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if args[:2] == [argv0.encode(), arg.encode()] and pid_alive(int(name)):
            found.append(int(name))
    return found


def test_exit_takes_children(t):
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", "sleep 1005 & echo started"], "workdir": w.ws})
    t.eq(r.get("exit_code"), 0, "the command exits")
    t.eq(processes_running("sleep", "1005"), [], "its background child did not outlive it")


def test_server_death_ends_sessions(t):
    w2 = World()
    w2.start_server()
    c2 = w2.connect()
    r = c2.call({"cmd": "new", "argv": ["sh", "-c", "sleep 1006 & exec sleep 1007"], "cwd": w.ws})
    init = r["session"]["pid"]
    tree = wait_until(lambda: (lambda f: f if len(f) == 2 else None)(sleeps_below(init)))
    t.ok(tree is not None, "a session runs with two processes")
    c2.close()
    w2.server.send_signal(signal.SIGKILL)
    w2.server.wait()
    # The init notices its parent's death (PR_SET_PDEATHSIG) and ends the
    # tree; nothing reports that to us, so watch /proc.
    gone = wait_until(lambda: not any(pid_alive(p) for p in list((tree or {}).values()) + [init]))
    t.ok(gone, "SIGKILL of the server still ends every session's tree")
    w2.cleanup()


try:
    run_tests(Tap(), [test_kill_ends_whole_tree, test_exit_takes_children, test_server_death_ends_sessions])
finally:
    c.close()
    w.cleanup()
