#!/usr/bin/env python3
"""The process store over the real socket: 64 entries, the 60-process
warning, and the exact entry Codex would prune when a 65th arrives: exited
before live, least recently used first, never one of the 8 most recently
used, never a pinned one.  A pruned live process loses its whole tree."""
import os

from harness import Tap, World, descendants, pid_alive, read_jsonl, run_tests, wait_until

w = World()
w.start_server()
c = w.connect()

WARNING = ("The maximum number of unified exec processes you can keep open is 60 and you currently have "
           "%d processes open. Reuse older processes or close them to prevent automatic pruning of old processes")


def exec_many(specs):
    """Send every exec request before reading any reply, so the sessions
    are created (and used) in exactly this order; return replies in order."""
    ids = []
    for spec in specs:
        rid = c.next_id
        c.next_id += 1
        c.send(dict(dict(cmd="exec", workdir=w.ws, yield_time_ms=250), id=rid, **spec))
        ids.append(rid)
    replies = {}
    while len(replies) < len(ids):
        m = c.read_msg()
        if "event" in m:
            c.events.append(m)
        else:
            replies[m["id"]] = m
    return [replies[i] for i in ids]


def stored_ids():
    r = c.call({"cmd": "ls"})
    return [s["id"] for s in r["sessions"]], r


sessions = []


def test_fill_store(t):
    specs = []
    for i in range(64):
        if i == 1:
            specs.append({"argv": ["cat"], "tty": True})      # touched later
        elif i == 5:
            # exits at once; the long yield only bounds the wait: the reply
            # comes as soon as it has exited, however busy the machine is
            specs.append({"argv": ["true"], "yield_time_ms": 30000})
        else:
            specs.append({"argv": ["sleep", "1000"]})
    replies = exec_many(specs)
    for r in replies:
        sessions.append(r.get("session"))
    t.ok(all(isinstance(s, int) for s in sessions), "64 exec requests each got a session",
         [r for r in replies if "error" in r][:3])
    t.eq(replies[5].get("exit_code"), 0, "session 5 exited", replies[5])
    ids, r = stored_ids()
    t.eq((r["stored"], r["live"]), (64, 63), "the store holds 64 entries, 63 live")
    warnings = [e["message"] for e in c.events if e.get("event") == "warning"]
    t.eq(len(warnings), 5, "a warning came with each process from the 60th to the 64th")
    t.eq(warnings[-1] if warnings else None, WARNING % 64, "with Codex's wording and count")


def test_exited_pruned_first(t):
    [r] = exec_many([{"argv": ["sleep", "1000"]}])
    sessions.append(r.get("session"))
    ids, info = stored_ids()
    t.ok(sessions[5] not in ids, "the 65th process prunes the exited one although 4 older ones live")
    t.ok(all(s in ids for i, s in enumerate(sessions) if i != 5), "and nothing else")
    t.eq(info["stored"], 64, "the store stays at 64")
    ev = read_jsonl(os.path.join(w.session_dir(sessions[5]), "events.jsonl"))
    t.ok(any(e["event"] == "pruned" for e in ev), "its event log records the prune")


def test_lru_live_pruned_with_its_tree(t):
    c.call({"cmd": "pin", "session": sessions[0], "pinned": True})
    r = c.call({"cmd": "write_stdin", "session_id": sessions[1], "chars": "x", "yield_time_ms": 250})
    t.ok("session_id" in r, "writing to session 1 marks it used")
    victim = sessions[2]
    pid = [s for s in c.call({"cmd": "ls"})["sessions"] if s["id"] == victim][0]["pid"]
    tree = descendants(pid)
    t.ok(len(tree) >= 1, "the victim's init has its sleep below it")
    [r] = exec_many([{"argv": ["sleep", "1000"]}])
    sessions.append(r.get("session"))
    ids, _ = stored_ids()
    t.ok(victim not in ids, "with no exited entry left, the least recently used live one goes")
    t.ok(sessions[0] in ids, "a pinned session is never pruned")
    t.ok(sessions[1] in ids, "a recently used one is kept")
    t.ok(sessions[3] in ids, "the next oldest stays")
    # The prune kills asynchronously; no protocol event tells when the
    # kernel has removed the processes, so watch /proc.
    gone = wait_until(lambda: not pid_alive(pid) and not any(pid_alive(p) for p in tree))
    t.ok(gone, "the pruned process and its whole tree are gone")
    ev = wait_until(lambda: [e["event"] for e in read_jsonl(os.path.join(w.session_dir(victim), "events.jsonl"))]
                    if "exited" in [e["event"] for e in read_jsonl(os.path.join(w.session_dir(victim), "events.jsonl"))]
                    else None)
    t.ok(ev and "pruned" in ev and ev.index("pruned") < ev.index("exited"), "its log says pruned, then exited", ev)


