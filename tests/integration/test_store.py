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


try:
    run_tests(Tap(), [test_fill_store, test_exited_pruned_first, test_lru_live_pruned_with_its_tree,
                      test_recent_exited_protected])
finally:
    c.close()
    w.cleanup()
