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
bubblewrap (Debian package bubblewrap) is needed for the reference only."""
import os
import shutil
import subprocess
import tempfile

from benchlib import CORRAL, arg, median, now, sized

RUNS = arg(1, 200, 3)


def timed(argv, cwd, env):
    t0 = now()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (now() - t0) * 1000


def main():
    base = tempfile.mkdtemp(prefix="crlbench")
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(base, "state"), XDG_CACHE_HOME=os.path.join(base, "cache"),
               XDG_CONFIG_HOME=os.path.join(base, "config"))
    extra = 10
    cases = [("corral sandbox -- true", [CORRAL, "sandbox", "--", "/bin/true"]),
             ("--reuse 1", [CORRAL, "sandbox", "--reuse", "1", "--", "/bin/true"]),
             ("--reuse %d" % (1 + extra), [CORRAL, "sandbox", "--reuse", str(1 + extra), "--", "/bin/true"])]
    bwrap = shutil.which("bwrap")
    if bwrap:
        cases.append(("bwrap (--unshare-all)", [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                                "--tmpfs", "/tmp", "--bind", ws, ws, "--unshare-all",
                                                "--die-with-parent", "--new-session", "/bin/true"]))
    unshare = shutil.which("unshare")
    if unshare:
        cases.append(("unshare -r -m -p -f", [unshare, "-r", "-m", "-p", "-f", "--mount-proc", "/bin/true"]))
    cases.append(("/bin/true", ["/bin/true"]))
    times = {name: [] for name, _ in cases}
    try:
        for _ in range(sized(10, 1)):
            for _, argv in cases:
                timed(argv, ws, env)
        for _ in range(RUNS):  # interleaved: drift affects every case alike
            for name, argv in cases:
                times[name].append(timed(argv, ws, env))
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
        print("  corral/bwrap %.2fx (target <= 0.35x): %s" % (ratio, "met" if ratio <= 0.35 else "NOT met"))
        ratio = reused / median(times["bwrap (--unshare-all)"])
        print("  pre-built/bwrap %.2fx (target <= 1.0x): %s" % (ratio, "met" if ratio <= 1.0 else "NOT met"))
    else:
        print("  bwrap not installed (apt-get install bubblewrap): no reference figure")


main()
