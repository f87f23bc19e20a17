#!/usr/bin/env python3
"""`corral mcp` over its real stdin and stdout, against a real server: the
protocol (initialize in both versions and an unknown one, tools/list with
the documented schemas, ping, JSON-RPC errors), the tools (exec, poll and
write through tools/call), cancellation mid-wait, a 2 MiB message, the
client going away mid-call (stdin closing; SIGTERM first, as Codex does),
the yield cap, who the sessions belong to, and --print-config."""
import atexit
import json
import os
import re
import shlex
import signal
import socket
import shutil
import subprocess
import tempfile
import tomllib

from harness import CORRAL, TIMEOUT, Tap, World, run_tests, wait_until
from mcplib import Bridge, session_running, sessions

w = World()
w.start_server()
REAL_WS = os.path.realpath(w.ws)


def held(marker):
    """A command that prints marker once release(marker) is called: it
    waits for a file, not for a clock, so no test depends on timing."""
    return "while [ ! -e .release-%s ]; do sleep 0.02; done; echo %s" % (marker, marker)


def release(marker):
    open(os.path.join(w.ws, ".release-" + marker), "w").close()


def bridge(*args, **kw):
    b = Bridge(w, args, **kw)
    b.initialize()
    return b


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []))


def documented_tools():
    """The tools/list result docs/mcp.md shows (its first json block after
    the tools/list marker)."""
    path = os.path.join(os.environ.get("CORRAL_TESTS_SRCDIR", os.path.join(os.path.dirname(__file__), "..")),
                        "..", "docs", "mcp.md")
    text = open(path).read()
    after = text.split("<!-- tools/list result -->", 1)[1]
    block = re.search(r"```json\n(.*?)```", after, re.S).group(1)
    return json.loads(block)


def test_initialize(t):
    # 2026-07-28 is the stateless revision (server/discover, no
    # initialize): corral speaks the one before it, and says so.
    for asked, agreed in (("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25"),
                          ("2026-07-28", "2025-11-25"), ("not-a-version", "2025-11-25")):
        b = Bridge(w)
        r = b.initialize(asked)["result"]
        t.eq(r["protocolVersion"], agreed, "initialize with %s agrees on %s" % (asked, agreed))
        if asked == "2025-06-18":
            t.eq(r["capabilities"], {"tools": {"listChanged": False}}, "it offers tools, a fixed list")
            t.eq((r["serverInfo"]["name"], bool(r.get("instructions"))), ("corral", True),
                 "it is corral, with instructions for the model")
            t.ok("corral escalate --reason" in r["instructions"] and "CORRAL_BIN" in r["instructions"],
                 "which say how a program inside a session asks for more", r["instructions"])
        b.close()
    b = Bridge(w)
    r = b.call("initialize", {"capabilities": {}})
    t.eq(r.get("error", {}).get("code"), -32602, "initialize without protocolVersion: invalid params", r)
    t.eq(b.call("ping"), {"jsonrpc": "2.0", "id": 2, "result": {}}, "ping answers with an empty result")
    t.eq(b.close(), 0, "closing stdin ends it with status 0")


def test_stateless_revision(t):
    """The stateless revision (2026-07-28), as Claude Code speaks it: no
    initialize; server/discover first, then each request names the
    revision and the client in its _meta."""
    b = Bridge(w)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    r = b.call("server/discover", {"_meta": meta}).get("result", {})
    t.ok(r.get("supportedVersions") == ["2026-07-28"] and r.get("capabilities") == {"tools": {"listChanged": False}}
         and r.get("resultType") == "complete" and r.get("instructions"),
         "server/discover: the stateless revision, tools, instructions", r)
    r = b.call("tools/list", {"_meta": meta}).get("result", {})
    t.ok(len(r.get("tools", [])) == 2 and r.get("resultType") == "complete", "tools/list without initialize", r)
    r = b.call("tools/call", {"name": "exec_command", "arguments": {"cmd": "echo stateless-$((6*7))"},
                              "_meta": dict(meta, progressToken=1)}).get("result", {})
    t.ok(r.get("structuredContent", {}).get("output") == "stateless-42\n" and r.get("resultType") == "complete",
         "tools/call too", r)
    s = session_running(w, "stateless-$((6*7))")
    t.eq(s and s["client"], "claude", "its sessions belong to the client its _meta names")
    r = b.call("tools/list", {"_meta": dict(meta, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})})
    t.ok(r.get("error", {}).get("code") == -32022 and r["error"].get("data", {}).get("supported") == ["2026-07-28"]
         and r["error"]["data"].get("requested") == "2099-01-01",
         "a revision corral does not serve: -32022 naming the ones it does", r)
    b.close()
    b = Bridge(w)
    r = b.initialize("2025-11-25", client={"name": "claude-code", "version": "2.1.332"})
    t.eq(r.get("result", {}).get("protocolVersion"), "2025-11-25",
         "a client that falls back to initialize gets 2025-11-25 as before", r)
    r = b.call("tools/list")["result"]
    t.ok("resultType" not in r, "and results without resultType", r)
    b.close()


