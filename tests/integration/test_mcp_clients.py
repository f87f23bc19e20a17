#!/usr/bin/env python3
"""`corral mcp` driven by real MCP clients, installed from npm (pinned
versions) into a scratch folder outside the repository:

- the MCP Inspector's CLI lists the tools and calls exec_command;
- the Codex CLI, in `codex exec` mode, registered with the snippet of
  `corral mcp --print-config codex`, talks to a small local stand-in for its
  model API (below): the stand-in streams a response asking for one
  exec_command call through corral, then reads the tool output Codex sends
  back.  The command must have run in a corral session and its output must
  have reached the stand-in.  The tools Codex offers the model through
  corral are compared with Codex's own built-in exec_command and
  write_stdin: they must be identical.

The install is cached between runs, keyed by the pinned versions:
$CORRAL_TEST_CLIENTS_DIR, else $XDG_CACHE_HOME/corral-tests (else
~/.cache/corral-tests).  A cold run installs about 570 MB (Codex's native
binary is most of it) in 15-30 s here; a warm run of this file takes about 5 s.  When the npm registry
cannot be reached the tests are reported as skipped, never as passed."""
import fcntl
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import threading
import time

from harness import CORRAL, Tap, World, run_tests
from mcplib import session_running

CODEX_VERSION = "0.171.0"
INSPECTOR_VERSION = "0.15.0"
PACKAGES = ["@openai/codex@" + CODEX_VERSION, "@modelcontextprotocol/inspector@" + INSPECTOR_VERSION]
KEY = "codex-%s+inspector-%s" % (CODEX_VERSION, INSPECTOR_VERSION)
INSTALL_TIMEOUT = 1200
CLIENT_TIMEOUT = 180

w = World()
w.start_server()


