#!/usr/bin/env python3
"""Many sandboxes in one workspace at once, as agents run them: every one
is set up and runs sandboxed while others start and end around it, the
protected paths hold in each, one sandbox cannot turn another's empty
mount points into something the host runs, and no mount point corral made
is left behind in the workspace."""
import os
import select
import shutil
import subprocess
import threading

from harness import CORRAL, TIMEOUT, Tap, World, placeholders_held, run_tests, wait_until

# An agent's commands start from the workspace's pre-built sandbox, which
# holds its placeholders until keep-warm has passed after the last command
# (docs/sandbox.md, "Pre-built sandboxes"): 1 s here, so that what is left
# can be looked at once it has gone.
w = World(config="[sandbox]\n    keep-warm = 1s\n")

# Names corral makes empty read-only mount points for when they are missing.
PLACEHOLDERS = (".git", ".corral", ".codex", ".agents")
N = 64

# Run in each sandbox (sh -c PROBE sh N): say which sandbox it is, then try
# the protected paths (each must fail) and write the workspace (must work;
# N names the file: every sandbox's shell is pid 2 in its own namespace).
PROBE = ('echo "$CORRAL_SANDBOX"; '
         'mkdir .git/hooks/x 2>/dev/null && echo WROTE-HOOKS; '
         'mkdir .corral/rules 2>/dev/null && echo WROTE-CORRAL; '
         'echo ok > "out-$1" && rm "out-$1" || echo WS-NOT-WRITABLE')


def probe(i):
    return ["sh", "-c", PROBE, "sh", str(i)]


def git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT)


