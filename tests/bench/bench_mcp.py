#!/usr/bin/env python3
"""Round trip of a tools/call for exec_command `true` through `corral mcp`
(one bridge, started once, as an agent keeps it), beside the very same exec
request sent straight to the server over one admin-socket connection, and
`corral exec --raw -- true` (a CLI process per command), in the same run,
interleaved.  What the bridge adds is the first minus the second.  Target
(issue 13): under 1 ms median.  Unsandboxed (--profile full) and with
`sh -c` instead of a login shell, so the figures are corral's and not the
sandbox's or a shell profile's.

Then `corral mcp` from the start of its process to its answer to tools/list
(initialize, notifications/initialized and tools/list sent at once, as a
client does), with a server running and with none (the bridge starts one,
after answering).  Target (issue 21): under 50 ms."""
import json
import os
import sys

from benchlib import CORRAL, World, arg, median, now, p99

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mcplib import Bridge  # noqa: E402
import subprocess  # noqa: E402

RUNS = arg(1, 200, 5)
START_RUNS = arg(2, 40, 2)
ARGS = {"cmd": "true", "shell": "/bin/sh", "login": False, "yield_time_ms": 10000}


OPENING = b"".join(json.dumps(m).encode() + b"\n" for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))


def start_to_list(w):
    """ms from starting corral mcp to its tools/list answer; the bridge is
    left serving (connected, or starting a server) for the caller to end."""
    t0 = now()
    b = Bridge(w)
    b.send_raw(OPENING)
    b.reply(1)
    r = b.reply(2)
    ms = (now() - t0) * 1000
    assert len(r["result"]["tools"]) == 2, r
    return ms, b


def start_figures():
    warm, cold = World(), World()
    try:
        warm.start_server()
        with_server, without = [], []
        for _ in range(START_RUNS):
            ms, b = start_to_list(warm)
            with_server.append(ms)
            b.close()
            ms, b = start_to_list(cold)
            without.append(ms)
            # The server it starts once it has answered: stopped, so that the
            # next run finds none again.
            assert b.wait_stderr("through the corral server"), b.stderr()
            b.close()
            subprocess.run([CORRAL, "server", "--stop"], env=cold.env, check=True, capture_output=True)
        print("corral mcp, process start to tools/list answered, %d runs each, ms:" % START_RUNS)
        print("  with a server running                    median %6.2f   p99 %6.2f" % (median(with_server),
                                                                                       p99(with_server)))
        print("  with no server (one is started after)    median %6.2f   p99 %6.2f" % (median(without),
                                                                                       p99(without)))
        worst = max(median(with_server), median(without))
        print("  target < 50 ms: %s" % ("met" if worst < 50 else "NOT met"))
        print(json.dumps({"bench": "mcp_start", "runs": START_RUNS,
                          "start_to_list_with_server_median_ms": round(median(with_server), 3),
                          "start_to_list_without_server_median_ms": round(median(without), 3)}))
    finally:
        warm.cleanup()
        cold.cleanup()


def main():
    w = World()
    try:
        w.start_server()
        b = Bridge(w, ("--profile", "full"))
        b.initialize()
        direct = w.connect("bench")
        request = {"cmd": "exec", "command": "true", "shell": "/bin/sh", "login": False, "workdir": w.ws,
                   "tty": False, "yield_time_ms": 10000, "profile": "full"}
        cli = [CORRAL, "exec", "--raw", "--profile", "full", "-C", w.ws, "--", "true"]

        def via_bridge():
            t0 = now()
            r = b.tool("exec_command", ARGS)
            ms = (now() - t0) * 1000
            assert r["structuredContent"].get("exit_code") == 0, r
            return ms

        def via_socket():
            t0 = now()
            r = direct.call(request)
            ms = (now() - t0) * 1000
            assert r.get("exit_code") == 0, r
            return ms

        def via_cli():
            t0 = now()
            subprocess.run(cli, env=w.env, check=True, stdout=subprocess.DEVNULL)
            return (now() - t0) * 1000

        for _ in range(10):  # warm the page cache, the server and the bridge
            via_bridge(), via_socket(), via_cli()
        bridge, socket_, cli_ = [], [], []
        for _ in range(RUNS):
            bridge.append(via_bridge())
            socket_.append(via_socket())
            cli_.append(via_cli())
        added = median(bridge) - median(socket_)
        print("Round trip of exec `true`, %d runs each, ms:" % RUNS)
        print("  tools/call exec_command via corral mcp   median %6.2f   p99 %6.2f" % (median(bridge), p99(bridge)))
        print("  the same exec on the admin socket        median %6.2f   p99 %6.2f" % (median(socket_),
                                                                                       p99(socket_)))
        print("  corral exec --raw -- true (CLI process)  median %6.2f   p99 %6.2f" % (median(cli_), p99(cli_)))
        print("  the bridge adds %.2f ms median; target < 1 ms: %s" % (added, "met" if added < 1 else "NOT met"))
        print(json.dumps({"bench": "mcp", "runs": RUNS, "bridge_median_ms": round(median(bridge), 3),
                          "bridge_p99_ms": round(p99(bridge), 3), "socket_median_ms": round(median(socket_), 3),
                          "cli_median_ms": round(median(cli_), 3), "added_ms": round(added, 3)}))
        direct.close()
        b.close()
    finally:
        w.cleanup()


main()
start_figures()
