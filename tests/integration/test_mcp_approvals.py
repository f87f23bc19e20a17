#!/usr/bin/env python3
"""Approvals through `corral mcp`: an escalation an agent asks for waits for
a person (the bridge names it on stderr and in notifications/progress, again
while it waits), `corral approve` runs it without the sandbox, `corral deny
--note` returns a tool error with the note, a cancelled call withdraws its
question, --approval-policy never refuses at once, additional permissions
become a wider sandbox, and a host a command asks the proxy for waits in
the same queue (denied: the command is told; approved: it gets through)."""
import atexit
import json
import os
import re
import shutil
import tempfile

from harness import TIMEOUT, Tap, World, run_tests, wait_until
from mcplib import Bridge, session_running
import proxyservers as ps

w = World()
w.start_server()
OUTSIDE = os.path.join(w.base, "outside")
os.makedirs(OUTSIDE)
# Seen read-only from a sandbox (not its private /tmp, not the workspace).
HOST_DIR = tempfile.mkdtemp(prefix="corral-mcp-host-", dir="/var/tmp")
atexit.register(shutil.rmtree, HOST_DIR, True)


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []))


def pending():
    return json.loads(w.corral("approvals", "--json").stdout)


def request_of(progress):
    """The request number a progress message names."""
    m = re.search(r"approve request (\d+)", progress["params"]["message"])
    return int(m.group(1)) if m else None


def asked(b):
    """The next progress that names a request for a person; the beats of a
    call that waits for its command (every 5 s) are passed over."""
    while True:
        p = b.notification("notifications/progress")
        if request_of(p) is not None:
            return p


def test_approve(t):
    b = Bridge(w)
    b.initialize()
    marker = os.path.join(OUTSIDE, "approved")
    rid = b.tool_request("exec_command", {"cmd": "touch %s && echo made-it" % marker,
                                          "sandbox_permissions": "require_escalated",
                                          "justification": "write outside the workspace"}, token="tok-1")
    p1 = asked(b)
    n = request_of(p1)
    t.ok(n is not None and p1["params"]["progressToken"] == "tok-1" and p1["params"]["progress"] >= 1,
         "a call waiting for a person reports progress with the client's token", p1)
    t.ok("corral approve %d" % n in p1["params"]["message"] and "corral deny %d" % n in p1["params"]["message"],
         "naming the request and how to answer it", p1)
    t.ok("(running " in p1["params"]["message"] and "made-it" in p1["params"]["message"],
         "and what it asks: the command that would run", p1)
    t.ok(b.wait_stderr("corral approve %d" % n) and "(no screen is attached now)" in b.stderr(),
         "the bridge's stderr says the same, and that no screen is attached", b.stderr())
    listed = [a for a in pending() if a["id"] == n]
    t.ok(listed and listed[0]["client"] == "codex" and listed[0]["justification"] == "write outside the workspace"
         and listed[0]["permissions"]["sandbox"] == "escalated",
         "corral approvals shows it: the agent's name, its justification, escalated", listed)
    shown = w.corral("approvals").stdout
    t.ok(listed and listed[0].get("waiter") == "its MCP call is open, kept alive by progress every 5 s" and
         "who waits: its MCP call is open, kept alive by progress every 5 s" in shown,
         "and that the agent's call is open, kept alive by progress (the bridge's interval)", (listed, shown))
    p2 = b.notification("notifications/progress")
    t.ok(p2["params"]["progress"] > p1["params"]["progress"] and "still waiting" in p2["params"]["message"],
         "while it still waits, progress comes again (a client's timeout that resets on progress holds)", p2)
    r = w.corral("approve", str(n))
    t.eq(r.returncode, 0, "corral approve answers it", r.stderr)
    res = b.reply(rid)["result"]
    t.ok(res.get("isError") is False and res["structuredContent"].get("exit_code") == 0 and
         res["structuredContent"]["output"].endswith("made-it\n"), "then the call returns the command's result", res)
    t.ok(os.path.exists(marker), "it ran without the sandbox: the file outside the workspace exists")
    s = session_running(w, "made-it")
    t.ok(s and s["client"] == "codex" and s["profile"] == "full", "a session of the agent's, unsandboxed", s)
    b.close()


