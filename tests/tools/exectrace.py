#!/usr/bin/env python3
"""The walk of one exec request through the server, measured.

Builds corral a second time, out of tree, with every function instrumented
(gcc -finstrument-functions and tests/tools/trace_recorder.c), starts that
server in a scratch environment, runs `corral exec -- true` once to warm it
up (the workspace's first snapshot), then traces a second one, from the
request to the reply, and reports what the server's own process did:

  * the files and folders (modules) it entered, in order;
  * each turn of the event loop the request took (the request read, the
    snapshot taken, the child reaped, the reply sent...) with the folders
    it went through;
  * re-entries: a call into a file, or a folder, that is already on the
    stack beneath another one (server -> gate -> server).  A call *up* the
    layering (tests/tools/layering.py) is a module hook or a callback; the
    rest are calls back into a module the walk had left.

It is a measuring tool, not a test: run it by hand after a change to the
server's structure (docs/ARCHITECTURE.md, "One exec, end to end").

Usage: exectrace.py [--build DIR]
  --build DIR  where the copy of the tree and its instrumented build go
               (default /tmp/corral-exectrace; reused: only what changed is
               copied and rebuilt)
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import layering  # noqa: E402  (the folders and their order)


def copy_tree(top, dst):
    """The working tree's files (tracked and new, as they are now) copied
    into dst, each only when it changed: the tree itself is usually
    configured in place, and configure refuses a second build beside it."""
    names = subprocess.run(["git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, names):
        src, out = os.path.join(top, rel), os.path.join(dst, rel)
        if not os.path.isfile(src):
            continue
        st = os.stat(src)
        try:
            o = os.stat(out)
            if o.st_size == st.st_size and o.st_mtime >= st.st_mtime:
                continue
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copy2(src, out)


def build(top, out):
    """The instrumented corral, built in a copy of the tree under out; its
    path."""
    tree = os.path.join(out, "tree")
    copy_tree(top, tree)
    os.makedirs(out, exist_ok=True)
    rec = os.path.join(out, "trace_recorder.o")
    subprocess.run(["gcc", "-O2", "-fno-pie", "-c", os.path.join(HERE, "trace_recorder.c"), "-o", rec], check=True)
    if not os.path.exists(os.path.join(tree, "configure")):
        print("# autoreconf in %s" % tree, flush=True)
        subprocess.run(["autoreconf", "-fi"], cwd=tree, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if not os.path.exists(os.path.join(tree, "Makefile")):
        print("# configuring an instrumented build", flush=True)
        subprocess.run(["./configure", "CFLAGS=-g -O0 -fno-pie -finstrument-functions", "LDFLAGS=-no-pie",
                        "LIBS=" + rec], cwd=tree, check=True, stdout=subprocess.DEVNULL)
    exe = os.path.join(tree, "src", "corral")
    if os.path.exists(exe):
        os.unlink(exe)  # relinked with the recorder as it is now
    print("# building it (a few minutes the first time)", flush=True)
    made = subprocess.run(["make", "-j%d" % (os.cpu_count() or 2), "src/corral"], cwd=tree,
                          capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit("exectrace: the instrumented build failed:\n" + made.stdout[-3000:] + made.stderr[-3000:])
    return exe, tree


def trace_one_exec(exe, trace):
    """Run the exec twice against a server writing its trace to trace; the
    server's pid and the trace's byte range of the second exec."""
    os.environ["CORRAL_BIN"] = exe
    sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
    import harness
    env = harness.World()
    try:
        env.start_server(extra_env={"CORRAL_TRACE_FILE": trace})
        pid = env.server.pid
        cmd = [exe, "exec", "--raw", "-C", env.ws, "--", "true"]
        first = subprocess.run(cmd, env=env.env, capture_output=True, text=True, timeout=60)
        if first.returncode != 0:
            sys.exit("exectrace: corral exec failed (%d): %s%s\nserver log:\n%s" % (first.returncode, first.stdout, first.stderr, env.server_log()[-2000:]))
        start = os.path.getsize(trace)
        subprocess.run(cmd, env=env.env, capture_output=True, text=True, timeout=60, check=True)
        end = os.path.getsize(trace)
        return pid, start, end
    finally:
        env.cleanup()


def read_events(trace, pid, start, end):
    """The server's events in the byte range: the loop's thread's, and the
    worker threads' (the thread pool: snapshots, gc) by thread."""
    with open(trace, "rb") as f:
        f.seek(start)
        data = f.read(end - start).decode()
    loop, workers = [], {}
    for line in data.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[0] != str(pid):
            continue
        ev = (parts[2], int(parts[3], 16))
        if parts[1] == str(pid):
            loop.append(ev)
        else:
            workers.setdefault(parts[1], []).append(ev)
    return loop, workers