def test_answers_before_the_server(t):
    """initialize and tools/list never wait for the corral server: here one
    accepts the connection and never answers, and both are still answered
    (a client that lists the tools at once, as Claude Code does before its
    first model request, gets them)."""
    other = World()
    os.makedirs(os.path.dirname(other.socket_path), exist_ok=True)
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(other.socket_path)
    mute.listen(8)
    b = Bridge(other)
    b.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})))
    r1, r2 = b.reply(1), b.reply(2)
    t.ok(r1.get("result", {}).get("protocolVersion") == "2025-11-25" and
         len(r2.get("result", {}).get("tools", [])) == 2,
         "initialize and tools/list are answered while the server has not answered the bridge", (r1, r2))
    mute.settimeout(TIMEOUT)
    try:
        conn, _ = mute.accept()  # the bridge does connect once they are answered
    except socket.timeout:
        conn = None
    t.ok(conn is not None, "and then it connects")
    if conn:
        conn.close()
    b.kill()
    mute.close()
    other.cleanup()


def test_progress_while_running(t):
    """A call that waits for its command reports progress when the client
    gave a progressToken (Claude Code ends a call that is quiet for its idle
    timeout, without a word); the command here ends only when the test
    releases it, after the progress came."""
    b = bridge("--progress-interval", "1")
    rid = b.tool_request("exec_command", {"cmd": held("beat"), "yield_time_ms": 30000}, token="beat-1")
    p1 = b.notification("notifications/progress")
    p2 = b.notification("notifications/progress")
    t.ok(p1["params"]["progressToken"] == "beat-1" and "still running" in p1["params"]["message"],
         "a call waiting for its command reports progress with the client's token", p1)
    t.ok(p2["params"]["progress"] > p1["params"]["progress"], "again, each progress higher", (p1, p2))
    release("beat")
    r = b.reply(rid)["result"]
    t.ok(r["structuredContent"]["output"].endswith("beat\n"), "then the call returns", r)
    b.notifications.clear()  # a last progress of that call may have come before its reply
    # A call without a token beside one with: by the second progress of
    # the latter, the former has waited longer than an interval too.
    quiet = b.tool_request("exec_command", {"cmd": held("quiet"), "yield_time_ms": 30000})
    loud = b.tool_request("exec_command", {"cmd": held("loud"), "yield_time_ms": 30000}, token="loud")
    seen = []
    while len(seen) < 2:
        seen.append(b.notification("notifications/progress"))
    release("quiet")
    release("loud")
    replies = {}
    while len(replies) < 2:  # in whichever order they end
        m = b.read()
        if "method" in m:
            seen.append(m)
        else:
            replies[m.get("id")] = m
    seen += [n for n in b.notifications if n["method"] == "notifications/progress"]
    t.ok(all(n["params"].get("progressToken") == "loud" for n in seen) and
         all("result" in r for r in replies.values()) and sorted(replies) == sorted([quiet, loud]),
         "a call without a token gets no progress (MCP has nowhere to send it)", seen)
    b.close()
    r = w.corral("mcp", "--progress-interval", "0")
    t.ok(r.returncode == 2 and "--progress-interval wants seconds from 1 to 600" in r.stderr,
         "--progress-interval 0 is refused", r.stderr)