def cache_root():
    if os.environ.get("CORRAL_TEST_CLIENTS_DIR"):
        return os.environ["CORRAL_TEST_CLIENTS_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "corral-tests")


class Install:
    """The scratch install: dir (with node_modules) when ready; else skip
    (a reason: the registry cannot be reached) or error (it can, and the
    install failed: a failure)."""

    def __init__(self):
        self.dir = self.skip = self.error = None
        self.note = ""
        root = cache_root()
        final = os.path.join(root, KEY)
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
            r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--save-exact"] + PACKAGES, cwd=tmp,
                               capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.error = "npm install did not finish in %d s" % INSTALL_TIMEOUT
            return
        if r.returncode != 0:
            self.error = "npm install %s failed:\n%s" % (" ".join(PACKAGES), r.stderr[-3000:])
            return
        open(os.path.join(tmp, ".complete"), "w").close()
        os.rename(tmp, final)
        self.note = "installed %s into %s in %.0f s" % (" ".join(PACKAGES), final, time.monotonic() - start)

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


clients = Install()


def tools_list():
    """What corral mcp itself answers to tools/list."""
    r = subprocess.run([CORRAL, "mcp"], input=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
                       capture_output=True, env=w.env, cwd=w.ws, timeout=60)
    return {x["name"]: x for x in json.loads(r.stdout)["result"]["tools"]}


def test_inspector(t):
    if not clients.check(t, "the MCP Inspector %s lists corral's tools and calls exec_command" % INSPECTOR_VERSION):
        return
    if clients.note:
        t.diag(clients.note)
    inspector = [clients.bin("mcp-inspector"), "--cli", CORRAL, "mcp"]
    r = subprocess.run(inspector + ["--method", "tools/list"], capture_output=True, text=True, env=w.env,
                       cwd=w.ws, timeout=CLIENT_TIMEOUT)
    t.eq(r.returncode, 0, "mcp-inspector --cli corral mcp --method tools/list", r.stderr[-2000:])
    try:
        listed = {x["name"]: x for x in json.loads(r.stdout)["tools"]}
    except (ValueError, KeyError):
        listed = {}
    ours = tools_list()
    t.eq(sorted(listed), ["exec_command", "write_stdin"], "it sees exec_command and write_stdin", r.stdout[-2000:])
    t.ok(listed and all(listed[n]["inputSchema"] == ours[n]["inputSchema"] and
                        listed[n]["outputSchema"] == ours[n]["outputSchema"] for n in ours),
         "with their schemas intact")
    r = subprocess.run(inspector + ["--method", "tools/call", "--tool-name", "exec_command",
                                    "--tool-arg", "cmd=echo inspector-$((6*7))", "--tool-arg", "yield_time_ms=20000"],
                       capture_output=True, text=True, env=w.env, cwd=w.ws, timeout=CLIENT_TIMEOUT)
    t.eq(r.returncode, 0, "mcp-inspector --method tools/call --tool-name exec_command", r.stderr[-2000:])
    try:
        res = json.loads(r.stdout)
    except ValueError:
        res = {}
    sc = res.get("structuredContent", {})
    t.ok(sc.get("exit_code") == 0 and sc.get("output", "").endswith("inspector-42\n") and
         "Process exited with code 0" in res["content"][0]["text"], "the command ran and its result came back",
         r.stdout[-2000:])
    s = session_running(w, "inspector-$((6*7))")
    t.ok(s and s["client"] == "inspector-cli", "in a corral session of the client named inspector-cli", s)
    r = subprocess.run(inspector + ["--method", "tools/call", "--tool-name", "nosuch"], capture_output=True,
                       text=True, env=w.env, cwd=w.ws, timeout=CLIENT_TIMEOUT)
    t.ok(r.returncode == 1 and "-32602" in r.stdout + r.stderr and "unknown tool: nosuch" in r.stdout + r.stderr,
         "an unknown tool is the client's -32602 error", r.stdout + r.stderr)


class StandIn:
    """A local stand-in for the model API Codex talks to (its Responses API,
    streamed as server-sent events): the first request of a turn gets a
    function_call of corral's exec_command; the request that carries the
    tool's output gets a final message.  Every request body is kept."""

    def __init__(self, command):
        self.command = command
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, ctype, body):
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # model lists and the like: nothing to offer
                self.reply(200, "application/json", b'{"data":[],"models":[]}')

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                try:
                    req = json.loads(body or b"{}")
                except ValueError:
                    req = {}
                outer.requests.append(req)
                answered = any(i.get("type") == "function_call_output" for i in req.get("input", []))
                rid = "resp_%d" % len(outer.requests)
                events = [{"type": "response.created", "response": {"id": rid}}]
                if answered:
                    events.append({"type": "response.output_item.done", "item": {
                        "type": "message", "role": "assistant", "id": "msg_1",
                        "content": [{"type": "output_text", "text": "done"}]}})
                else:
                    events.append({"type": "response.output_item.done", "item": {
                        "type": "function_call", "call_id": "call_1", "namespace": "mcp__corral",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": outer.command, "yield_time_ms": 10000})}})
                events.append({"type": "response.completed", "response": {"id": rid, "usage": {
                    "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                    "output_tokens_details": None, "total_tokens": 2}}})
                sse = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
                self.reply(200, "text/event-stream", sse.encode())

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def run_codex(standin, extra_args=(), shell_off=True):
    """codex exec against the stand-in, corral registered as --print-config
    codex says; returns (the process, the JSONL events)."""
    home = os.path.join(w.base, "codex-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    snippet = w.corral("mcp", "--print-config", "codex")
    config = ('model = "mock-model"\nmodel_provider = "standin"\n'
              '[model_providers.standin]\nname = "standin"\nbase_url = "http://127.0.0.1:%d/v1"\n'
              'wire_api = "responses"\n\n' % standin.port) + snippet.stdout
    # Codex filters its servers' environment: the sanitizers' settings
    # (make check-sanitizers) must reach corral mcp too.
    passed = [n for n in ("ASAN_OPTIONS", "UBSAN_OPTIONS") if n in w.env]
    if passed:
        config += "env_vars = %s\n" % json.dumps(passed)
    if shell_off:  # as the README says: every command through corral
        config += "\n[features]\nshell_tool = false\n"
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(config)
    env = dict(w.env, CODEX_HOME=home, HOME=home)
    env.pop("OPENAI_API_KEY", None)
    r = subprocess.run([clients.bin("codex"), "exec", "--json", "--skip-git-repo-check", "-C", w.ws] +
                       list(extra_args) + ["run the command"], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, env=env, timeout=CLIENT_TIMEOUT)
    events = []
    for line in r.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    return r, events


def offered_tools(request):
    """Codex's own function tools and corral's (in namespace mcp__corral)
    as it offered them to the model."""
    own, ours = {}, {}
    for tool in request.get("tools", []):
        if tool.get("type") == "function":
            own[tool["name"]] = tool
        elif tool.get("type") == "namespace" and tool.get("name") == "mcp__corral":
            ours = {x["name"]: x for x in tool.get("tools", [])}
    return own, ours


def test_codex(t):
    if not clients.check(t, "Codex CLI %s runs a command through corral mcp" % CODEX_VERSION):
        return
    standin = StandIn("echo codex-marker-$((6*7))")
    r, events = run_codex(standin)
    standin.close()
    t.eq(r.returncode, 0, "codex exec --json finishes (exit 0)", (r.stderr[-3000:], r.stdout[-3000:]))
    calls = [e["item"] for e in events if e.get("type") == "item.completed" and
             e.get("item", {}).get("type") == "mcp_tool_call"]
    t.ok(calls and calls[0]["server"] == "corral" and calls[0]["tool"] == "exec_command" and
         calls[0]["status"] == "completed", "Codex called corral's exec_command", calls or r.stdout[-3000:])
    s = session_running(w, "codex-marker-$((6*7))")
    t.ok(s and s["client"] == "codex" and s["kind"] == "exec" and s.get("exit_code") == 0,
         "the command ran in a corral session of the client codex", s)
    t.eq(len(standin.requests), 2, "the stand-in was asked twice: the turn, then with the tool's output",
         [list(x) for x in standin.requests])
    outputs = [i for req in standin.requests for i in req.get("input", []) if i.get("type") == "function_call_output"]
    t.ok(outputs and outputs[0].get("call_id") == "call_1" and "codex-marker-42" in json.dumps(outputs[0]),
         "the command's output reached the model stand-in", outputs)
    own, ours = offered_tools(standin.requests[0]) if standin.requests else ({}, {})
    t.eq(sorted(ours), ["exec_command", "write_stdin"], "Codex offers the model corral's two tools")
    t.ok(not own.keys() & {"exec_command", "write_stdin", "shell", "shell_command"},
         "and with shell_tool = false (as the README says) no command tool of its own", sorted(own))
    listed = tools_list()
    t.ok(ours and all(ours[n]["parameters"] == listed[n]["inputSchema"] for n in listed),
         "corral's schemas reach the model unchanged")

    # Codex's own tools, with approvals of more permissions on, as it shows
    # them to the model: corral's must be the same, word for word.
    standin = StandIn("echo codex-again")
    r, events = run_codex(standin, ["--enable", "exec_permission_approvals"], shell_off=False)
    standin.close()
    own, ours = offered_tools(standin.requests[0]) if standin.requests else ({}, {})
    for name in ("exec_command", "write_stdin"):
        t.ok(name in own and name in ours and own[name]["parameters"] == ours[name]["parameters"] and
             own[name]["description"] == ours[name]["description"],
             "corral's %s is Codex %s's own (description and input schema)" % (name, CODEX_VERSION),
             json.dumps({"codex": own.get(name), "corral": ours.get(name)}, indent=1)[:4000])


run_tests(Tap(), [test_inspector, test_codex])