def test_deny_with_note(t):
    b = Bridge(w)
    b.initialize()
    rid = b.tool_request("exec_command", {"cmd": "touch %s" % os.path.join(OUTSIDE, "denied"),
                                          "sandbox_permissions": "require_escalated", "justification": "j"},
                         token=7)
    n = request_of(asked(b))
    r = w.corral("deny", "--note", "use the workspace instead", str(n))
    t.eq(r.returncode, 0, "corral deny --note answers it", r.stderr)
    res = b.reply(rid)["result"]
    text = text_of(res)
    t.ok(res.get("isError") is True and "did not run" in text and "the user denied it" in text and
         "use the workspace instead" in text, "the agent gets a tool error: not run, denied, and the note", res)
    t.ok(not os.path.exists(os.path.join(OUTSIDE, "denied")), "and nothing ran")
    b.close()


def withdrawal(screen, n):
    """The approval_done a screen hears for request n."""
    return screen.next_event(lambda m: m.get("event") == "approval_done" and m.get("approval") == n)


def test_cancel_withdraws(t):
    screen = w.connect("screen")
    screen.call({"cmd": "subscribe"})
    b = Bridge(w)
    b.initialize()
    rid = b.tool_request("exec_command", {"cmd": "touch %s" % os.path.join(OUTSIDE, "withdrawn"),
                                          "sandbox_permissions": "require_escalated", "justification": "j"},
                         token="c")
    n = request_of(asked(b))
    t.ok([a for a in pending() if a["id"] == n], "the request waits")
    b.notify("notifications/cancelled", {"requestId": rid})
    done = withdrawal(screen, n)
    t.ok(done.get("answer") == "gone" and "its call was cancelled" in done.get("note", ""),
         "cancelling the call withdraws the question: every screen hears it is gone, and why", done)
    t.ok(not [a for a in pending() if a["id"] == n], "corral approvals no longer lists it")
    t.eq(b.call("ping").get("result"), {}, "no reply for the cancelled call; the bridge serves on")
    t.ok(not os.path.exists(os.path.join(OUTSIDE, "withdrawn")), "and nothing ran")
    b.tool_request("exec_command", {"cmd": "touch %s" % os.path.join(OUTSIDE, "withdrawn"),
                                    "sandbox_permissions": "require_escalated", "justification": "j"}, token="d")
    n = request_of(asked(b))
    b.close()
    done = withdrawal(screen, n)
    t.ok(done.get("answer") == "gone" and "the agent or its connection to corral ended" in done.get("note", ""),
         "the agent ending withdraws its question too, saying so", done)
    t.ok(not os.path.exists(os.path.join(OUTSIDE, "withdrawn")), "and nothing ran")
    screen.close()


def test_no_token_no_progress(t):
    b = Bridge(w)
    b.initialize()
    rid = b.tool_request("exec_command", {"cmd": "true", "sandbox_permissions": "require_escalated",
                                          "justification": "j"})
    t.ok(b.wait_stderr("waiting for a human to approve request"), "without a progressToken: stderr only")
    n = int(re.findall(r"approve request (\d+)", b.stderr())[-1])
    listed = [a for a in pending() if a["id"] == n]
    t.ok(listed and "without progress" in listed[0].get("waiter", "") and
         "may end it without telling corral" in listed[0].get("waiter", ""),
         "corral approvals says the call is open without progress, which its client's timeout may end unseen",
         listed)
    w.corral("approve", str(n))
    m = b.read()
    t.eq((m.get("id"), "method" in m), (rid, False), "and no progress notification", m)
    b.close()


