#!/usr/bin/env python3
"""Sandbox spawn latency: `corral sandbox -- true` (workspace-write, network
off) beside bubblewrap with a comparable line, `unshare -r -m -p -f
--mount-proc true` and plain `true`, interleaved in one run; median and
ratio.  Target (issue 3): corral's median at most 0.35x bwrap's.

Also one command started from a pre-built sandbox (docs/sandbox.md,
"Pre-built sandboxes"): `corral sandbox --reuse N` runs N commands from one
base, so (time of --reuse 1+K - time of --reuse 1) / K is what each further
command costs, the base's own build left out.  Target (issue 19): at most
1.0x bwrap's spawn.
Beside it the same spawn with its throw-away home layer on disk ([sandbox]
home-layer-in = disk), as it was before the layer moved into memory.
Then the system calls of one spawn, counted with `strace -f -c` (issue
19, item 3: fewer than bwrap for the same plan): the total, the failing
ones and the five most called, for corral, bwrap's bare line, and bwrap
given the mounts of corral's plan (read from --print-plan; bwrap cannot
make corral's seccomp filter, Landlock rules, home overlay or cgroup, so
its line has less to do).  strace
(installed by ./bootstrap) is needed for the counts only.
bubblewrap (Debian package bubblewrap) is needed for the reference only."""
import os
import re
import shutil
import subprocess
import tempfile

from benchlib import CORRAL, arg, median, now, sized

RUNS = arg(1, 200, 3)
SAME = "bwrap, corral's mounts"
DISK = "  home layer on disk"


def timed(argv, cwd, env):
    t0 = now()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (now() - t0) * 1000


