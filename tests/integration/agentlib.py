"""What the tests that run real agents share (test_mcp_clients.py, corral
mcp driven by them; test_agents_inside.py, the agents inside a session):
the pinned versions, their install from npm into a cache outside the
repository, and the local stand-ins for each agent's model API.

The install is cached between runs, keyed by the pinned versions:
$CORRAL_TEST_CLIENTS_DIR, else $XDG_CACHE_HOME/corral-tests (else
~/.cache/corral-tests).  When the npm registry cannot be reached the tests
are reported as skipped, never as passed."""
import fcntl
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import threading
import time

CODEX_VERSION = "0.171.0"
INSPECTOR_VERSION = "0.15.0"
PACKAGES = ["@openai/codex@" + CODEX_VERSION, "@modelcontextprotocol/inspector@" + INSPECTOR_VERSION]
KEY = "codex-%s+inspector-%s" % (CODEX_VERSION, INSPECTOR_VERSION)
CLAUDE_VERSION = "2.1.332"
GEMINI_VERSION = "0.61.0"
AGENT_PACKAGES = ["@anthropic-ai/claude-code@" + CLAUDE_VERSION, "@google/gemini-cli@" + GEMINI_VERSION]
AGENT_KEY = "claude-code-%s+gemini-cli-%s" % (CLAUDE_VERSION, GEMINI_VERSION)
INSTALL_TIMEOUT = 1200
CLIENT_TIMEOUT = 180


