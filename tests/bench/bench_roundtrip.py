#!/usr/bin/env python3
"""Round trip of `corral exec --raw -- true` (client start, connect, hello,
spawn through the session init, exit, reply) beside plain /bin/true, median
and ratio over the same number of runs.  Target (issue 2, before the
sandbox): corral's median under 3 ms; measured unsandboxed (--profile full)
for that target and with the default sandbox for reference."""
import subprocess

from benchlib import CORRAL, World, arg, median, now, p99

RUNS = arg(1, 200, 3)


def timed(argv, env):
    t0 = now()
    subprocess.run(argv, env=env, cwd=env.get("PWD"), check=True, stdout=subprocess.DEVNULL)
    return (now() - t0) * 1000


def main():
    w = World()
    try:
        w.start_server()
        env = dict(w.env)
        env["PWD"] = w.ws
        full = [CORRAL, "exec", "--raw", "--profile", "full", "--", "true"]
        boxed = [CORRAL, "exec", "--raw", "--", "true"]
        ours, sandboxed, plain = [], [], []
        for _ in range(10):  # warm the page cache and the server
            timed(full, env)
            timed(boxed, env)
        for _ in range(RUNS):
            ours.append(timed(full, env))
            sandboxed.append(timed(boxed, env))
            plain.append(timed(["/bin/true"], env))
        print("Round trip, %d runs each, ms:" % RUNS)
        print("  corral exec --raw --profile full -- true  median %6.2f   p99 %6.2f" % (median(ours), p99(ours)))
        print("  corral exec --raw -- true (sandboxed)     median %6.2f   p99 %6.2f" %
              (median(sandboxed), p99(sandboxed)))
        print("  /bin/true                                 median %6.2f   p99 %6.2f" % (median(plain), p99(plain)))
        print("  unsandboxed ratio %.1fx; target median < 3 ms: %s" %
              (median(ours) / median(plain), "met" if median(ours) < 3 else "NOT met"))
    finally:
        w.cleanup()


main()