def test_tools_list(t):
    b = bridge()
    r = b.call("tools/list")["result"]
    t.eq(r, documented_tools(), "tools/list is exactly what docs/mcp.md documents")
    tools = {x["name"]: x for x in r["tools"]}
    t.eq(sorted(tools), ["exec_command", "write_stdin"], "two tools: exec_command and write_stdin")
    ex, ws = tools["exec_command"], tools["write_stdin"]
    # Codex CLI 0.171.0's own words, as its binary holds them.
    t.eq(ex["description"], "Runs a command in a PTY, returning output or a session ID for ongoing interaction.",
         "exec_command's description is Codex's")
    t.eq(ws["description"], "Writes characters to an existing unified exec session and returns recent output.",
         "write_stdin's description is Codex's")
    props = ex["inputSchema"]["properties"]
    t.eq(sorted(props), sorted(["cmd", "workdir", "shell", "login", "tty", "yield_time_ms", "max_output_tokens",
                                "sandbox_permissions", "justification", "prefix_rule", "additional_permissions"]),
         "exec_command takes Codex's arguments")
    t.eq((ex["inputSchema"]["required"], ex["inputSchema"]["additionalProperties"]), (["cmd"], False),
         "cmd is required, nothing else accepted")
    t.eq(props["yield_time_ms"]["description"],
         "Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms.",
         "with Codex's defaults in the descriptions")
    t.eq(props["sandbox_permissions"]["enum"], ["use_default", "with_additional_permissions", "require_escalated"],
         "the three sandbox_permissions")
    t.eq(ws["inputSchema"]["required"], ["session_id"], "write_stdin needs session_id")
    t.eq(ws["inputSchema"]["properties"]["yield_time_ms"]["description"],
         "Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait "
         "5000-300000 ms by default.", "write_stdin's yield description is Codex's")
    out = ex["outputSchema"]
    t.eq((sorted(out["properties"]), out["required"]),
         (sorted(["chunk_id", "wall_time_seconds", "exit_code", "session_id", "original_token_count", "output",
                  "notices"]),
          ["wall_time_seconds", "output"]), "an outputSchema with Codex's reply fields, and corral's notices")
    t.eq(out["properties"]["notices"]["type"], "array", "notices: a list of texts")
    t.eq(ws["outputSchema"], out, "both tools share it")
    b.close()


def test_exec_poll_write(t):
    b = bridge()
    r = b.tool("exec_command", {"cmd": "echo one-$((40+2))"})
    sc = r.get("structuredContent", {})
    t.eq((r.get("isError"), sc.get("exit_code"), "session_id" in sc), (False, 0, False),
         "a command that ends: exit code, no session id", r)
    t.ok(sc.get("output", "").endswith("one-42\n"), "its output", r)
    text = text_of(r)
    t.ok(re.match(r"Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code 0\n"
                  r"Original token count: \d+\nOutput:\n", text) is not None and text.endswith("one-42\n"),
         "content is Codex's envelope", text)
    t.eq(sorted(sc), sorted(["chunk_id", "wall_time_seconds", "exit_code", "original_token_count", "output"]),
         "structuredContent has the envelope's facts and nothing else (no notices when there are none)")
    shown = re.search(r"Wall time: (\d+\.\d{4}) seconds", text)
    t.ok(shown and sc.get("wall_time_seconds") == float(shown.group(1)),
         "wall_time_seconds is the envelope's, rounded as it is", (text[:80], sc.get("wall_time_seconds")))

    r = b.tool("exec_command", {"cmd": "read line; echo got:$line", "tty": True, "yield_time_ms": 300})
    sid = r["structuredContent"].get("session_id")
    t.ok(isinstance(sid, int) and "exit_code" not in r["structuredContent"] and
         ("Process running with session ID %d\n" % sid) in text_of(r),
         "a command still running after its yield gives a session id", r)
    r = b.tool("write_stdin", {"session_id": sid, "chars": "hello\n", "yield_time_ms": 2000})
    out = r["structuredContent"]["output"]
    while "exit_code" not in r["structuredContent"]:
        r = b.tool("write_stdin", {"session_id": sid})
        out += r["structuredContent"]["output"]
    t.ok("got:hello" in out and r["structuredContent"]["exit_code"] == 0,
         "write_stdin writes to its terminal; polling gets the rest and the exit", out)
    s = [x for x in sessions(w) if x["id"] == sid]
    t.ok(s and s[0]["client"] == "codex" and s[0]["kind"] == "exec" and s[0]["tty"],
         "it is a corral session of the agent's, on a terminal", s)

    r = b.tool("exec_command", {"cmd": held("later"), "yield_time_ms": 250, "login": False})
    sid = r["structuredContent"]["session_id"]
    r = b.tool("write_stdin", {"session_id": sid, "chars": "x"})
    t.eq((r.get("isError"), text_of(r)),
         (True, "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"),
         "writing to a command without a terminal: Codex's error")
    release("later")
    r = b.tool("write_stdin", {"session_id": sid, "yield_time_ms": 30000})
    t.eq((r["structuredContent"].get("exit_code"), r["structuredContent"]["output"]), (0, "later\n"),
         "an empty write polls until it ends")
    r = b.tool("write_stdin", {"session_id": 1})
    t.eq((r.get("isError"), text_of(r)), (True, "Unknown process id 1"), "an unknown session: Codex's error")

    os.makedirs(os.path.join(w.ws, "sub"), exist_ok=True)
    r = b.tool("exec_command", {"cmd": "pwd", "workdir": "sub", "login": False})
    t.eq(r["structuredContent"]["output"], os.path.join(REAL_WS, "sub") + "\n",
         "a relative workdir is taken from where the agent started corral mcp")
    b.close()
    b = bridge("-C", os.path.join(w.ws, "sub"))
    r = b.tool("exec_command", {"cmd": "pwd", "login": False})
    t.eq(r["structuredContent"]["output"], os.path.join(REAL_WS, "sub") + "\n", "-C sets the default workdir")
    r = b.tool("exec_command", {"cmd": "head -c 2097152 /dev/zero | tr '\\0' a; echo"})
    sc = r["structuredContent"]
    t.ok(sc["original_token_count"] >= 262144 and "tokens truncated" in sc["output"] and len(sc["output"]) < 60000,
         "2 MiB of output is cut in the middle to the token budget", {k: sc[k] for k in sc if k != "output"})
    t.ok(any(n.startswith("Warning: truncated output (original token count: ") for n in sc.get("notices", [])) and
         "Warning: truncated output" in text_of(r),
         "the truncation is a notice in structuredContent, as in the text", sc.get("notices"))
    b.close()


