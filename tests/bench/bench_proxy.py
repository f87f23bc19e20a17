#!/usr/bin/env python3
"""The network proxy's engine (tests/integration/proxydrive: the server's
src/net/proxy.c alone in a loop, its decisions answered at once as for a host a
rule allows), beside the direct path in the same run:

  memory      the proxy's RSS with 200 open idle tunnels (a fresh proxy)
  throughput  1 GiB from a local server (its own process) through an HTTP
              CONNECT tunnel, spliced and copied, and the same directly over
              loopback (target: spliced tunnel >= 0.8x direct), with the CPU
              time the proxy spent on it (the figure a loaded machine's wall
              clock hides: on loopback the tunnel's second TCP connection
              costs the kernel about what the direct one does)
  set-up      connect + CONNECT + "200 Connection established" for an
              allowed host: an address, and a name from /etc/hosts; SOCKS5
              beside it; a bare TCP connect for reference (target: p99 < 2 ms)

python3 bench_proxy.py [RUNS] (default 5 runs of the 1 GiB transfer).
"""
import os
import socket
import subprocess
import sys

from benchlib import arg, median, now, p99, rss_kib, sized

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from test_proxy import SERVERS, Drive, connect_tunnel, socks_connect  # noqa: E402

RUNS = arg(1, 5, 1)
GiB = sized(1 << 30, 1 << 20)  # the transfer (1 MiB under CORRAL_BENCH_SMOKE)
SETUPS = sized(2000, 20)


def server(kind, *args):
    p = subprocess.Popen([sys.executable, SERVERS, kind, "--bind", "127.0.0.1"] + list(args),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline().split()[1])


def drain(s, total):
    view = memoryview(bytearray(1 << 20))
    got = 0
    while got < total:
        n = s.recv_into(view)
        if not n:
            break
        got += n
    return got


def transfer(port, px=None):
    t0 = now()
    if px:
        c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % port)
        assert status == 200
        s, got = c.s, len(c.buf)
    else:
        s, got = socket.create_connection(("127.0.0.1", port)), 0
    got += drain(s, GiB - got)
    dt = now() - t0
    s.close()
    assert got == GiB, got
    return dt


def cpu_seconds(pid):
    """User and system CPU time of process pid so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def setup_times(fn, n):
    xs = []
    for _ in range(n):
        t0 = now()
        s = fn()
        xs.append((now() - t0) * 1000)
        s.close()
    return xs


def quiet_drive(args=()):
    px = Drive(args=list(args))
    px.policy("*", "explicit")
    px.send({"cmd": "quiet"})
    px.ping()
    return px


def main():
    echo, echo_port = server("echo")
    blast, blast_port = server("blast", "--bytes", str(GiB))
    try:
        px = quiet_drive()
        before = rss_kib(px.proc.pid)
        held = [connect_tunnel(px.http(), "127.0.0.1:%d" % echo_port)[0] for _ in range(200)]
        px.ping()
        after = rss_kib(px.proc.pid)
        print("memory: proxy RSS %d KiB fresh, %d KiB with 200 idle tunnels (%.1f KiB each)" %
              (before, after, (after - before) / 200))
        for c in held:
            c.close()
        px.stop()

        spliced, copied = quiet_drive(), quiet_drive(["--copy-tunnels", "1"])
        print("throughput, 1 GiB, %d runs (seconds):" % RUNS)
        runs = {"direct loopback": [], "spliced tunnel": [], "copied tunnel": []}
        cpu = {"spliced tunnel": [], "copied tunnel": []}
        for _ in range(RUNS):
            runs["direct loopback"].append(transfer(blast_port))
            for name, px in (("spliced tunnel", spliced), ("copied tunnel", copied)):
                c0 = cpu_seconds(px.proc.pid)
                runs[name].append(transfer(blast_port, px))
                cpu[name].append(cpu_seconds(px.proc.pid) - c0)
        for name, xs in runs.items():
            used = "  proxy CPU %.2f s" % median(cpu[name]) if name in cpu else ""
            print("  %-16s median %.2f s  %.2f GiB/s%s   runs %s" % (name, median(xs), 1 / median(xs), used,
                                                                 " ".join("%.2f" % x for x in xs)))
        direct = median(runs["direct loopback"])
        print("  spliced / direct: %.2fx, copied / direct: %.2fx (target >= 0.8x)" %
              (direct / median(runs["spliced tunnel"]), direct / median(runs["copied tunnel"])))
        copied.stop()

        px = spliced
        print("set-up, %d connections each (ms):" % SETUPS)
        kinds = (
            ("bare TCP connect", lambda: socket.create_connection(("127.0.0.1", echo_port))),
            ("CONNECT to an address", lambda: connect_tunnel(px.http(), "127.0.0.1:%d" % echo_port)[0].s),
            ("CONNECT to a name", lambda: connect_tunnel(px.http(), "localhost:%d" % echo_port)[0].s),
            ("SOCKS5 to a name", lambda: socks_connect(px.socks(), "localhost", echo_port)[0]),
        )
        for name, fn in kinds:
            setup_times(fn, 100)  # warm up
            xs = setup_times(fn, SETUPS)
            print("  %-22s median %.3f  p99 %.3f  max %.3f" % (name, median(xs), p99(xs), max(xs)))
        print("  target: p99 < 2 ms through the proxy")
        px.stop()
    finally:
        for p in (echo, blast):
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
