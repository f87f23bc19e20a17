#!/usr/bin/env python3
"""The admin protocol under bad input: malformed, oversized, half-sent and
binary messages get precise error replies (or a closed connection) and never
crash the server or disturb another client mid-request."""
import json
import os
import random
import socket

from harness import Client, Tap, World, run_tests

w = World()
w.start_server()


def error_of(reply):
    return reply.get("error", {})


def test_other_client_undisturbed(t):
    # A client waits on a running command while the others misbehave.
    good = w.connect("good")
    rid = good.next_id
    good.next_id += 1
    good.send({"id": rid, "cmd": "exec", "argv": ["sh", "-c", "sleep 1; echo done"], "workdir": w.ws,
               "yield_time_ms": 30000})
    bad_things(t)
    r = good.read_msg()
    t.eq((r.get("id"), r.get("exit_code"), r.get("output")), (rid, 0, "done\n"),
         "a client waiting on a command through all of it gets its exact reply")
    t.ok("sessions" in good.call({"cmd": "ls"}), "and keeps working")
    good.close()


def bad_things(t):
    b = w.connect("bad")
    b.send_raw(b"this is not json\n")
    r = b.read_msg()
    t.eq(error_of(r).get("code"), "bad_json", "garbage gets bad_json")
    t.ok(r.get("id", 0) is None, "with a null id", r)
    b.send_raw(b'{"id":1,"cmd":5}\n')
    t.eq(b.read_msg(), {"id": 1, "error": {"code": "bad_request", "message": "field 'cmd' must be a string"}},
         "a wrong type is named exactly")
    b.send_raw(b'{"id":"x","cmd":"frobnicate"}\n')
    t.eq(b.read_msg(), {"id": "x", "error": {"code": "unknown_cmd", "message": "unknown command 'frobnicate'"}},
         "an unknown command is named")
    b.send_raw(b'{"id":2,"cmd":"exec","argv":["true"],"yield_time_ms":"soon"}\n')
    t.eq(error_of(b.read_msg()).get("message"), "field 'yield_time_ms' must be a whole number",
         "a bad field of a valid command is named")
    b.send_raw(b'{"id":3,"cmd":"kill","session":"\xff\xfe"}\n')
    t.eq(error_of(b.read_msg()).get("code"), "bad_json", "invalid UTF-8 is bad_json")
    b.send_raw(b'[1,2,3]\n')
    t.eq(error_of(b.read_msg()).get("message"), "a message must be a JSON object", "an array is refused")
    # Oversized: one byte over the cap, sent in pieces, then a good request.
    big = b'{"id":4,"cmd":"ls","pad":"' + b"a" * (1 << 20) + b'"}'
    for i in range(0, len(big), 65536):
        b.send_raw(big[i:i + 65536])
    b.send_raw(b"\n")
    r = b.read_msg()
    t.eq(error_of(r).get("code"), "too_large", "a message over 1 MiB gets too_large")
    t.ok("1048576" in error_of(r).get("message", ""), "naming the limit", r)
    t.ok("sessions" in b.call({"cmd": "ls"}), "the same connection works after it")
    # Exactly at the cap is fine.
    pad = (1 << 20) - len(b'{"id":99,"cmd":"ls","pad":""}')
    b.send_raw(b'{"id":99,"cmd":"ls","pad":"' + b"a" * pad + b'"}\n')
    r = b.read_msg()
    t.eq((r.get("id"), r.get("ok")), (99, True), "a message of exactly 1 MiB is accepted")
    # Binary noise with newlines: each line gets an error reply.
    rnd = random.Random(7)
    noise = bytes(rnd.randrange(256) for _ in range(20000)).replace(b"\n", b"") + b"\n"
    b.send_raw(noise * 3)
    codes = {error_of(b.read_msg()).get("code") for _ in range(3)}
    t.eq(codes, {"bad_json"}, "binary noise gets bad_json for each line")
    t.ok("sessions" in b.call({"cmd": "ls"}), "and the connection still works")
    b.close()
    # Half-sent message, then the peer vanishes.
    h = Client(w.socket_path)
    h.send_raw(b'{"id":1,"cmd":"hel')
    h.close()
    # Requests before hello, and a wrong protocol version.
    n = Client(w.socket_path)
    n.send_raw(b'{"id":1,"cmd":"ls"}\n')
    t.eq(error_of(n.read_msg()).get("code"), "need_hello", "commands before hello are refused")
    r = n.call({"cmd": "hello", "protocol": 99})
    t.eq(error_of(r).get("code"), "version_mismatch", "a different protocol version is refused")
    r = n.call({"cmd": "hello", "protocol": 1, "client": "late"})
    t.eq((r.get("ok"), r.get("protocol")), (True, 1), "hello answers with the protocol version")
    n.close()
    # A connection that floods without reading does not stall the server.
    f = Client(w.socket_path)
    f.send({"cmd": "hello", "protocol": 1, "id": 0})
    for i in range(2000):
        f.send_raw(b'{"id":%d,"cmd":"ls"}\n' % (i + 1))
    f.close()


def test_server_survived(t):
    r = w.corral("ls")
    t.eq(r.returncode, 0, "the server is alive and answers the CLI")
    t.ok(w.server.poll() is None, "the server process never exited")


try:
    run_tests(Tap(), [test_other_client_undisturbed, test_server_survived])
finally:
    w.cleanup()