def test_workdir_does_not_widen(t):
    """A model names workdir; the user chose the workspace (-C, or where the
    client started corral mcp).  Another directory is where the command
    starts, never a place it may write."""
    # Not under /tmp, which a sandbox has a private one of.
    elsewhere = tempfile.mkdtemp(prefix="corral-mcp-elsewhere", dir="/var/tmp")
    atexit.register(shutil.rmtree, elsewhere, True)
    b = bridge()
    r = b.tool("exec_command", {"cmd": "pwd; touch planted", "workdir": elsewhere, "login": False})
    # (before: the server made the workdir the sandbox's writable workspace)
    sc = r["structuredContent"]
    t.ok(not os.path.exists(os.path.join(elsewhere, "planted")) and sc.get("exit_code") != 0 and
         "Read-only file system" in sc["output"], "a workdir outside the workspace does not make it writable", r)
    t.ok(sc["output"].startswith(os.path.realpath(elsewhere) + "\n"), "the command ran there", sc["output"])
    s = session_running(w, "touch planted")
    t.eq(s and s["cwd"], REAL_WS, "the sandbox's workspace stayed the bridge's", s)
    link = os.path.join(w.ws, "link-out")
    if not os.path.islink(link):
        os.symlink(elsewhere, link)
    r = b.tool("exec_command", {"cmd": "touch planted2", "workdir": "link-out", "login": False})
    t.ok(not os.path.exists(os.path.join(elsewhere, "planted2")), "neither through a symlink in the workspace", r)
    os.makedirs(os.path.join(w.ws, "sub"), exist_ok=True)
    r = b.tool("exec_command", {"cmd": "touch made-in-sub", "workdir": "sub/../sub/.", "login": False})
    t.ok(r["structuredContent"].get("exit_code") == 0 and os.path.exists(os.path.join(w.ws, "sub", "made-in-sub")),
         "a directory inside the workspace is writable as before", r)
    b.close()


def test_bad_arguments(t):
    b = bridge()
    cases = [
        ({}, "'cmd' is required"),
        ({"cmd": 5}, "'cmd' must be a string"),
        ({"cmd": "true", "yield_time_ms": "soon"}, "'yield_time_ms' must be a number"),
        ({"cmd": "true", "colour": "red"}, "unknown argument 'colour'"),
        ({"cmd": "true", "sandbox_permissions": "root"}, "'sandbox_permissions' must be"),
        ({"cmd": "true", "sandbox_permissions": "with_additional_permissions",
          "additional_permissions": {"file_system": {"read": ["/etc"]}}}, "cannot grant extra read access"),
    ]
    for args, want in cases:
        r = b.tool("exec_command", args)
        t.ok(r.get("isError") is True and want in text_of(r) and text_of(r).startswith(
            "invalid arguments for exec_command: "), "bad arguments %s: a tool error the model can read" %
             json.dumps(args), r)
    r = b.tool("write_stdin", {"chars": "x"})
    t.ok(r.get("isError") and "'session_id' is required" in text_of(r), "write_stdin without session_id", r)
    r = b.tool("exec_command", {"cmd": "echo 1.5", "yield_time_ms": 20000.5, "max_output_tokens": 100.0})
    t.eq(r["structuredContent"].get("exit_code"), 0, "numbers may come as floats (JSON has one number type)", r)
    r = b.tool("exec_command", {"cmd": "echo wfp", "wait_for_previous": True})
    t.ok(r.get("structuredContent", {}).get("output", "").endswith("wfp\n"),
         "wait_for_previous, which Gemini CLI adds to every tool and passes on, is the client's: ignored", r)
    r = b.tool("exec_command", {"cmd": "true", "wait_for_previous": "yes"})
    t.ok(r.get("isError") is True and "unknown argument 'wait_for_previous'" in text_of(r),
         "(as a boolean only)", r)
    b.close()