def cache_root():
    if os.environ.get("CORRAL_TEST_CLIENTS_DIR"):
        return os.environ["CORRAL_TEST_CLIENTS_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "corral-tests")


class Install:
    """The scratch install: dir (with node_modules) when ready; else skip
    (a reason: the registry cannot be reached) or error (it can, and the
    install failed: a failure)."""

    def __init__(self, key, packages):
        self.dir = self.skip = self.error = None
        self.note = ""
        self.packages = packages
        root = cache_root()
        final = os.path.join(root, key)
        try:
            os.makedirs(root, exist_ok=True)
        except OSError as e:
            self.error = "cannot create the cache folder %s: %s" % (root, e)
            return
        # One install at a time (make check and make check-sanitizers may
        # run at once).
        with open(final + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(os.path.join(final, ".complete")):
                self.install(root, final)
            if os.path.exists(os.path.join(final, ".complete")):
                self.dir = final

    def install(self, root, final):
        npm = shutil.which("npm")
        if not npm:
            self.skip = "npm is not installed"
            return
        try:
            ping = subprocess.run([npm, "ping", "--fetch-retries=0", "--fetch-timeout=20000"], capture_output=True,
                                  text=True, timeout=60)
        except subprocess.TimeoutExpired:
            self.skip = "the npm registry did not answer within 60 s"
            return
        if ping.returncode != 0:
            errors = [x for x in ping.stderr.splitlines() if x.startswith("npm error") and "complete log" not in x]
            self.skip = "the npm registry cannot be reached: " + (errors or ["npm ping failed"])[0]
            return
        tmp = "%s.tmp-%d" % (final, os.getpid())
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        os.makedirs(tmp)
        # Its own package.json, so npm installs here and not in a parent.
        with open(os.path.join(tmp, "package.json"), "w") as f:
            json.dump({"name": "corral-test-clients", "private": True,
                       "description": "MCP clients for corral's tests (tests/integration/test_mcp_clients.py)"}, f)
        start = time.monotonic()
        try:
            r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--save-exact"] + self.packages, cwd=tmp,
                               capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.error = "npm install did not finish in %d s" % INSTALL_TIMEOUT
            return
        if r.returncode != 0:
            self.error = "npm install %s failed:\n%s" % (" ".join(self.packages), r.stderr[-3000:])
            return
        open(os.path.join(tmp, ".complete"), "w").close()
        os.rename(tmp, final)
        self.note = "installed %s into %s in %.0f s" % (" ".join(self.packages), final, time.monotonic() - start)

    def bin(self, name):
        return os.path.join(self.dir, "node_modules", ".bin", name)

    def check(self, t, what):
        """True when the clients are there; otherwise reports what as a
        skip or a failure."""
        if self.dir:
            return True
        if self.skip:
            t.skip(what, self.skip)
        else:
            t.ok(False, what, self.error)
        return False



class ModelAPI:
    """A local stand-in for an agent's model API: a threaded HTTP server
    that keeps every request (keep(path, body): path and JSON body) and
    answers with what answer(path, body) returns (content type, bytes)."""

    GET_BODY = b"{}"  # what a GET (a model list and the like) is answered

    def __init__(self):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, ctype, body):
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.reply("application/json", outer.GET_BODY)

            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("content-length", "0")))
                try:
                    body = json.loads(data or b"{}")
                except ValueError:
                    body = {}
                outer.keep(self.path, body)
                self.reply(*outer.answer(self.path, body))

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def keep(self, path, body):
        self.requests.append((path, body))

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class StandIn(ModelAPI):
    """A local stand-in for the model API Codex talks to (its Responses API,
    streamed as server-sent events): each request of a turn gets a
    function_call of corral's exec_command (builtin: of the command tool
    Codex offers of its own) for the next of the commands (one, or a list)
    until each has its output; then a final message, final.  Every request
    body is kept."""

    GET_BODY = b'{"data":[],"models":[]}'  # model lists: nothing to offer

    def __init__(self, command, builtin=False, final="done"):
        self.commands = command if isinstance(command, list) else [command]
        self.builtin = builtin
        self.final = final
        super().__init__()

    def keep(self, path, body):
        self.requests.append(body)

    def answer(self, path, req):
        answered = sum(i.get("type") == "function_call_output" for i in req.get("input", []))
        rid = "resp_%d" % len(self.requests)
        events = [{"type": "response.created", "response": {"id": rid}}]
        if answered >= len(self.commands):
            events.append({"type": "response.output_item.done", "item": {
                "type": "message", "role": "assistant", "id": "msg_1",
                "content": [{"type": "output_text", "text": self.final}]}})
        else:
            item = {"type": "function_call", "call_id": "call_%d" % (answered + 1)}
            item.update(self.call(req, self.commands[answered]))
            events.append({"type": "response.output_item.done", "item": item})
        events.append({"type": "response.completed", "response": {"id": rid, "usage": {
            "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
            "output_tokens_details": None, "total_tokens": 2}}})
        sse = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        return "text/event-stream", sse.encode()

    def call(self, req, command):
        """The function_call's name, namespace and arguments for command."""
        if not self.builtin:
            return {"namespace": "mcp__corral", "name": "exec_command",
                    "arguments": json.dumps({"cmd": command, "yield_time_ms": 10000})}
        own = [t.get("name") for t in req.get("tools", []) if t.get("type") == "function"]
        if "exec_command" in own:
            return {"name": "exec_command", "arguments": json.dumps({"cmd": command, "yield_time_ms": 10000})}
        if "shell_command" in own:
            return {"name": "shell_command", "arguments": json.dumps({"command": command})}
        return {"name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", command]})}