def syscalls(argv, cwd, env, work):
    """(total calls, failed calls, [(name, calls)] most called first) of
    one run of argv under strace -f -c; a string saying why not when it
    cannot be counted (no strace; the command failed under it).  In a
    sanitizer build the leak checker is turned off for this run: it cannot
    work under a tracer, and its fatal error would be a report that fails
    make check (tests/sanitizer-run.sh)."""
    strace = shutil.which("strace")
    if not strace:
        return "strace not installed (apt-get install strace)"
    out = os.path.join(work, "strace.txt")
    if env.get("ASAN_OPTIONS"):
        env = dict(env, ASAN_OPTIONS=env["ASAN_OPTIONS"] + ":detect_leaks=0")
    r = subprocess.run([strace, "-f", "-c", "-o", out] + argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        return "%s under strace exited %d (%s)" % (os.path.basename(argv[0]), r.returncode, last[:200])
    rows = []
    total = failed = 0
    with open(out) as f:
        for line in f:
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(\d*)\s*(\S+)\s*$", line)
            if not m:
                continue
            calls, errors, name = int(m.group(1)), int(m.group(2) or 0), m.group(3)
            if name == "total":
                total, failed = calls, errors
            else:
                rows.append((name, calls))
    rows.sort(key=lambda r: -r[1])
    return total, failed, rows


MOUNT_LINE = re.compile(r"^\s+\d+\s+(bind ro|bind rw|dev|proc|overlay|tmpfs ro|tmpfs rw|mask)\s+(\S+)"
                        r"(?:\s+<-\s+(\S+))?")


def same_plan_bwrap(bwrap, ws, env):
    """bwrap's line for the mounts of corral's plan for this workspace (from
    corral sandbox --print-plan), as far as bwrap can make them: /dev/null
    over a masked file, a tmpfs for the home layer (bwrap has no overlay).
    corral's seccomp filter, Landlock rules and cgroup are not in it.
    A placeholder corral makes for the run (an empty read-only .git, say)
    is left out: bwrap would make its mount point in the workspace and leave
    it there.  (argv, None), or (None, why not)."""
    r = subprocess.run([CORRAL, "sandbox", "--print-plan", "--", "/bin/true"], cwd=ws, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, "corral sandbox --print-plan exited %d" % r.returncode
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for line in r.stdout.splitlines():
        m = MOUNT_LINE.match(line)
        if not m:
            continue
        kind, dst, src = m.group(1), m.group(2), m.group(3) or m.group(2)
        if kind.startswith("bind") and not os.path.exists(dst):
            continue  # a placeholder corral makes: bwrap would make its mount point in the workspace for good
        if kind.startswith("bind") and os.path.exists(src):
            argv += ["--ro-bind" if kind == "bind ro" else "--bind", src, dst]
        elif kind in ("bind ro", "bind rw", "tmpfs ro"):
            argv += ["--tmpfs", dst, "--remount-ro", dst]
        elif kind in ("tmpfs rw", "overlay"):
            argv += ["--tmpfs", dst]
        elif kind == "dev":
            argv += ["--dev", dst]
        elif kind == "proc":
            argv += ["--proc", dst]
        elif kind == "mask":
            argv += ["--ro-bind", "/dev/null", dst] if not os.path.isdir(dst) else ["--tmpfs", dst, "--remount-ro", dst]
    if len(argv) < 10:
        return None, "no mounts read from corral sandbox --print-plan"
    return argv + ["--chdir", ws, "/bin/true"], None


def report_syscalls(cases, ws, env, work):
    print("System calls of one spawn (strace -f -c):")
    counted = {}
    for name, argv in cases:
        if name.startswith("corral sandbox") or name.startswith("bwrap"):  # (not DISK: the same calls but a few)
            got = syscalls(argv, ws, env, work)
            if isinstance(got, str):
                print("  not counted: %s" % got)
                return
            counted[name] = got
            total, failed, rows = got
            print("  %-24s %5d calls, %4d failed; most: %s" % (name, total, failed,
                                                              ", ".join("%s %d" % r for r in rows[:5])))
    if "bwrap (--unshare-all)" in counted:
        ours, theirs = counted["corral sandbox -- true"][0], counted["bwrap (--unshare-all)"][0]
        print("  corral/bwrap calls %.2fx (target < 1.0x): %s" % (ours / theirs, "met" if ours < theirs else "NOT met"))
    if SAME in counted:
        ours, theirs = counted["corral sandbox -- true"][0], counted[SAME][0]
        print("  corral/bwrap with the same mounts %.2fx (target < 1.0x; bwrap's line has no seccomp filter, "
              "Landlock, home overlay or cgroup): %s" % (ours / theirs, "met" if ours < theirs else "NOT met"))


def main():
    base = tempfile.mkdtemp(prefix="crlbench")
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(base, "state"), XDG_CACHE_HOME=os.path.join(base, "cache"),
               XDG_CONFIG_HOME=os.path.join(base, "config"))
    extra = 10
    # The same command with its throw-away home layer on disk (as before
    # the layer moved into memory): what the layer in memory saves.
    disk_config = os.path.join(base, "config-disk")
    os.makedirs(os.path.join(disk_config, "corral"))
    with open(os.path.join(disk_config, "corral", "config"), "w") as f:
        f.write("[sandbox]\n  home-layer-in = disk\n")
    case_env = {DISK: dict(env, XDG_CONFIG_HOME=disk_config)}
    cases = [("corral sandbox -- true", [CORRAL, "sandbox", "--", "/bin/true"]),
             (DISK, [CORRAL, "sandbox", "--", "/bin/true"]),
             ("--reuse 1", [CORRAL, "sandbox", "--reuse", "1", "--", "/bin/true"]),
             ("--reuse %d" % (1 + extra), [CORRAL, "sandbox", "--reuse", str(1 + extra), "--", "/bin/true"])]
    bwrap = shutil.which("bwrap")
    if bwrap:
        cases.append(("bwrap (--unshare-all)", [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                                "--tmpfs", "/tmp", "--bind", ws, ws, "--unshare-all",
                                                "--die-with-parent", "--new-session", "/bin/true"]))
        same, why = same_plan_bwrap(bwrap, ws, env)
        if same:
            cases.append((SAME, same))
        else:
            print("bwrap with corral's mounts: not measured: %s" % why)
    unshare = shutil.which("unshare")
    if unshare:
        cases.append(("unshare -r -m -p -f", [unshare, "-r", "-m", "-p", "-f", "--mount-proc", "/bin/true"]))
    cases.append(("/bin/true", ["/bin/true"]))
    times = {name: [] for name, _ in cases}
    try:
        for _ in range(sized(10, 1)):
            for name, argv in cases:
                timed(argv, ws, case_env.get(name, env))
        for _ in range(RUNS):  # interleaved: drift affects every case alike
            for name, argv in cases:
                times[name].append(timed(argv, ws, case_env.get(name, env)))
        report_syscalls(cases, ws, env, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("Sandbox spawn latency, %d interleaved runs each, median ms:" % RUNS)
    for name, _ in cases:
        if not name.startswith("--reuse"):
            print("  %-24s %6.2f" % (name, median(times[name])))
    reused = (median(times["--reuse %d" % (1 + extra)]) - median(times["--reuse 1"])) / extra
    print("  %-24s %6.2f  (a pre-built sandbox's further command)" % ("from a pre-built base", reused))
    ours = median(times["corral sandbox -- true"])
    if bwrap:
        ratio = ours / median(times["bwrap (--unshare-all)"])
        print("  corral/bwrap %.2fx (target <= 1.0x, issue 19; <= 0.35x, issue 3): %s, %s"
              % (ratio, "met" if ratio <= 1.0 else "NOT met", "met" if ratio <= 0.35 else "NOT met"))
        ratio = reused / median(times["bwrap (--unshare-all)"])
        print("  pre-built/bwrap %.2fx (target <= 1.0x): %s" % (ratio, "met" if ratio <= 1.0 else "NOT met"))
        if SAME in times:
            print("  corral/bwrap with corral's mounts %.2fx" % (ours / median(times[SAME])))
    else:
        print("  bwrap not installed (apt-get install bubblewrap): no reference figure")


main()