def run_all(argvs, cwd, timeout=120):
    """Start every argv at once; return (returncode, stdout, stderr) each,
    returncode None for one that did not end within timeout (killed)."""
    procs = [subprocess.Popen(a, cwd=cwd, env=w.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for a in argvs]
    results = [None] * len(procs)

    def collect(i, p):
        try:
            out, err = p.communicate(timeout=timeout)
            results[i] = (p.returncode, out.decode(errors="replace"), err.decode(errors="replace"))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            results[i] = (None, out.decode(errors="replace"), err.decode(errors="replace"))

    threads = [threading.Thread(target=collect, args=(i, p)) for i, p in enumerate(procs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results


def read_lines(fd, n, timeout):
    """Read lines from the non-blocking fd until n have come or timeout
    seconds passed without one; return the lines."""
    buf = b""
    while buf.count(b"\n") < n:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        buf += os.read(fd, 4096)
    return buf.splitlines()


def failures(results, want_out):
    bad = [(i, r) for i, r in enumerate(results) if r[0] != 0 or r[1] != want_out]
    return "%d of %d wrong; first ones:\n%s" % (
        len(bad), len(results), "\n".join("#%d rc=%r out=%r err=%r" % (i, r[0], r[1], r[2][-300:])
                                         for i, r in bad[:5]))


def leftovers(ws):
    return sorted(n for n in PLACEHOLDERS if os.path.lexists(os.path.join(ws, n)))


def registry_entries():
    return placeholders_held(w.base)


def test_parallel_corral_sandbox(t):
    """The cheap reproduction: 64 `corral sandbox` at once, three rounds,
    in a directory without a repository (every protected name missing)."""
    ws = os.path.join(w.base, "plain")
    os.makedirs(ws)
    want = "workspace-write\n"
    results = []
    for _ in range(3):
        results += run_all([[CORRAL, "sandbox", "-C", ws, "--"] + probe(i) for i in range(N)], ws)
    ok = all(r[0] == 0 and r[1] == want for r in results)
    t.ok(ok, "%d concurrent corral sandbox in one workspace (x3) all run sandboxed, protected paths hold" % N,
         failures(results, want))
    t.eq(leftovers(ws), [], "no mount point corral made is left in the workspace")
    t.eq(registry_entries(), [], "and none is still counted as in use")


def test_exec_with_sessions_ending(t):
    """The issue's case: a repository whose .git/hooks is missing, the
    server's store full of running sandboxed sessions, and 64 more execs at
    once, each of which prunes (kills) a running one while others are
    being set up."""
    if not shutil.which("git"):
        t.skip("64 concurrent execs with sessions ending under them", "git is not installed")
        return
    repo = os.path.join(w.base, "repo")
    os.makedirs(repo)
    git("init", "-q", "--template=", cwd=repo)  # no hooks directory
    with open(os.path.join(repo, "a.txt"), "w") as f:
        f.write("a\n")
    git("add", "a.txt", cwd=repo)
    git("commit", "-qm", "first", cwd=repo)
    w.start_server()
    # Fill the store with running sandboxed sessions in that repository.
    sleepers = run_all([[CORRAL, "exec", "--yield", "250", "-C", repo, "--", "sleep", "600"] for _ in range(N)], repo)
    running = [r for r in sleepers if r[0] == 0 and "Process running with session ID" in r[1]]
    t.eq(len(running), N, "%d sandboxed sleeps run in the repository" % N, failures(sleepers, "")[:2000])
    want = "workspace-write\n"
    # Each probe says it started (a line into one fifo) and then waits for a
    # line from another, which the test sends only when all N have started:
    # no probe ends while the others are stored, so each insert into the
    # full store prunes a running sleeper, however fast the machine is.  The
    # probes block in read(), not in a polling loop: 64 spinning shells
    # starve a 2-core machine and the server's launches with it.
    started_fifo = os.path.join(repo, "started.fifo")
    go_fifo = os.path.join(repo, "go.fifo")
    os.mkfifo(started_fifo)
    os.mkfifo(go_fifo)
    # Held open read-write, so neither side's open() waits for the other.
    started_fd = os.open(started_fifo, os.O_RDWR | os.O_NONBLOCK)
    go_fd = os.open(go_fifo, os.O_RDWR)
    barrier = 'echo "$1" > started.fifo; read go < go.fifo; '
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("results", run_all(
        [[CORRAL, "exec", "--raw", "-C", repo, "--", "sh", "-c", barrier + PROBE, "sh", str(i)]
         for i in range(N)], repo, timeout=600)))
    runner.start()
    seen = read_lines(started_fd, N, timeout=540)
    t.diag("%d of %d probes started before the go" % (len(seen), N))
    os.write(go_fd, b"\n" * N)
    runner.join()
    results = box["results"]
    os.close(started_fd)
    os.close(go_fd)
    os.unlink(started_fifo)
    os.unlink(go_fifo)
    ok = all(r[0] == 0 and r[1] == want for r in results)
    t.ok(ok, "%d concurrent execs, each pruning a running session, all run sandboxed and exit 0" % N,
         failures(results, want))
    pruned = w.server_log().count(" (running)")
    t.diag("%d running sessions were pruned during the %d execs" % (pruned, N))
    t.ok(pruned >= N // 2, "running sessions were pruned (ended) while the execs were set up", w.server_log()[-2000:])
    # End what still runs, waiting for each to be gone, then look.
    ls = w.corral("ls")
    killed = 0
    for line in ls.stdout.splitlines():
        sid = line.split()[0] if line.split() else ""
        if sid.isdigit() and " running" in line:
            killed += w.corral("kill", sid).returncode == 0
    t.diag("%d sessions still running were killed" % killed)
    t.ok(wait_until(lambda: not registry_entries(), timeout=TIMEOUT),
         "once keep-warm has passed, no placeholder is held", registry_entries())
    t.ok(not os.path.lexists(os.path.join(repo, ".git", "hooks")), "no hooks placeholder is left in .git")
    t.eq(leftovers(repo), [".git"], "no other mount point is left in the workspace")
    t.eq(git("status", "--porcelain", cwd=repo).stdout, "", "and git sees the repository as it was")
    t.eq(registry_entries(), [], "nothing is still counted as in use")
    w.stop()


def test_no_planting_in_a_neighbours_placeholder(t):
    """A second sandbox in a workspace without a repository, started while
    the first one holds the empty .git mount point, must not be able to
    fill it with a repository whose config the host's git would run."""
    if not shutil.which("git"):
        t.skip("a neighbour's .git placeholder stays empty", "git is not installed")
        return
    ws = os.path.join(w.base, "noplant")
    os.makedirs(ws)
    first = subprocess.Popen([CORRAL, "sandbox", "-C", ws, "--", "sh", "-c", "echo READY; read line"], cwd=ws,
                             env=w.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ready = first.stdout.readline().decode()
    t.eq(ready, "READY\n", "the first sandbox runs")
    marker = os.path.join(w.base, "fsmonitor-ran")
    attack = ("chmod u+w .git 2>/dev/null; git init -q --template= . 2>/dev/null; "
              "git config core.fsmonitor 'touch %s; false' 2>/dev/null; ls -A .git; echo DONE" % marker)
    second = subprocess.run([CORRAL, "sandbox", "-C", ws, "--", "sh", "-c", attack], cwd=ws, env=w.env,
                            capture_output=True, text=True, timeout=TIMEOUT)
    t.eq((second.returncode, second.stdout), (0, "DONE\n"),
         "the second sandbox runs and finds the .git mount point empty and read-only", second.stderr)
    first.stdin.write(b"\n")
    first.stdin.close()
    first.wait(TIMEOUT)
    t.eq(leftovers(ws), [], "afterwards the workspace has no .git (nor another mount point)")
    git("status", cwd=ws)
    t.ok(not os.path.exists(marker), "and the host's git runs nothing the sandbox configured")


try:
    run_tests(Tap(), [test_parallel_corral_sandbox, test_exec_with_sessions_ending,
                      test_no_planting_in_a_neighbours_placeholder])
finally:
    w.cleanup()