class AnthropicAPI(ModelAPI):
    """The Messages API as Claude Code streams it (server-sent events).  Its
    MCP tools are deferred: the model first loads them with ToolSearch,
    then calls corral's exec_command (or tool, such as Claude Code's own
    Bash) with args (or each of a list of them in turn); when the result
    names a session still running, it calls on_poll() and polls it with
    write_stdin; then it ends the turn with the text final."""

    def __init__(self, args, on_poll=None, tool="mcp__corral__exec_command", final="done"):
        self.calls = args if isinstance(args, list) else [args]
        self.on_poll = on_poll
        self.tool = tool
        self.final = final
        super().__init__()

    def running_session(self, req):
        """The session_id of the last tool result (Claude Code passes
        structuredContent, as JSON text), or None."""
        for m in reversed(req.get("messages", [])):
            for c in m.get("content", []) if isinstance(m.get("content"), list) else []:
                if c.get("type") == "tool_result":
                    try:
                        return json.loads(c.get("content")).get("session_id")
                    except (TypeError, ValueError, AttributeError):
                        return None
        return None

    def answer(self, path, req):
        tools = [t.get("name") for t in req.get("tools", [])]
        used = [c.get("name") for m in req.get("messages", []) if m.get("role") == "assistant" and
                isinstance(m.get("content"), list) for c in m["content"] if c.get("type") == "tool_use"]
        n = len(self.requests)
        sid = self.running_session(req)
        if self.tool in tools and used.count(self.tool) < len(self.calls):
            call = (self.tool, self.calls[used.count(self.tool)])
        elif self.tool.startswith("mcp__") and "ToolSearch" in tools and "ToolSearch" not in used:
            call = ("ToolSearch", {"query": "select:mcp__corral__exec_command,mcp__corral__write_stdin"})
        elif self.on_poll and sid is not None and used.count("mcp__corral__write_stdin") < 5:
            self.on_poll()
            call = ("mcp__corral__write_stdin", {"session_id": sid, "yield_time_ms": 30000})
        else:
            call = None
        events = [{"type": "message_start", "message": {
            "id": "msg_%d" % n, "type": "message", "role": "assistant", "model": req.get("model", "m"), "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}]
        if call:
            block = {"type": "tool_use", "id": "toolu_%d" % n, "name": call[0], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call[1])}
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": self.final}
        events += [{"type": "content_block_start", "index": 0, "content_block": block},
                   {"type": "content_block_delta", "index": 0, "delta": delta},
                   {"type": "content_block_stop", "index": 0},
                   {"type": "message_delta", "delta": {"stop_reason": "tool_use" if call else "end_turn",
                                                       "stop_sequence": None}, "usage": {"output_tokens": 1}},
                   {"type": "message_stop"}]
        sse = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        return "text/event-stream", sse.encode()

    def bodies(self):
        return [b for p, b in self.requests if p.startswith("/v1/messages")]

    def tool_results(self):
        """The text of every tool_result the model was sent."""
        out = []
        for body in self.bodies():
            for m in body.get("messages", []):
                for c in m.get("content", []) if isinstance(m.get("content"), list) else []:
                    if c.get("type") == "tool_result":
                        out.append(json.dumps(c.get("content")))
        return out


class GeminiAPI(ModelAPI):
    """The Gemini API as Gemini CLI calls it (streamGenerateContent, server-
    sent events): a call of corral's exec_command (or tool, such as Gemini
    CLI's own run_shell_command) with args (or each of a list of them in
    turn); when the result names a session still running, on_poll() and a
    write_stdin poll of it; then the answer final."""

    def __init__(self, args, on_poll=None, tool="mcp_corral_exec_command", final="done"):
        self.calls = args if isinstance(args, list) else [args]
        self.on_poll = on_poll
        self.tool = tool
        self.final = final
        super().__init__()

    def answer(self, path, req):
        names = [d.get("name") for t in req.get("tools", []) for d in t.get("functionDeclarations", [])]
        calls = [p["functionCall"].get("name") for c in req.get("contents", []) for p in c.get("parts", [])
                 if "functionCall" in p]
        responses = [json.dumps(p["functionResponse"]) for c in req.get("contents", []) for p in c.get("parts", [])
                     if "functionResponse" in p]
        # Gemini CLI passes the text: Codex's envelope names a running session.
        running = re.search(r"Process running with session ID (\d+)", responses[-1]) if responses else None
        if self.tool in names and calls.count(self.tool) < len(self.calls):
            parts = [{"functionCall": {"name": self.tool, "args": self.calls[calls.count(self.tool)]}}]
        elif self.on_poll and running and calls.count("mcp_corral_write_stdin") < 5:
            self.on_poll()
            parts = [{"functionCall": {"name": "mcp_corral_write_stdin",
                                       "args": {"session_id": int(running.group(1)), "yield_time_ms": 30000}}}]
        else:
            parts = [{"text": self.final}]
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
        if "alt=sse" in path:
            return "text/event-stream", ("data: %s\r\n\r\n" % json.dumps(chunk)).encode()
        return "application/json", json.dumps(chunk).encode()

    def tool_bodies(self):
        return [b for p, b in self.requests if "streamGenerateContent" in p]

    def function_responses(self):
        return [json.dumps(p["functionResponse"]) for b in self.tool_bodies() for c in b.get("contents", [])
                for p in c.get("parts", []) if "functionResponse" in p]
