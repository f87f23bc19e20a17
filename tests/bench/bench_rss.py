#!/usr/bin/env python3
"""Server memory: RSS of the corral server with 1 and with 64 idle sessions
(a shell at its prompt), beside a tmux server with 1 and 64 panes of the same
shell, measured in the same run.  Target: corral <= tmux + 64 KiB per session
(scrollback aside: idle shells have none).

Then where the server's memory with one session goes: its resident pages
by mapping, read from /proc/PID/smaps (shared libraries by name, the heap,
anonymous maps, thread stacks), largest first, so that a change in the
total can be traced to what grew; and how much of it is libgit2 with the
libraries it links, which only a workspace's store process loads (corral
__snapstore, docs/snapshots.md): the server should have none of it.  That
process is measured too, while it runs: it ends once the store has had no
job for [snapshots] store-idle (30 s), and then an idle server has no
libgit2 memory anywhere.  A server no session has used yet, and the same
sessions with snapshots off, are measured beside."""
import os
import subprocess

from benchlib import Tmux, World, rss_kib, sized, wait_until
from harness import store_pids

SHELL = ["bash", "--norc", "--noprofile", "-i"]
SNAPSHOTS_OFF = "[snapshots]\nenabled = false\n"
PROMPT = "$ "


def rss_by_mapping(pid):
    """{what: KiB resident} from /proc/pid/smaps: a file's mappings under
    its base name, [heap], [stack], and anonymous maps as "anonymous"."""
    by = {}
    what = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and "-" in parts[0] and ":" in parts[3]:
                name = parts[5] if len(parts) > 5 else ""
                what = os.path.basename(name) if name.startswith("/") else (name or "anonymous")
            elif parts and parts[0] == "Rss:" and what is not None:
                by[what] = by.get(what, 0) + int(parts[1])
    return by


def libgit2_family(pid):
    """Base names of the libgit2 the server mapped and of every library it
    links (ldd), or an empty set when libgit2 is not mapped."""
    with open("/proc/%d/maps" % pid) as f:
        paths = {line.split()[-1] for line in f if "/libgit2.so" in line}
    if not paths:
        return set()
    path = sorted(paths)[0]
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    names = {os.path.basename(path)}
    for line in out.splitlines():
        target = line.split("=>")[-1].split("(")[0].strip()
        if target.startswith("/") and "libc.so" not in target and "ld-linux" not in target:
            names.add(os.path.basename(os.path.realpath(target)))
    return names


def corral_rss(n, breakdown=None, config=None, store=None):
    w = World(config=config)
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
        if n == 0:
            c.call({"cmd": "list"})  # up and answering
        if breakdown is not None:
            breakdown.update(rss_by_mapping(srv.pid))
            breakdown["__libgit2__"] = libgit2_family(srv.pid)
        if store is not None:
            # The sessions' first snapshot done: its process has the store.
            wait_until(lambda: store_pids(w.ws))
            store.extend(rss_kib(pid) for pid in store_pids(w.ws))
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
    breakdown = {}
    unused = corral_rss(0)
    for n in (1, many):
        rows.append((n, corral_rss(n, breakdown if n == 1 else None), tmux_rss(n)))
    off = [corral_rss(n, config=SNAPSHOTS_OFF) for n in (1, many)]
    store = []
    corral_rss(1, store=store)
    print("Server RSS with idle shells at 80x24, KiB:")
    print("  sessions   corral     tmux   allowed (tmux + 64 KiB/session)")
    print("  %8s %8d %8s    (a corral server no session has used: no snapshot store, no libgit2)" %
          (0, unused, "-"))
    for n, ours, theirs in rows:
        allowed = theirs + 64 * n if theirs else None
        print("  %8d %8d %8s %8s  %s" % (n, ours, theirs or "-", allowed or "-",
                                         "" if allowed is None else ("met" if ours <= allowed else "NOT met")))
    print("  %8s %8s %8s    (snapshots off: no store process)" % ("", "", ""))
    for (n, _, theirs), ours in zip(rows, off):
        allowed = theirs + 64 * n if theirs else None
        print("  %8d %8d %8s %8s  %s (snapshots off)" % (n, ours, theirs or "-", allowed or "-",
                                                         "" if allowed is None else ("met" if ours <= allowed else
                                                                                     "NOT met")))
    (_, a1, t1), (_, a_many, t_many) = rows
    print("  per extra session: corral %.1f KiB, tmux %s KiB" %
          ((a_many - a1) / (many - 1.0), "%.1f" % ((t_many - t1) / (many - 1.0)) if t1 else "-"))
    print("corral server with 1 session, resident KiB by mapping (/proc/PID/smaps), largest first:")
    family = breakdown.pop("__libgit2__")
    top = sorted(breakdown.items(), key=lambda kv: -kv[1])
    for what, kib in top[:12]:
        print("  %8d  %s" % (kib, what))
    rest = sum(k for _, k in top[12:])
    print("  %8d  the other %d mappings; total %d" % (rest, max(0, len(top) - 12), sum(breakdown.values())))
    in_server = sum(kib for what, kib in top if what in family)
    print("  of which libgit2 and the libraries it links: %d KiB (%s)" %
          (in_server, "none: the store's process loads it" if not family else "loaded into the server"))
    print("the workspace's store process (corral __snapstore, libgit2 loaded), while it runs: %s KiB;" %
          ("+".join(str(k) for k in store) or "not found"))
    print("  it ends after [snapshots] store-idle (30 s) without a job, and the next job starts another")

main()
