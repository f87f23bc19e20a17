#!/usr/bin/env python3
"""Following the server live, as the TUI does: the session list by
subscription, one session's terminal by a watch (a sync that recreates the
model, then every byte, and resizes in order), keystrokes by input, and a
client that stops reading never blocks a session or the server."""
import base64

from harness import Tap, World, run_tests

w = World()
w.start_server()


def messages(c):
    """Events kept while waiting for replies first, then what comes."""
    while True:
        if c.events:
            yield c.events.pop(0)
        else:
            yield c.read_msg()


def next_event(c, pred, what):
    for m in messages(c):
        if pred(m):
            return m
    raise AssertionError("no %s" % what)


def term_bytes_until(c, sid, marker):
    """Concatenate term events of sid until marker is in them."""
    data = b""
    for m in messages(c):
        if m.get("event") == "term" and m.get("session") == sid:
            data += base64.b64decode(m["data_b64"])
            if marker in data:
                return data


def syncs_until(c, sid, marker):
    """The sync events of sid until its term bytes hold marker: the syncs,
    the term bytes in all, and those since the last sync."""
    syncs, total, data = [], 0, b""
    for m in messages(c):
        if m.get("event") == "sync" and m.get("session") == sid:
            syncs.append(m)
            data = b""
        elif m.get("event") == "term" and m.get("session") == sid:
            chunk = base64.b64decode(m["data_b64"])
            total += len(chunk)
            data += chunk
            if marker in data:
                return syncs, total, data


def test_subscribe(t):
    sub = w.connect("tui")
    r = sub.call({"cmd": "subscribe"})
    t.ok(r.get("ok") and isinstance(r.get("sessions"), list) and r.get("max") == 64,
         "subscribe answers with the list, as ls does", r)
    other = w.connect("agent-x")
    sid = other.call({"cmd": "new", "argv": ["sh", "-c", "printf '\\033]2;my title\\007'; exec sleep 1000"],
                      "cwd": w.ws})["session"]["id"]
    ev = next_event(sub, lambda m: m.get("event") == "session" and m["session"]["id"] == sid
                    and m["session"].get("title") == "my title", "session event with the title")
    t.eq((ev["session"]["client"], ev["session"]["state"]), ("agent-x", "running"),
         "a new session from another client is announced with its client and title")
    other.call({"cmd": "kill", "session": sid})
    ev = next_event(sub, lambda m: m.get("event") == "session" and m["session"]["id"] == sid
                    and m["session"]["state"] == "exited", "exited event")
    t.ok(ev["session"]["status"].startswith("killed"), "its end is announced", ev)
    other.call({"cmd": "new", "argv": ["sh", "-c", "printf '\\a'; exec sleep 1000"], "cwd": w.ws})
    ev = next_event(sub, lambda m: m.get("event") == "bell", "bell event")
    t.ok(isinstance(ev.get("session"), int), "a bell is announced", ev)
    other.close()
    sub.close()


def test_watch_sync_then_live(t):
    c = w.connect("tui")
    sid = c.call({"cmd": "new", "argv": ["sh"], "cwd": w.ws, "cols": 60, "rows": 10,
                  "name": "watched"})["session"]["id"]
    c.call({"cmd": "input", "session": sid, "data": "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo line-$i; done; "
                                                    "printf '\\033[?1h\\033[31mRED-%s\\033[0m\\n' $((40+2))\r"})
    r = c.call({"cmd": "watch", "session": sid})
    t.ok(r.get("ok"), "watch is accepted", r)
    term_bytes_until(c, sid, b"RED-42")
    # Watching again asks for a fresh copy: now with all of it in history.
    c.call({"cmd": "watch", "session": sid})
    sync = next_event(c, lambda m: m.get("event") == "sync", "sync event")
    t.eq((sync["session"], sync["rows"], sync["cols"]), (sid, 10, 60), "a sync names the model's size")
    data = term_bytes_until(c, sid, b"\x1b[?1h")
    t.ok(b"line-1\r\n" in data and b"line-12" in data, "the sync bytes carry history and screen", data[:400])
    t.ok(b"\x1b[0;31mRED-42" in data, "with colours", data[-400:])
    c.sock.sendall(b'{"id": 777, "cmd": "input", "session": %d, "data": "echo after-$((6*7))\\r", "quiet": true}\n'
                   % sid)
    c.sock.sendall(b'{"id": 778, "cmd": "ls"}\n')  # its reply comes after anything sent before it
    data, replies = b"", []
    for m in messages(c):
        if m.get("event") == "term" and m.get("session") == sid:
            data += base64.b64decode(m["data_b64"])
        elif "id" in m:
            replies.append(m["id"])
        if 778 in replies and b"after-42" in data:
            break
    t.ok(b"after-42" in data, "then live output follows")
    t.eq(replies, [778], "a quiet input (the screen's keys) gets no reply when it went in")
    c.call({"cmd": "resize", "session": sid, "cols": 70, "rows": 12})
    ev = next_event(c, lambda m: m.get("event") == "resized", "resized event")
    t.eq((ev["rows"], ev["cols"]), (12, 70), "a resize comes in order with the output")
    c.call({"cmd": "unwatch", "session": sid})
    mon = w.connect("mon")
    mon.call({"cmd": "watch", "session": sid})
    c.call({"cmd": "input", "session": sid, "data": "echo unwatched-$((1+1))\r"})
    term_bytes_until(mon, sid, b"unwatched-2")  # the output has happened
    got = c.call({"cmd": "ls"})  # and anything sent to c before this reply has arrived
    terms = [m for m in c.events if m.get("event") == "term" and b"unwatched-2" in base64.b64decode(m["data_b64"])]
    c.events.clear()
    t.eq(terms, [], "after unwatch no more output arrives")
    t.ok(got.get("ok"), "and the connection works")
    mon.call({"cmd": "kill", "session": sid})
    mon.close()
    c.close()