def test_policy_never(t):
    b = Bridge(w, ("--approval-policy", "never"))
    b.initialize()
    res = b.tool("exec_command", {"cmd": "true", "sandbox_permissions": "require_escalated", "justification": "j"})
    t.ok(res.get("isError") is True and "approval policy never" in text_of(res),
         "with --approval-policy never an escalation is refused at once, saying why", res)
    t.eq(pending(), [], "nobody was asked")
    res = b.tool("exec_command", {"cmd": "echo fine"})
    t.ok(res["structuredContent"].get("exit_code") == 0, "a sandboxed command still runs", res)
    b.close()


def test_additional_permissions(t):
    b = Bridge(w)
    b.initialize()
    target = os.path.join(OUTSIDE, "widened")
    rid = b.tool_request("exec_command", {"cmd": "touch %s && echo widened" % target,
                                          "sandbox_permissions": "with_additional_permissions",
                                          "additional_permissions": {"file_system": {"write": [OUTSIDE]}},
                                          "justification": "write one directory more"}, token="w")
    n = request_of(asked(b))
    a = [x for x in pending() if x["id"] == n]
    t.ok(a and a[0]["permissions"]["sandbox"] == "more" and
         a[0]["permissions"]["write"] == [os.path.realpath(OUTSIDE)],
         "Codex's additional_permissions become corral's: one more writable directory", a)
    w.corral("approve", str(n))
    res = b.reply(rid)["result"]
    t.ok(res["structuredContent"].get("exit_code") == 0 and os.path.exists(target),
         "approved, the command writes there", res)
    s = session_running(w, "widened")
    t.ok(s and s["profile"] != "full", "still in a sandbox", s)
    b.close()


def test_denial_retry(t):
    """A sandboxed command that fails the way only the sandbox makes it fail
    is offered once more without it, as for any session, when a screen is
    attached to answer."""
    screen = w.connect("screen")
    screen.call({"cmd": "subscribe"})
    b = Bridge(w)
    b.initialize()
    target = os.path.join(HOST_DIR, "retried")
    rid = b.tool_request("exec_command", {"cmd": "touch %s" % target}, token="r")
    p = asked(b)
    n = request_of(p)
    a = [x for x in pending() if x["id"] == n]
    t.ok(a and a[0]["kind"] == "retry" and "no screen is attached" not in p["params"]["message"],
         "the sandbox stopped it: a retry without the sandbox is asked, as the call reports", (a, p))
    w.corral("deny", "--note", "stay in the workspace", str(n))
    res = b.reply(rid)["result"]
    out = res["structuredContent"]["output"]
    t.ok(res["isError"] is False and res["structuredContent"]["exit_code"] == 1 and "Read-only file system" in out
         and "stay in the workspace" in out and "stay in the workspace" in text_of(res),
         "denied: the failed run's result, with the user's note", res)
    notices = res["structuredContent"].get("notices", [])
    t.ok(any("stay in the workspace" in x for x in notices) and any("sandbox" in x and x in text_of(res)
                                                                    for x in notices),
         "the note and what the sandbox refused (and how to ask) are notices of structuredContent too, and in the "
         "text", notices)
    waited = [x for x in notices if "waited" in x]
    t.ok(waited and ("for the user to answer request %d" % n) in waited[0] and waited[0] in text_of(res),
         "so is the wait for the user, in both", (notices, res["content"]))
    rid = b.tool_request("exec_command", {"cmd": "touch %s && echo retried-ok" % target}, token="r2")
    n = request_of(asked(b))
    w.corral("approve", str(n))
    res = b.reply(rid)["result"]
    t.ok(res["structuredContent"].get("exit_code") == 0 and os.path.exists(target),
         "approved: it ran again without the sandbox, and that is the result", res)
    b.close()
    screen.close()


# ---- network hosts ----------------------------------------------------------------------------

