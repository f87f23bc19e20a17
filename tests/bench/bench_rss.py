#!/usr/bin/env python3
"""Server memory: RSS of the corral server with 1 and with 64 idle sessions
(a shell at its prompt), beside a tmux server with 1 and 64 panes of the same
shell, measured in the same run.  Target: corral <= tmux + 64 KiB per session
(scrollback aside: idle shells have none)."""
import os

from benchlib import Tmux, World, rss_kib, sized, wait_until

SHELL = ["bash", "--norc", "--noprofile", "-i"]
PROMPT = "$ "


def corral_rss(n):
    w = World()
    w.env["PS1"] = PROMPT
    try:
        srv = w.start_server(extra_env={"PS1": PROMPT})
        c = w.connect("bench")
        ids = [c.call({"cmd": "new", "argv": SHELL, "cwd": w.ws, "cols": 80, "rows": 24})["session"]["id"]
               for _ in range(n)]
        # Idle means: the shell has drawn its prompt (the sandbox's clean
        # environment has no PS1, so any prompt).  The screen shows it.
        for sid in ids:
            wait_until(lambda: c.call({"cmd": "screen", "session": sid})["text"].strip() != "")
        return rss_kib(srv.pid)
    finally:
        w.cleanup()


def tmux_rss(n):
    tm = Tmux("corral-bench-rss")
    if not tm.tmux:
        return None
    tm.kill()
    try:
        cmd = "env PS1='%s' %s" % (PROMPT, " ".join(SHELL))
        tm("new-session", "-d", "-x", "80", "-y", "24", cmd)
        for _ in range(n - 1):
            tm("new-window", "-d", cmd)
        for i in range(n):
            wait_until(lambda: PROMPT.strip() in tm("capture-pane", "-p", "-t", ":%d" % i).stdout)
        return rss_kib(tm.server_pid())
    finally:
        tm.kill()


def main():
    rows = []
    many = sized(64, 4)
    for n in (1, many):
        rows.append((n, corral_rss(n), tmux_rss(n)))
    print("Server RSS with idle shells at 80x24, KiB:")
    print("  sessions   corral     tmux   allowed (tmux + 64 KiB/session)")
    for n, ours, theirs in rows:
        allowed = theirs + 64 * n if theirs else None
        print("  %8d %8d %8s %8s  %s" % (n, ours, theirs or "-", allowed or "-",
                                         "" if allowed is None else ("met" if ours <= allowed else "NOT met")))
    (_, a1, t1), (_, a_many, t_many) = rows
    print("  per extra session: corral %.1f KiB, tmux %s KiB" %
          ((a_many - a1) / (many - 1.0), "%.1f" % ((t_many - t1) / (many - 1.0)) if t1 else "-"))


main()
