"""An MCP client for `corral mcp` over its real stdin and stdout pipes, used
by tests/integration/test_mcp*.py and tests/bench/bench_mcp.py.

Every wait is for a message (a reply, a notification, a line on stderr or
the process ending), bounded by harness.TIMEOUT."""
import atexit
import json
import os
import select
import signal
import subprocess
import time

from harness import CORRAL, TIMEOUT, wait_until

CODEX_INFO = {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"}


class Bridge:
    """One `corral mcp` process and its pipes."""

    def __init__(self, world, args=(), cwd=None, env=None):
        self.world = world
        e = dict(world.env)
        if env:
            e.update(env)
        self.err_path = os.path.join(world.base, "mcp-stderr-%d-%d.log" % (os.getpid(), id(self)))
        self.err_file = open(self.err_path, "wb")
        self.p = subprocess.Popen([CORRAL, "mcp"] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err_file, env=e, cwd=cwd or world.ws)
        self.buf = b""
        self.next_id = 1
        self.notifications = []
        atexit.register(self.kill)

    # ---- writing ----
    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def request(self, method, params=None, rid=None):
        """Send a request; returns its id."""
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # ---- reading ----
    def read(self, timeout=TIMEOUT):
        """The next message on stdout; EOFError when the bridge closed it,
        TimeoutError when none came in time."""
        end = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from corral mcp within %ss" % timeout)
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError("corral mcp closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def reply(self, rid, timeout=TIMEOUT):
        """The response with id rid; notifications before it are kept."""
        while True:
            m = self.read(timeout)
            if "id" in m and m["id"] == rid and "method" not in m:
                return m
            if "method" in m:
                self.notifications.append(m)
                continue
            raise AssertionError("unexpected message while waiting for id %r: %r" % (rid, m))

    def call(self, method, params=None, timeout=TIMEOUT):
        return self.reply(self.request(method, params), timeout)

    def notification(self, method, timeout=TIMEOUT):
        """The next notification of this method (kept ones first)."""
        for i, n in enumerate(self.notifications):
            if n["method"] == method:
                return self.notifications.pop(i)
        while True:
            m = self.read(timeout)
            if m.get("method") == method:
                return m
            if "method" in m:
                self.notifications.append(m)
                continue
            raise AssertionError("unexpected message while waiting for %s: %r" % (method, m))

    # ---- MCP ----
    def initialize(self, version="2025-06-18", client=CODEX_INFO):
        params = {"protocolVersion": version, "capabilities": {}}
        if client is not None:
            params["clientInfo"] = client
        r = self.call("initialize", params)
        self.notify("notifications/initialized")
        return r

    def tool_request(self, name, arguments, token=None):
        params = {"name": name, "arguments": arguments}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        return self.request("tools/call", params)

    def tool(self, name, arguments, token=None, timeout=TIMEOUT):
        """The result of a tools/call (the "result" object), or the whole
        message when it is a JSON-RPC error."""
        m = self.reply(self.tool_request(name, arguments, token), timeout)
        return m.get("result", m)

    # ---- the process ----
    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_stderr(self, text, timeout=TIMEOUT):
        return wait_until(lambda: text in self.stderr(), timeout)

    def close_stdin(self):
        self.p.stdin.close()

    def wait(self, timeout=TIMEOUT):
        return self.p.wait(timeout)

    def kill(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
            self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except (OSError, ValueError):
                pass
        self.err_file.close()

    def close(self):
        """End it as the Inspector does: close stdin, wait for the exit."""
        if self.p.poll() is None:
            try:
                self.close_stdin()
            except (OSError, ValueError):
                pass
            try:
                self.p.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        return self.p.returncode


def sessions(world):
    """The store, as `corral ls --json` shows it."""
    r = world.corral("ls", "--json")
    if r.returncode != 0:
        raise RuntimeError("corral ls failed: " + r.stderr)
    return json.loads(r.stdout)["sessions"]


def session_running(world, command_part):
    """The session whose command contains command_part, or None."""
    for s in sessions(world):
        if any(command_part in word for word in s["command"]):
            return s
    return None