def test_jsonrpc_errors(t):
    b = bridge()
    cases = [
        (b"{bad\n", None, -32700, "parse error"),
        (b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n", None, -32600, "batches"),
        (b"\"text\"\n", None, -32600, "JSON object"),
        (b"{\"id\":7,\"method\":\"ping\"}\n", 7, -32600, "\"jsonrpc\" must be \"2.0\""),
        (b"{\"jsonrpc\":\"2.0\",\"id\":8}\n", 8, -32600, "no \"method\""),
        (b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":7}\n", 9, -32600, "\"method\" must be a string"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n", None, -32600, "\"id\" must be"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\",\"params\":3}\n", 10, -32600, "\"params\""),
    ]
    for raw, rid, code, words in cases:
        b.send_raw(raw)
        m = b.read()
        t.ok(m.get("id") == rid and m.get("error", {}).get("code") == code and words in m["error"]["message"],
             "%s -> %d" % (raw.strip().decode()[:40], code), m)
    r = b.call("resources/list")
    t.ok(r.get("error", {}).get("code") == -32601 and "resources/list" in r["error"]["message"],
         "an unknown method: -32601 naming it", r)
    r = b.call("tools/call", {"name": "nosuch", "arguments": {}})
    t.ok(r.get("error", {}).get("code") == -32602 and "unknown tool: nosuch" in r["error"]["message"],
         "an unknown tool: -32602", r)
    r = b.call("tools/call", {"arguments": {}})
    t.eq(r.get("error", {}).get("code"), -32602, "tools/call without a name: -32602", r)
    r = b.call("tools/call", {"name": "exec_command", "arguments": "echo hi"})
    t.eq(r.get("error", {}).get("code"), -32602, "arguments that are not an object: -32602", r)
    b.notify("notifications/whatever", {"x": 1})
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":5}\n")
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n")
    b.send_raw(b"\n\r\n")
    t.eq(b.call("ping").get("result"), {}, "unknown or broken notifications, a client's response and blank lines "
         "get no answer; the next request does")
    b.close()


def test_two_mib(t):
    b = bridge()
    big = "x" * (2 << 20)
    r = b.call("tools/list", {"_meta": {"padding": big}})
    t.ok(len(r.get("result", {}).get("tools", [])) == 2, "a 2 MiB message is read whole (tools/list answers)")
    r = b.tool("exec_command", {"cmd": "echo " + big})
    t.ok(r.get("isError") is True and "at most 1048576 bytes" in text_of(r), "a 2 MiB command: a tool error "
         "naming corral's 1 MiB limit", text_of(r)[:300])
    r = b.tool("exec_command", {"cmd": "cat", "tty": True, "yield_time_ms": 250})
    sid = r["structuredContent"]["session_id"]
    r = b.tool("write_stdin", {"session_id": sid, "chars": big})
    t.ok(r.get("isError") is True and "1 MiB" in text_of(r), "a 2 MiB write: the same", text_of(r)[:300])
    w.corral("kill", str(sid))
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"huge\",\"method\":\"ping\",\"params\":{\"p\":\"" +
               b"y" * (65 << 20) + b"\"}}\n")
    m = b.read()
    t.ok(m.get("id") is None and m.get("error", {}).get("code") == -32600 and "longer than" in m["error"]["message"],
         "a message over 64 MiB is skipped with -32600", m)
    t.eq(b.call("ping").get("result"), {}, "and the bridge goes on")
    b.close()


def test_cancel_mid_wait(t):
    b = bridge()
    marker = "cancelled-but-ran"
    rid = b.tool_request("exec_command", {"cmd": held(marker), "yield_time_ms": 30000})
    s = wait_until(lambda: session_running(w, marker))
    t.ok(s and s["state"] == "running", "the command runs", s)
    b.notify("notifications/cancelled", {"requestId": rid, "reason": "MCP request cancelled by caller"})
    t.eq(b.call("ping").get("result"), {}, "the cancelled call is not answered")
    release(marker)
    # The server's wait on the session has ended: a poll is not "busy".
    r = b.tool("write_stdin", {"session_id": s["id"], "yield_time_ms": 30000})
    t.ok(not r.get("isError") and r["structuredContent"].get("exit_code") == 0 and
         r["structuredContent"]["output"].endswith(marker + "\n"),
         "after cancellation the process kept running; a poll gets its output and exit", r)
    t.eq(b.call("ping").get("result"), {}, "no reply ever came for the cancelled call")
    b.notify("notifications/cancelled", {"requestId": 12345})
    t.eq(b.call("ping").get("result"), {}, "cancelling an unknown request is harmless")
    b.close()