def test_recent_exited_protected(t):
    # An exited process among the 8 most recently used is protected: the
    # least recently used live one is pruned instead.
    [r] = exec_many([{"argv": ["true"], "yield_time_ms": 30000}])
    fresh_exited = r.get("session")
    t.eq(r.get("exit_code"), 0, "a new process exits at once")
    ids, _ = stored_ids()
    t.ok(sessions[3] not in ids, "its arrival pruned the least recently used live one")
    [r] = exec_many([{"argv": ["sleep", "1000"]}])
    ids, _ = stored_ids()
    t.ok(fresh_exited in ids, "the next arrival keeps the exited one: it is among the 8 most recent")
    t.ok(sessions[4] not in ids, "and prunes the least recently used live one instead")


# ---- corral rm: exited sessions leave the store, their files stay --------


def exited_session(**extra):
    """A session whose command has exited (the reply waits for the exit)."""
    [r] = exec_many([dict({"argv": ["true"], "yield_time_ms": 30000}, **extra)])
    assert r.get("exit_code") == 0 and isinstance(r.get("session"), int), r
    return r["session"]


def running_session():
    [r] = exec_many([{"argv": ["sleep", "1000"]}])
    assert isinstance(r.get("session"), int), r
    return r["session"]


def unused_id():
    ids, _ = stored_ids()
    return next(i for i in range(99999, 999, -1) if i not in ids)


def removed_event(sub, sid):
    """Read sub's events until session_removed for sid; None if the
    connection goes quiet first."""
    while True:
        try:
            m = sub.read_msg(timeout=10)
        except OSError:
            return None
        if m.get("event") == "session_removed" and m.get("session") == sid:
            return m


def test_rm_exited_keeps_files(t):
    sid = exited_session()
    sub = w.connect(client="screen")
    sub.call({"cmd": "subscribe"})
    r = w.corral("rm", str(sid))
    t.eq(r.returncode, 0, "corral rm ID of an exited session succeeds", r.stderr)
    t.eq(r.stdout, "session %d: removed\n" % sid, "and says which one it removed")
    ids, _ = stored_ids()
    t.ok(sid not in ids, "it is gone from the store (ls)")
    t.ok(removed_event(sub, sid) is not None, "a subscribed client is told with session_removed")
    sub.close()
    d = w.session_dir(sid)
    t.ok(os.path.isfile(os.path.join(d, "events.jsonl")) and os.path.isfile(os.path.join(d, "output.cast")),
         "its log and recording stay under the state directory", os.listdir(d) if os.path.isdir(d) else d)
    r = c.call({"cmd": "screen", "session": sid})
    t.eq(r.get("error", {}).get("code"), "not_found", "the server no longer knows it")


def test_rm_running_refused(t):
    run = running_session()
    done = exited_session()
    r = w.corral("rm", str(done), str(run))
    t.eq(r.returncode, 1, "corral rm with a running session fails")
    t.ok("%d is still running" % run in r.stderr and "corral kill %d" % run in r.stderr,
         "naming the running one and how to end it", r.stderr)
    ids, _ = stored_ids()
    t.ok(run in ids and done in ids, "and removes nothing, not even the exited one named with it")
    r = c.call({"cmd": "rm", "sessions": [run]})
    t.eq(r.get("error", {}).get("code"), "session_running", "the protocol's error code says why")
    nosuch = unused_id()
    r = w.corral("rm", str(nosuch))
    t.ok(r.returncode == 1 and "no session with id %d" % nosuch in r.stderr, "an unknown id is an error", r.stderr)
    kill = w.corral("kill", str(run))
    r = w.corral("rm", str(run), str(done), str(run))
    t.eq(r.returncode, 0, "once killed it can be removed (an id given twice counts once)", kill.stdout + r.stderr)
    ids, _ = stored_ids()
    t.ok(run not in ids and done not in ids, "both are gone")


def test_rm_exited_all(t):
    kept = exited_session()
    c.call({"cmd": "pin", "session": kept, "pinned": True})
    gone = [exited_session() for _ in range(3)]
    live = running_session()
    before, _ = stored_ids()
    r = w.corral("rm", "--exited")
    t.eq(r.returncode, 0, "corral rm --exited succeeds", r.stderr)
    ids, _ = stored_ids()
    t.ok(not any(g in ids for g in gone), "every exited session is removed", r.stdout)
    t.ok(kept in ids, "but a pinned one stays (a pin says keep it)")
    t.ok(live in ids, "and running ones stay")
    t.ok(all(("session %d: removed" % g) in r.stdout for g in gone), "each one removed is named", r.stdout)
    t.eq(len(ids), len(before) - len(r.stdout.splitlines()), "nothing else left the store", r.stdout)
    r = w.corral("rm", "--exited")
    t.ok(r.returncode == 0 and "no exited sessions to remove" in r.stdout, "with none left it says so", r.stdout)
    r = c.call({"cmd": "rm", "exited": True})
    t.eq(r.get("removed"), [], "the protocol reply lists what went (nothing)")