WEB = ps.WebServer("mcp-web")
atexit.register(WEB.close)
# The host's own web server, as docs/network.md says to reach one: the
# URL names localhost, which the sandbox's NO_PROXY keeps for its own
# loopback, so --noproxy '' makes curl use the http_proxy the session was
# given.  --fail-with-body: a refusal is an exit status, and its body.
NET_CMD = "curl -sS --fail-with-body --max-time %d --noproxy '' http://localhost:%d/info" % (TIMEOUT - 5, WEB.port)


def host_request(b, rid):
    """The call's progress and the network request it names; the reply when
    the call ended without asking (a build where the host never queues)."""
    while True:
        m = b.read()
        if m.get("id") == rid and "method" not in m:
            return None, None, m
        if m.get("method") != "notifications/progress":
            b.notifications.append(m)
            continue
        n = request_of(m)
        if n is None:  # a beat of the call before the request came
            continue
        listed = [a for a in pending() if a["id"] == n]
        return m, listed[0] if listed else None, None


def ask_for_host(t, b, token):
    rid = b.tool_request("exec_command", {"cmd": NET_CMD, "yield_time_ms": 30000}, token=token)
    p, a, early = host_request(b, rid)
    t.ok(p is not None and p["params"]["progressToken"] == token and a is not None,
         "curl through the proxy: the call waits, its progress names the request", (p, early))
    t.ok(p is not None and 'network access to "localhost", http port %d' % WEB.port in p["params"]["message"],
         "and says what it asks: the host, protocol and port", p)
    t.ok(a is not None and a.get("kind") == "network" and a.get("host") == "localhost" and a.get("port") == WEB.port
         and a.get("protocol") == "http" and a.get("client") == "codex" and "curl" in a.get("running", ""),
         "corral approvals lists it: network, the host, its port and protocol, the agent, the command", a)
    t.ok(a is not None and b.wait_stderr("corral approve %d" % a["id"]), "the bridge's stderr names it too",
         b.stderr())
    return rid, a


def test_host_denied(t):
    b = Bridge(w)
    b.initialize()
    served = len(WEB.requests)
    rid, a = ask_for_host(t, b, "net-deny")
    if a is None:
        b.close()
        return
    r = w.corral("deny", "--note", "no network for this task", str(a["id"]))
    t.eq(r.returncode, 0, "corral deny --note answers it", r.stderr)
    res = b.reply(rid)["result"]
    sc = res.get("structuredContent", {})
    out = sc.get("output", "")
    t.ok(res.get("isError") is False and sc.get("exit_code") == 22 and 'network access to "localhost"' in out
         and "was denied: " in out and "the user denied it" in out and "no network for this task" in out
         and "no network for this task" in text_of(res),
         "the call returns curl's failure: the 403 naming the host, that the user denied it, and the note", res)
    t.eq(len(WEB.requests), served, "nothing reached the web server")
    b.close()


def test_host_approved(t):
    """approve --persist: a rule naming localhost, the only answer that lets
    a name reach a loopback address (so it runs after test_host_denied)."""
    b = Bridge(w)
    b.initialize()
    rid, a = ask_for_host(t, b, "net-allow")
    if a is None:
        b.close()
        return
    r = w.corral("approve", "--persist", str(a["id"]))
    t.eq(r.returncode, 0, "corral approve --persist answers it", r.stderr)
    res = b.reply(rid)["result"]
    sc = res.get("structuredContent", {})
    t.ok(res.get("isError") is False and sc.get("exit_code") == 0 and '"server": "mcp-web"' in sc.get("output", ""),
         "approved, the call finishes with the web server's answer", res)
    t.ok([q for q in WEB.requests if q["path"] == "/info"], "the request reached the web server", WEB.requests)
    s = session_running(w, "curl")
    t.ok(s and s["client"] == "codex" and s["profile"] == "workspace-write" and s.get("network") == "proxy",
         "from a session of the agent's: workspace-write, network through the proxy", s)
    b.close()


run_tests(Tap(), [test_approve, test_deny_with_note, test_cancel_withdraws, test_no_token_no_progress,
                  test_policy_never, test_additional_permissions, test_denial_retry, test_host_denied,
                  test_host_approved])
