#!/usr/bin/env python3
"""What a sandboxed process writes is read by corral's own snapshotter,
which runs with the user's rights: these tests attack that reader from
inside sandboxes, as an agent would (docs/sandbox.md, "Readers of what a
session wrote").

 - A name in the workspace swapped between a real directory (or file) and
   a symlink to a path the sandbox may not read, in a loop, beside
   snapshotted commands: no byte of the denied file may reach the
   snapshot store, a diff, an export, or the workspace through a revert.
 - A FIFO swapped in the same way must not wedge snapshots: the
   workspace's other commands, other workspaces and the server's shutdown
   go on.
 - A reader that stops answering (stopped with SIGSTOP here) is given up
   after [snapshots] stall-timeout: the command's record says the
   snapshot is incomplete and why, the next command gets a new reader,
   and stopping the server does not wait for it.

Run as root, the file runs itself again as a temporary unprivileged user.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

from harness import CORRAL, TIMEOUT, Tap, World, reader_pids, run_tests, wait_until

MARKER = b"SECRET-MARKER-%d-never-in-a-snapshot" % os.getpid()
SWAP_SECONDS = 20
COMMANDS = 40

# Runs inside the sandbox: exchange two names as fast as the kernel allows.
SWAP = r'''
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.time() + float(sys.argv[1])
pairs = [(sys.argv[i].encode(), sys.argv[i + 1].encode()) for i in range(2, len(sys.argv), 2)]
n = 0
while time.time() < end:
    for a, b in pairs:
        libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
        n += 1
print("swaps", n)
'''

# The secret: outside the workspace, denied to every session by the
# config; and inside it, denied the same way.
base = tempfile.mkdtemp(prefix="corral-hostile-", dir="/var/tmp")
os.chmod(base, 0o755)
outside = os.path.join(base, "outside")
os.makedirs(os.path.join(outside, "dir"))
for p in ("secret.txt", "dir/secret.txt"):
    with open(os.path.join(outside, p), "wb") as f:
        f.write(MARKER + b"\n")
w = World(config="[sandbox]\n    deny = %s\n[snapshots]\n    stall-timeout = 2s\n" % outside)
inner_secret = os.path.join(w.ws, "inner-secret")
os.makedirs(inner_secret)
with open(os.path.join(inner_secret, "key.txt"), "wb") as f:
    f.write(MARKER + b" (inside the workspace)\n")
with open(os.path.join(w.config, "corral", "config"), "a") as f:
    f.write("[sandbox]\n    deny = %s\n" % inner_secret)
w.start_server()


def exec_cmd(*args, ws=None):
    return w.corral("exec", "-C", ws or w.ws, *args)


def session_of(out):
    for line in out.splitlines():
        if line.startswith("Process running with session ID "):
            return int(line.rsplit(" ", 1)[1])
    return None


def sessions():
    return json.loads(w.corral("ls", "--json").stdout)["sessions"]


def session_running(prefix):
    """The newest session whose command line starts with prefix (ids are
    drawn at random: the newest by its start)."""
    return max((s for s in sessions() if " ".join(s["command"]).startswith(prefix)), key=lambda s: s["created"])["id"]


def stores():
    return glob.glob(os.path.join(w.state, "corral", "snapshots", "*"))


def store_objects_with_marker():
    """Every object of every store, uncompressed, searched for the marker."""
    hits = []
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", HOME=w.base)
    for s in stores():
        r = subprocess.run(["git", "--git-dir", s, "cat-file", "--batch-all-objects", "--batch"],
                           capture_output=True, env=env, timeout=TIMEOUT * 4)
        if MARKER in r.stdout:
            hits.append(s)
    return hits


def workspace_has_marker(ws):
    for root, dirs, files in os.walk(ws):
        if os.path.abspath(root).startswith(inner_secret):
            continue
        for name in files:
            p = os.path.join(root, name)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            try:
                with open(p, "rb") as f:
                    if MARKER in f.read():
                        return p
            except OSError:
                pass
    return None


def test_symlink_swaps_never_reach_the_store(t):
    ws = w.ws
    with open(os.path.join(ws, "swap.py"), "w") as f:
        f.write(SWAP)
    os.makedirs(os.path.join(ws, "real"))
    with open(os.path.join(ws, "real", "secret.txt"), "w") as f:
        f.write("harmless\n")
    with open(os.path.join(ws, "realf"), "w") as f:
        f.write("harmless file\n")
    os.makedirs(os.path.join(ws, "real2"))
    with open(os.path.join(ws, "real2", "key.txt"), "w") as f:
        f.write("harmless too\n")
    os.symlink(os.path.join(outside, "dir"), os.path.join(ws, "link"))
    os.symlink(os.path.join(outside, "secret.txt"), os.path.join(ws, "linkf"))
    os.symlink(inner_secret, os.path.join(ws, "link2"))
    r = exec_cmd("--yield", "250", "--", "python3", "swap.py", str(SWAP_SECONDS),
                 "real", "link", "realf", "linkf", "real2", "link2")
    swapper = session_of(r.stdout)
    t.ok(swapper is not None, "the swap loop runs in a session of its own", r.stdout + r.stderr)
    done = 0
    for i in range(COMMANDS):
        r = exec_cmd("--", "sh", "-c", "echo %d >> counter.txt; cat real/secret.txt realf >/dev/null 2>&1; true" % i)
        done += "Process exited with code 0" in r.stdout
    t.eq(done, COMMANDS, "%d snapshotted commands ran beside the swaps" % COMMANDS)
    r = w.corral("poll", "--yield", str((SWAP_SECONDS + 10) * 1000), str(swapper))
    t.ok("swaps" in r.stdout, "the swap loop ran to its end", r.stdout + r.stderr)
    t.diag(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "")
    # Every snapshot is in: a last command waits for its own.
    exec_cmd("--", "true")
    t.eq(store_objects_with_marker(), [], "no object of any snapshot store holds the denied files' bytes")
    leaks = []
    ids = [s["id"] for s in sessions()]
    for sid in ids:
        r = w.corral("diff", str(sid), "1", "--patch")
        if MARKER.decode() in r.stdout + r.stderr:
            leaks.append("diff %d" % sid)
            t.diag(r.stdout[:3000])
        r = w.corral("diff", str(sid), "--since-start", "--patch")
        if MARKER.decode() in r.stdout + r.stderr:
            leaks.append("diff --since-start %d" % sid)
    t.eq(leaks, [], "no diff of the %d sessions shows them" % len(ids))
    exports = os.path.join(w.base, "exports")
    os.makedirs(exports)
    leaks = []
    for sid in ids:
        out = os.path.join(exports, "%d.tar.gz" % sid)
        w.corral("export", str(sid), "-o", out)
        if os.path.exists(out):
            with tarfile.open(out) as tf:
                for m in tf.getmembers():
                    if m.isfile() and MARKER in tf.extractfile(m).read():
                        leaks.append("%d:%s" % (sid, m.name))
    t.eq(leaks, [], "no export shows them", leaks)
    reverted = 0
    for sid in reversed(ids):
        r = w.corral("revert", str(sid), "1")
        reverted += r.returncode == 0
    t.ok(reverted > 0, "commands were reverted (%d of %d; the rest conflict)" % (reverted, len(ids)))
    t.eq(workspace_has_marker(ws), None, "no revert wrote a byte of them into the workspace")


def test_the_reader_is_confined(t):
    pids = reader_pids(w.ws)
    t.ok(len(pids) == 1, "the workspace has one reader process", pids)
    if not pids:
        return
    pid = pids[0]
    with open("/proc/%d/status" % pid) as f:
        status = f.read()
    t.ok("\nSeccomp:\t2" in status and "\nNoNewPrivs:\t1" in status and "\nCapEff:\t0000000000000000" in status,
         "it runs under the seccomp filter, no_new_privs, no capabilities", status)
    for path in (os.path.join(outside, "secret.txt"), os.path.join(inner_secret, "key.txt")):
        try:
            with open("/proc/%d/root%s" % (pid, path), "rb") as f:
                data = f.read()
        except OSError as e:
            data = None
            t.ok(True, "its view has no %s (%s)" % (path, e.strerror))
            continue
        t.ok(MARKER not in data, "its view of %s holds no secret" % path, data[:80])
    try:
        wrote = True
        with open("/proc/%d/root%s/probe" % (pid, w.ws), "w") as f:
            f.write("x")
    except OSError:
        wrote = False
    t.ok(not wrote, "the workspace is read-only in its view")


def test_fifo_swaps_wedge_nothing(t):
    ws = os.path.join(w.base, "fifo-ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "swap.py"), "w") as f:
        f.write(SWAP)
    with open(os.path.join(ws, "plain"), "w") as f:
        f.write("a file\n")
    os.mkfifo(os.path.join(ws, "pipe"))
    os.makedirs(os.path.join(ws, "d"))
    os.mkfifo(os.path.join(ws, "d", "f"))
    os.makedirs(os.path.join(ws, "e"))
    with open(os.path.join(ws, "e", "f"), "w") as f:
        f.write("another file\n")
    r = exec_cmd("--yield", "250", "--", "python3", "swap.py", "10", "plain", "pipe", "d", "e", ws=ws)
    swapper = session_of(r.stdout)
    t.ok(swapper is not None, "a FIFO is swapped with a file and a directory in a loop", r.stdout + r.stderr)
    errors = []
    # As many snapshotted commands as the loop's 10 s take, each a chance
    # for a snapshot to open the FIFO.
    i = 0
    while i < 10 or (i < 60 and any(s["id"] == swapper and s["state"] == "running" for s in sessions())):
        r = exec_cmd("--", "sh", "-c", "echo %d >> counter.txt" % i, ws=ws)
        if "Process exited with code 0" not in r.stdout:
            errors.append(r.stdout + r.stderr)
        i += 1
    last = i - 1
    t.eq(errors, [], "%d commands in that workspace run" % i)
    fresh = os.path.join(w.base, "fresh-ws")
    os.makedirs(fresh)
    started = time.monotonic()
    r = exec_cmd("--", "sh", "-c", "echo made > made.txt", ws=fresh)
    took = time.monotonic() - started
    fresh_sid = session_running("sh -c echo made")
    d = w.corral("diff", str(fresh_sid), "1", "--name-status")
    t.ok("made.txt" in d.stdout and "incomplete" not in d.stderr,
         "a command in a fresh workspace meanwhile gets its snapshot", d.stdout + d.stderr)
    t.diag("the fresh workspace's command took %.2f s" % took)
    d = w.corral("diff", str(session_running("sh -c echo %d" % last)), "1", "--name-status")
    t.ok("counter.txt" in d.stdout, "the FIFO workspace's own commands get theirs", d.stdout + d.stderr)
    w.corral("poll", "--yield", "20000", str(swapper))


def test_a_stalled_reader_is_given_up(t):
    ws = os.path.join(w.base, "stall-ws")
    os.makedirs(ws)
    r = exec_cmd("--", "sh", "-c", "echo one > one.txt", ws=ws)
    pids = reader_pids(ws)
    t.ok(len(pids) == 1, "the workspace's reader runs", pids)
    if not pids:
        return
    os.kill(pids[0], signal.SIGSTOP)
    r = exec_cmd("--", "sh", "-c", "echo two > two.txt", ws=ws)
    t.ok("Process exited with code 0" in r.stdout, "a command still runs while its reader is stopped",
         r.stdout + r.stderr)
    sid = session_running("sh -c echo two")
    log = w.corral("log", str(sid), "--json")
    recs = [json.loads(l) for l in log.stdout.splitlines() if l.strip()]
    cmd = [e for e in recs if e.get("kind") == "command"]
    text = json.dumps(cmd)
    t.ok(cmd and "incomplete" in text and "stall-timeout" in text,
         "its record says the snapshot is incomplete and why", log.stdout + log.stderr)
    t.ok(wait_until(lambda: not reader_pids(ws) or reader_pids(ws) != pids),
         "the stopped reader was killed", reader_pids(ws))
    r = exec_cmd("--", "sh", "-c", "echo three > three.txt", ws=ws)
    sid = session_running("sh -c echo three")
    d = w.corral("diff", str(sid), "1", "--name-status")
    t.ok("three.txt" in d.stdout, "the next command gets a snapshot from a new reader", d.stdout + d.stderr)


def test_stop_does_not_wait_for_a_stalled_reader(t):
    ws = os.path.join(w.base, "stop-ws")
    os.makedirs(ws)
    exec_cmd("--", "true", ws=ws)
    pids = reader_pids(ws)
    t.ok(len(pids) == 1, "the workspace's reader runs", pids)
    if not pids:
        return
    os.kill(pids[0], signal.SIGSTOP)
    # A command whose "before" snapshot now waits on the stopped reader:
    # sent on a connection of its own (the CLI would start a new server
    # if it came after the stop, with a new reader), and seen waiting (a
    # snapshot job that runs for a second is announced) before the stop.
    mon = w.connect("stop-watcher")
    mon.call({"cmd": "subscribe"})
    c = w.connect("stop-exec")
    c.send({"cmd": "exec", "id": 1, "argv": ["sh", "-c", "echo x > x.txt"], "workdir": ws, "yield_time_ms": 30000})
    mon.next_event(lambda m: m.get("event") == "snapshot" and m.get("workspace") == os.path.realpath(ws) and
                   m["snapshots"].get("phase") != "idle")
    started = time.monotonic()
    r = w.corral("server", "--stop")
    stopped = wait_until(lambda: w.server.poll() is not None)
    took = time.monotonic() - started
    t.ok(stopped, "the server stops while a snapshot waits on a stopped reader", r.stdout + r.stderr)
    t.diag("corral server --stop took %.2f s" % took)
    c.close()
    mon.close()
    t.ok(wait_until(lambda: not reader_pids(ws)), "and its readers are gone", reader_pids(ws))


def test_as_an_unprivileged_user(t):
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, helpers=[os.path.join(here, "harness.py")])


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_symlink_swaps_never_reach_the_store, test_the_reader_is_confined,
                          test_fifo_swaps_wedge_nothing, test_a_stalled_reader_is_given_up,
                          test_stop_does_not_wait_for_a_stalled_reader, test_as_an_unprivileged_user])
    finally:
        w.cleanup()
        subprocess.run(["rm", "-rf", base])