def test_rm_usage(t):
    r = w.corral("rm")
    t.ok(r.returncode == 2 and "wants session ids or --exited" in r.stderr, "rm without ids is a usage error",
         r.stderr)
    r = w.corral("rm", "--exited", "1234")
    t.ok(r.returncode == 2 and "not both" in r.stderr, "ids and --exited together are a usage error", r.stderr)
    r = w.corral("rm", "abc")
    t.ok(r.returncode == 2 and "'abc' is not a session id" in r.stderr, "a word is not an id", r.stderr)
    r = c.call({"cmd": "rm"})
    t.eq(r.get("error", {}).get("code"), "bad_request", "the protocol wants sessions or exited")
    r = c.call({"cmd": "rm", "sessions": ["1234"]})
    t.eq(r.get("error", {}).get("code"), "bad_request", "ids are numbers")


def test_layout_forgets_removed(t):
    # The screen's layout is kept on the server per client name; a session
    # that leaves the store leaves every tile, so an id given out again
    # later never lands in a tile the user kept for another session.
    sid = exited_session()
    scr = w.connect(client="screen")
    r = scr.call({"cmd": "layout", "set": {"mode": "grid", "zoom": False, "tiles": [0, sid, unused_id()],
                                           "expanded": ["codex"]}})
    t.eq(r.get("layout", {}).get("tiles"), [0, sid, 0], "a layout keeps a stored session in its tile, and a tile "
         "naming no stored session free", r)
    other = w.connect(client="other")
    t.eq(other.call({"cmd": "layout"}).get("layout"), {}, "each client name has its own layout")
    other.close()
    w.corral("rm", str(sid))
    r = scr.call({"cmd": "layout"})
    t.eq(r.get("layout", {}).get("tiles", [None])[1], 0, "rm frees the tile it was kept in", r)
    t.eq(r.get("layout", {}).get("mode"), "grid", "and the rest of the layout stays", r)
    t.eq(r.get("layout", {}).get("expanded"), ["codex"], "unfolded agents included", r)
    r = scr.call({"cmd": "layout", "set": {"mode": "diagonal"}})
    t.eq(r.get("error", {}).get("code"), "bad_request", "a layout mode the screen does not have is refused")
    scr.close()


def test_layout_remote_tiles(t):
    # Another machine's sessions kept in tiles: this server cannot check
    # them, so it keeps them as named, within bounds, names made safe.
    scr = w.connect(client="screen-there")
    kept = [{"tile": 1, "host": "box", "session": 1007}, {"tile": 8, "host": "gpu-2", "session": 48213}]
    r = scr.call({"cmd": "layout", "set": {"mode": "vsplit", "remote_tiles": kept}})
    t.eq(r.get("layout", {}).get("remote_tiles"), kept, "another machine's kept tiles are kept as named", r)
    t.eq(scr.call({"cmd": "layout"}).get("layout", {}).get("remote_tiles"), kept, "and come back on attach")
    r = scr.call({"cmd": "layout", "set": {"remote_tiles": [{"tile": 0, "host": "b\x1b[31mx", "session": 1003}]}})
    host = r.get("layout", {}).get("remote_tiles", [{}])[0].get("host", "")
    t.ok("\x1b" not in host and host.startswith("b"), "a name's control characters are taken out", r)
    bad = [("a tile past the grid's nine", [{"tile": 9, "host": "box", "session": 1007}]),
           ("a negative tile", [{"tile": -1, "host": "box", "session": 1007}]),
           ("an empty name", [{"tile": 0, "host": "", "session": 1007}]),
           ("a name of 65 bytes", [{"tile": 0, "host": "h" * 65, "session": 1007}]),
                      ("a name that is no string", [{"tile": 0, "host": 5, "session": 1007}]),
           ("session 0", [{"tile": 0, "host": "box", "session": 0}]),
           ("a session id past the store's", [{"tile": 0, "host": "box", "session": 100000}]),
           ("a session id as text", [{"tile": 0, "host": "box", "session": "1007"}]),
           ("an element that is no object", [7]),
           ("ten of them", [{"tile": 0, "host": "box", "session": 1007}] * 10),
           ("no array", {"tile": 0})]
    for what, v in bad:
        r = scr.call({"cmd": "layout", "set": {"remote_tiles": v}})
        t.eq(r.get("error", {}).get("code"), "bad_request", "refused: %s" % what, r)
    r = scr.call({"cmd": "layout"})
    t.eq(r.get("layout", {}).get("remote_tiles", [{}])[0].get("session"), 1003,
         "a refused layout leaves the kept one")
    scr.close()


try:
    run_tests(Tap(), [test_fill_store, test_exited_pruned_first, test_lru_live_pruned_with_its_tree,
                      test_recent_exited_protected, test_rm_exited_keeps_files, test_rm_running_refused,
                      test_rm_exited_all, test_rm_usage, test_layout_forgets_removed,
                      test_layout_remote_tiles])
finally:
    c.close()
    w.cleanup()