def test_stdin_closes_mid_call(t):
    b = bridge()
    marker = "outlived-its-bridge"
    b.tool_request("exec_command", {"cmd": held(marker), "yield_time_ms": 30000})
    s = wait_until(lambda: session_running(w, marker))
    b.close_stdin()
    t.eq(b.wait(), 0, "stdin closing mid-call ends the bridge with status 0")
    with open(b.err_path) as f:
        err = f.read()
    t.ok("stdin closed: stopping; 1 call was still waiting" in err, "and it says a call was left waiting", err)
    release(marker)
    done = wait_until(lambda: [x for x in sessions(w) if x["id"] == s["id"] and x["state"] == "exited"])
    t.ok(done and done[0]["exit_code"] == 0, "the command ran to its end in the server", done)
    b.kill()


def test_sigterm_then_eof(t):
    b = bridge()
    marker = "survives-sigterm"
    b.tool_request("exec_command", {"cmd": held(marker), "yield_time_ms": 30000})
    s = wait_until(lambda: session_running(w, marker))
    b.p.send_signal(signal.SIGTERM)
    t.eq(b.wait(), 0, "SIGTERM (Codex sends it before closing stdin) ends the bridge with status 0")
    b.close_stdin()
    t.ok("SIGTERM: stopping" in b.stderr(), "saying why", b.stderr())
    release(marker)
    done = wait_until(lambda: [x for x in sessions(w) if x["id"] == s["id"] and x["state"] == "exited"])
    t.ok(done and done[0]["exit_code"] == 0, "the agent's process stays in the server and finishes", done)
    b.kill()


def test_yield_cap(t):
    b = bridge("--yield-cap", "5")
    r = b.tool("exec_command", {"cmd": "sleep 60", "yield_time_ms": 1000})
    sid = r["structuredContent"]["session_id"]
    # Codex lets an empty poll wait 300 s; this one answers within the cap
    # (the read's own bound is 30 s).
    r = b.tool("write_stdin", {"session_id": sid, "yield_time_ms": 300000})
    t.ok("session_id" in r.get("structuredContent", {}), "a poll never waits past --yield-cap", r)
    w.corral("kill", str(sid))
    b.close()
    bad = w.corral("mcp", "--yield-cap", "2")
    t.ok(bad.returncode == 2 and "--yield-cap wants seconds from 5 to 3600" in bad.stderr,
         "a cap below the 5 s an empty poll waits is refused", bad.stderr)


def test_identity(t):
    names = [({"name": "codex-mcp-client", "version": "0.171.0"}, (), "codex"),
             ({"name": "claude-code", "version": "2.0"}, (), "claude"),
             ({"name": "gemini-cli-mcp-client", "version": "0.61.0"}, (), "gemini"),
             ({"name": "inspector-cli", "version": "0.5.1"}, (), "inspector-cli"),
             ({"name": "codex-mcp-client"}, ("--name", "reviewer"), "reviewer")]
    for info, args, want in names:
        b = Bridge(w, args)
        b.initialize(client=info)
        tag = "who-am-i-%s" % want
        b.tool("exec_command", {"cmd": "echo %s" % tag})
        s = session_running(w, tag)
        t.eq(s and s["client"], want, "clientInfo %s %s: sessions belong to %s" % (info["name"], " ".join(args), want))
        t.ok(b.wait_stderr("serving %s through the corral server" % want), "stderr says whom it serves", b.stderr())
        b.close()


def test_two_bridges(t):
    a = Bridge(w)
    a.initialize(client={"name": "codex-mcp-client", "version": "0.171.0"})
    c = Bridge(w)
    c.initialize(client={"name": "claude-code", "version": "2.0"})
    ra = a.tool_request("exec_command", {"cmd": held("from-codex"), "yield_time_ms": 30000})
    rc = c.tool_request("exec_command", {"cmd": held("from-claude"), "yield_time_ms": 30000})
    both = wait_until(lambda: all((session_running(w, m) or {}).get("state") == "running"
                                  for m in ("from-codex", "from-claude")))
    t.ok(both, "two agents run commands at once")
    t.eq((session_running(w, "from-codex")["client"], session_running(w, "from-claude")["client"]),
         ("codex", "claude"), "corral ls --json keeps each one's sessions apart, by name")
    release("from-codex")
    release("from-claude")
    oa, oc = a.reply(ra)["result"], c.reply(rc)["result"]
    t.ok(oa["structuredContent"]["output"].endswith("from-codex\n") and
         oc["structuredContent"]["output"].endswith("from-claude\n"), "and each gets its own output", (oa, oc))
    a.close()
    c.close()


def test_concurrent_calls(t):
    b = bridge()
    slow = b.tool_request("exec_command", {"cmd": held("slow"), "yield_time_ms": 30000})
    fast = b.tool_request("exec_command", {"cmd": "echo fast"})
    first = b.read()
    t.eq(first.get("id"), fast, "calls on one bridge run concurrently: the fast one answers first")
    release("slow")
    t.ok(b.reply(slow)["result"]["structuredContent"]["output"].endswith("slow\n"), "then the slow one")
    b.close()