def test_input_errors(t):
    c = w.connect("tui")
    r = c.call({"cmd": "input", "session": 99999999, "data": "x"})
    t.eq(r.get("error", {}).get("code"), "not_found", "input to a missing session is not_found")
    sid = c.call({"cmd": "exec", "argv": ["sleep", "1000"], "workdir": w.ws, "yield_time_ms": 250})["session"]
    r = c.call({"cmd": "input", "session": sid, "data": "x"})
    t.eq(r.get("error", {}).get("code"), "stdin_closed", "input to a pipes session is stdin_closed")
    r = c.call({"cmd": "input", "session": sid})
    t.eq(r.get("error", {}).get("message"), "give exactly one of 'data' and 'data_b64'", "input needs data")
    r = c.call({"cmd": "input", "session": sid, "data": "x", "quiet": True})
    t.eq(r.get("error", {}).get("code"), "stdin_closed", "a quiet input's error is said all the same")
    r = c.call({"cmd": "watch", "session": sid, "history": -1})
    t.eq(r.get("error", {}).get("code"), "bad_request", "a negative history is refused")
    c.call({"cmd": "kill", "session": sid})
    c.close()


def test_slow_client_resyncs(t):
    slow = w.connect("slow")
    sid = slow.call({"cmd": "new", "argv": ["sh", "-c", "read x; head -c 40000000 /dev/zero | tr '\\0' x; "
                                            "echo; echo DONE-$((40+2))"],
                     "cwd": w.ws, "cols": 80, "rows": 24})["session"]["id"]
    slow.call({"cmd": "watch", "session": sid})
    sub = w.connect("sub")
    sub.call({"cmd": "subscribe"})
    slow.call({"cmd": "input", "session": sid, "data": "go\r"})
    # The slow client reads nothing until the flood is over; the session
    # runs to its end meanwhile, at full speed.
    ev = next_event(sub, lambda m: m.get("event") == "session" and m["session"]["id"] == sid
                    and m["session"]["state"] == "exited", "the flood's end")
    t.eq(ev["session"]["status"], "exited 0",
         "a session watched by a client that does not read still runs to its end")
    # Now read: a second sync replaced what was dropped, and the copy ends
    # with the true screen.
    syncs, total, _ = syncs_until(slow, sid, b"DONE-42")
    t.ok(len(syncs) >= 2, "the slow client got a fresh sync after falling behind (%d syncs)" % len(syncs))
    t.ok(total < 40000000, "and was not sent all 40 MB (%d bytes)" % total)
    for c in (slow, sub):
        c.close()


def test_frames(t):
    """A watch over a slow link asks for frames: light output still comes
    at once, byte for byte; a flood comes as a few frames, not its bytes,
    also after a first sync with a long history."""
    c = w.connect("far")
    sid = c.call({"cmd": "new", "argv": ["sh"], "cwd": w.ws, "cols": 80, "rows": 24})["session"]["id"]
    # A long history first (about 400 KB): a watch's first sync carries it.
    c.call({"cmd": "watch", "session": sid})
    c.call({"cmd": "input", "session": sid, "data": "yes 0123456789012345678901234567890123456789 | head -n 10000; "
                                                    "echo HIST-$((1+1))\r"})
    term_bytes_until(c, sid, b"HIST-2")
    for bad in (5, 5000, "40"):
        r = c.call({"cmd": "watch", "session": sid, "frame_ms": bad})
        t.eq(r.get("error", {}).get("code"), "bad_request", "frame_ms %r is refused" % (bad,), r)
    r = c.call({"cmd": "watch", "session": sid, "frame_ms": 40})
    t.ok(r.get("ok"), "a watch with frames is accepted", r)
    c.call({"cmd": "input", "session": sid, "data": "echo hi-$((6*7))\r"})
    kinds = []
    data = b""
    for m in messages(c):
        if m.get("event") in ("sync", "term"):
            kinds.append("frame" if m.get("frame") else m["event"])
        if m.get("event") == "term":
            data += base64.b64decode(m["data_b64"])
            if b"hi-42" in data:
                break
    t.eq(kinds.count("frame"), 0, "an echo comes as the bytes themselves, not a frame", kinds)
    # About 2 MB of output, and then a line that says it is over.
    c.call({"cmd": "input", "session": sid, "data": "seq 1 300000; echo END-$((1+1))\r"})
    frames, total, data = syncs_until(c, sid, b"END-2")
    t.ok(len(frames) >= 1, "the flood came as frames (%d)" % len(frames))
    t.ok(all(f.get("frame") is True and (f["rows"], f["cols"]) == (24, 80) for f in frames),
         "each a sync marked frame, of the model's size", frames[:3])
    t.ok(total < 2000000 // 4, "carrying %d bytes for 2 MB of output" % total)
    t.ok(b"300000" in data, "and the last frame shows the flood's end", data[-300:])
    # A resize while nothing is held: the event, as for any watch.
    c.call({"cmd": "resize", "session": sid, "cols": 70, "rows": 20})
    ev = next_event(c, lambda m: m.get("event") in ("resized", "sync"), "resized event")
    t.eq((ev["event"], ev["rows"], ev["cols"]), ("resized", 20, 70), "a resize comes as an event")
    c.call({"cmd": "kill", "session": sid})
    c.close()


try:
    run_tests(Tap(), [test_subscribe, test_watch_sync_then_live, test_input_errors, test_slow_client_resyncs,
                      test_frames])
finally:
    w.cleanup()