def locate(exe, addresses, top):
    """address -> (function, file relative to the tree, or None)."""
    addresses = sorted(addresses)
    p = subprocess.run(["addr2line", "-f", "-e", exe] + ["%x" % a for a in addresses],
                       capture_output=True, text=True, check=True)
    lines = p.stdout.splitlines()
    where = {}
    for i, a in enumerate(addresses):
        fn, loc = lines[2 * i], lines[2 * i + 1]
        path = os.path.normpath(loc.rsplit(":", 1)[0])
        rel = os.path.relpath(path, top) if path.startswith(top) else None
        where[a] = (fn, rel)
    return where


def rank_of(folder, order):
    return order.index(folder) if folder in order else -1


def analyse(events, where, order):
    stack = []  # (file, folder) of each open call, bottom first
    turns = []  # per loop callback: [folders in order of entry], calls
    files, folders = [], []
    up_calls, file_reentries, folder_reentries = [], 0, []
    for kind, addr in events:
        fn, rel = where.get(addr, ("?", None))
        if rel is None:
            rel = "?"
        folder = layering.folder_of(rel) or "?"
        if kind == "E":
            if not stack:
                turns.append({"root": fn, "folders": [], "calls": 0})
            turn = turns[-1]
            turn["calls"] += 1
            if not turn["folders"] or turn["folders"][-1] != folder:
                turn["folders"].append(folder)
            if rel not in files:
                files.append(rel)
            if folder not in folders:
                folders.append(folder)
            if stack:
                caller_file, caller_folder = stack[-1]
                if rel != caller_file and any(f == rel for f, _ in stack[:-1]):
                    file_reentries += 1
                if folder != caller_folder and any(d == folder for _, d in stack[:-1]):
                    down = rank_of(folder, order) < rank_of(caller_folder, order)
                    folder_reentries.append((down, "%s -> %s (%s)" % (caller_folder, rel, fn)))
                if folder != caller_folder and rank_of(folder, order) > rank_of(caller_folder, order) >= 0:
                    up_calls.append("%s -> %s (%s)" % (caller_folder, folder, fn))
            stack.append((rel, folder))
        elif stack:
            stack.pop()
            if stack and turns:
                caller_folder = stack[-1][1]
                if turns[-1]["folders"][-1] != caller_folder:
                    turns[-1]["folders"].append(caller_folder)
    return files, folders, turns, up_calls, file_reentries, folder_reentries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="/tmp/corral-exectrace")
    args = ap.parse_args()
    exe, tree = build(TOP, os.path.abspath(args.build))
    order, _ = layering.dag_order(layering.LAYERS)
    with tempfile.TemporaryDirectory(prefix="exectrace") as tmp:
        trace = os.path.join(tmp, "trace")
        pid, start, end = trace_one_exec(exe, trace)
        events, workers = read_events(trace, pid, start, end)
    addresses = {a for _, a in events} | {a for evs in workers.values() for _, a in evs}
    where = locate(exe, addresses, tree)
    files, folders, turns, up_calls, file_re, folder_re = analyse(events, where, order)
    worker_files = []
    for evs in workers.values():
        for f in analyse(evs, where, order)[0]:
            if f not in worker_files and f not in files:
                worker_files.append(f)
    busy = [t for t in turns if len(set(t["folders"])) > 1 or t["calls"] > 20]
    print("one `corral exec -- true`, traced in the server (pid %d): %d function calls in %d loop turns"
          % (pid, sum(1 for k, _ in events if k == "E"), len(turns)))
    print("files entered on the loop: %d  (%s)" % (len(files), ", ".join(files)))
    print("and only in the thread pool's %d threads (snapshots): %d  (%s)"
          % (len(workers), len(worker_files), ", ".join(worker_files)))
    print("folders entered: %d  (%s)" % (len(folders), " ".join(folders)))
    print("calls back into a file already on the stack beneath another: %d" % file_re)
    core = [f for f in files + worker_files if layering.folder_of(f) in ("server", "gate", "snap")]
    print("files of src/server/, src/gate/ and src/snap/ entered: %d" % len(core))
    api = [r for down, r in folder_re if down]
    trips = [r for down, r in folder_re if not down]
    print("calls back into a folder already on the stack beneath another: %d" % len(folder_re))
    print("  down the layering (a module using the API of one beneath it, which called it): %d" % len(api))
    for r in sorted(set(api)):
        print("    %3d  %s" % (api.count(r), r))
    print("  up the layering (a module called back through a hook or callback): %d" % len(trips))
    for r in sorted(set(trips)):
        print("    %3d  %s" % (trips.count(r), r))
    print("calls up the layering (module hooks and callbacks): %d" % len(up_calls))
    for u in sorted(set(up_calls)):
        print("    " + u)
    print("loop turns that cross a folder or make more than 20 calls: %d" % len(busy))
    for t in busy:
        print("    %-34s %5d calls  %s" % (t["root"], t["calls"], " > ".join(t["folders"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