def test_print_config(t):
    exe = os.path.realpath(CORRAL)
    r = w.corral("mcp", "--print-config", "codex")
    t.eq(r.returncode, 0, "--print-config codex", r.stderr)
    conf = tomllib.loads(r.stdout)["mcp_servers"]["corral"]
    t.eq((conf["command"], conf["args"]), (exe, ["mcp"]), "registers this corral by its absolute path")
    t.eq(conf.get("default_tools_approval_mode"), "approve", "corral's gate asks, not Codex")
    t.ok(conf.get("tool_timeout_sec", 0) > 50, "with a tool timeout above the yield cap", conf)
    t.eq(conf.get("env", {}).get("XDG_RUNTIME_DIR"), w.runtime,
         "and the environment that finds this user's server (Codex filters it)", conf)
    t.ok("shell_tool = false" in r.stdout, "and says how to turn Codex's own shell off", r.stdout)
    sub = os.path.join(w.ws, "sub")
    os.makedirs(sub, exist_ok=True)
    r = subprocess.run([CORRAL, "mcp", "--name", "x y", "-C", "sub", "--yield-cap", "700", "--print-config",
                        "codex"], capture_output=True, text=True, env=w.env, cwd=w.ws)
    conf = tomllib.loads(r.stdout)["mcp_servers"]["corral"]
    t.eq(conf["args"], ["mcp", "--name", "x y", "-C", os.path.realpath(sub), "--yield-cap", "700"],
         "with the bridge's options, -C made absolute")
    t.eq(conf["tool_timeout_sec"], 86400,
         "a timeout of a day: with no [approvals] timeout a call waits as long as the person takes")
    r = w.corral("mcp", "--print-config", "claude")
    line = [x for x in r.stdout.splitlines() if x.startswith("claude mcp add")]
    words = shlex.split(line[0]) if line else []
    t.ok(words[-3:] == ["--", exe, "mcp"], "--print-config claude: a claude mcp add line", r.stdout)
    t.ok("XDG_RUNTIME_DIR=" + w.runtime in words and words.index("corral") < words.index("-e"),
         "passing the environment that finds this server, after the server's name (-e takes several words)",
         words)
    t.ok('"allow": ["mcp__corral"]' in r.stdout and "--allowedTools mcp__corral" in r.stdout,
         "with the permission entry that lets corral's tools run without Claude Code asking again", r.stdout)
    t.ok("MCP_TOOL_TIMEOUT=" not in r.stdout,
         "and no MCP_TOOL_TIMEOUT, which would shorten Claude Code's own 27.8 h limit", r.stdout)
    r = w.corral("mcp", "--print-config", "json")
    j = json.loads(r.stdout)["mcpServers"]["corral"]
    t.eq((j["command"], j["args"], j["env"]["XDG_RUNTIME_DIR"]), (exe, ["mcp"], w.runtime),
         "--print-config json: an mcpServers entry")
    r = w.corral("mcp", "--print-config", "gemini")
    g = json.loads(r.stdout)["mcpServers"]["corral"]
    t.ok(g["command"] == exe and g["env"]["XDG_RUNTIME_DIR"] == w.runtime and g["trust"] is True and
         g["timeout"] == 86400 * 1000, "--print-config gemini: settings.json's entry, trusted, a day's timeout", g)
    conf_dir = os.path.join(w.base, "conf-approval-timeout")
    os.makedirs(os.path.join(conf_dir, "corral"), exist_ok=True)
    with open(os.path.join(conf_dir, "corral", "config"), "w") as f:
        f.write("[approvals]\ntimeout = 20m\n")
    r = subprocess.run([CORRAL, "mcp", "--print-config", "gemini"], capture_output=True, text=True,
                       env=dict(w.env, XDG_CONFIG_HOME=conf_dir), cwd=w.ws)
    g = json.loads(r.stdout)["mcpServers"]["corral"]
    t.eq(g["timeout"], (20 * 60 + 60) * 1000, "above [approvals] timeout when the config sets one")
    t.eq(g["env"].get("XDG_CONFIG_HOME"), conf_dir, "and the config's directory goes with it")
    r = w.corral("mcp", "--print-config", "vim")
    t.ok(r.returncode == 2 and "codex, claude, gemini or json" in r.stderr, "an unknown client is a usage error",
         r.stderr)


def test_no_server(t):
    """A bridge whose server cannot be reached answers calls with the reason,
    and a server that appears later serves the next call."""
    other = World()
    b = Bridge(other)
    b.initialize()
    r = b.tool("exec_command", {"cmd": "echo late"})
    t.ok(r.get("structuredContent", {}).get("output", "").endswith("late\n"), "a bridge starts the server when "
         "none runs", r)
    t.ok(os.path.exists(other.socket_path), "(its socket is there now)")
    b.close()
    other.cleanup()


