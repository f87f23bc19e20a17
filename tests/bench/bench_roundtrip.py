#!/usr/bin/env python3
"""Round trip of `corral exec --raw -- true` (client start, connect, hello,
spawn through the session init, exit, reply) beside plain /bin/true, median
and ratio over the same number of runs.  Target: corral's median under 3 ms."""
import subprocess
import sys

from benchlib import CORRAL, World, median, now, p99

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 200


def timed(argv, env):
    t0 = now()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return (now() - t0) * 1000


def main():
    w = World()
    try:
        w.start_server()
        env = w.env
        ours, plain = [], []
        for _ in range(10):  # warm the page cache and the server
            timed([CORRAL, "exec", "--raw", "--", "true"], env)
        for _ in range(RUNS):
            ours.append(timed([CORRAL, "exec", "--raw", "--", "true"], env))
            plain.append(timed(["/bin/true"], env))
        print("Round trip, %d runs each, ms:" % RUNS)
        print("  corral exec --raw -- true   median %6.2f   p99 %6.2f" % (median(ours), p99(ours)))
        print("  /bin/true                   median %6.2f   p99 %6.2f" % (median(plain), p99(plain)))
        print("  ratio %.1fx; target median < 3 ms: %s" % (median(ours) / median(plain),
                                                            "met" if median(ours) < 3 else "NOT met"))
    finally:
        w.cleanup()


main()