def servers_of(world):
    """pids of the corral servers running for world (by their environment)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if b"server" in argv[1:3] and ("XDG_RUNTIME_DIR=" + world.runtime).encode() in env:
            found.append(int(pid))
    return found


def server_starts(world):
    """How many servers the clients started (the log of servers they start):
    those that listened, and those that found another holding the lock."""
    try:
        with open(os.path.join(world.state, "corral", "server.log")) as f:
            text = f.read()
    except OSError:
        return 0, 0
    return text.count("listening on"), text.count("already running")


def test_one_server_for_all(t):
    """20 verbs and 5 bridges started at the same instant with no server:
    one server starts (the others wait for it), and every one is answered."""
    other = World()
    verbs = [subprocess.Popen([CORRAL, "ls", "--json"], env=other.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(20)]
    bridges = [Bridge(other) for _ in range(5)]
    calls = []
    for i, b in enumerate(bridges):
        b.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "race"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "exec_command", "arguments": {"cmd": "echo race-%d" % i, "yield_time_ms": 30000}}})))
    answered = 0
    for p in verbs:
        out, err = p.communicate(timeout=TIMEOUT)
        try:
            answered += p.returncode == 0 and "sessions" in json.loads(out)
        except ValueError:
            t.diag("corral ls: %r %r" % (out[-300:], err[-300:]))
    t.eq(answered, 20, "every one of 20 verbs started at once with no server is answered")
    outs, replies = [], []
    for i, b in enumerate(bridges):
        b.reply(1)
        replies.append(b.reply(2))
        outs.append(replies[-1].get("result", {}).get("structuredContent", {}).get("output", ""))
        b.close()
    t.ok(outs == ["race-%d\n" % i for i in range(5)], "and every call of 5 bridges started with them", replies)
    t.eq((len(servers_of(other)), server_starts(other)), (1, (1, 0)),
         "by one server: no other was started, not even one that found it running and gave up", servers_of(other))
    other.cleanup()

    # A verb right after a server was started by hand, once it holds its
    # lock (before that, the server the verb would start races it for the
    # lock, and on a loaded machine either may win): the verb uses that
    # server, listening yet or not, rather than starting a second.
    other = World()
    log = open(os.path.join(other.base, "server.log"), "ab")
    by_hand = subprocess.Popen([CORRAL, "server", "--foreground"], env=other.env, stdin=subprocess.DEVNULL,
                               stdout=log, stderr=log)
    lock = os.path.join(other.runtime, "corral", "default.lock")

    def holds_lock():
        try:
            with open(lock) as f:
                return f.read().strip() == str(by_hand.pid)
        except OSError:
            return False
    t.ok(wait_until(holds_lock, timeout=TIMEOUT), "the server started by hand takes its lock")
    r = other.corral("ls", "--json")
    t.ok(r.returncode == 0 and servers_of(other) == [by_hand.pid],
         "a verb run right after corral server --foreground & uses that server",
         (r.returncode, r.stdout[-500:], r.stderr, by_hand.pid, servers_of(other)))
    by_hand.terminate()
    by_hand.wait(TIMEOUT)
    log.close()
    other.cleanup()


def test_server_goes_away(t):
    other = World()
    other.start_server()
    b = Bridge(other)
    b.initialize()
    rid = b.tool_request("exec_command", {"cmd": "sleep 30", "yield_time_ms": 30000})
    wait_until(lambda: session_running(other, "sleep 30"))
    other.server.kill()  # no goodbye: the connection just closes
    other.server.wait()
    res = b.reply(rid).get("result", {})
    t.ok(res.get("isError") is True and "the call was lost" in text_of(res) and "closed the connection" in
         text_of(res), "a call whose server dies returns a tool error saying so", res)
    r = b.tool("exec_command", {"cmd": "echo back-again"})
    t.ok(r.get("structuredContent", {}).get("output", "").endswith("back-again\n"),
         "the next call reaches a server again (one is started)", r)
    b.close()
    other.cleanup()


run_tests(Tap(), [test_initialize, test_stateless_revision, test_answers_before_the_server, test_tools_list,
                  test_progress_while_running, test_exec_poll_write, test_workdir_does_not_widen,
                  test_bad_arguments, test_jsonrpc_errors,
                  test_two_mib, test_cancel_mid_wait, test_stdin_closes_mid_call, test_sigterm_then_eof,
                  test_yield_cap, test_identity, test_two_bridges, test_concurrent_calls, test_print_config,
                  test_no_server, test_one_server_for_all, test_server_goes_away])
