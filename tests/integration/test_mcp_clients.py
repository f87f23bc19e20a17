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
  write_stdin: they must be identical;
- Claude Code (`claude -p`, registered with the `claude mcp add` line of
  --print-config claude, its calls allowed with --allowedTools mcp__corral)
  against a stand-in for the Anthropic Messages API (ANTHROPIC_BASE_URL),
  and Gemini CLI (`gemini -p`, with the settings.json entry of
  --print-config gemini) against a stand-in for the Gemini API
  (GOOGLE_GEMINI_BASE_URL): each is offered corral's tools (Claude Code in
  its very first model request, which it sends without the tools of a
  server that has not listed them within about a second), calls
  exec_command with an escalation the test approves, and the command's
  output and corral's notice of the wait for the user reach the model,
  although Claude Code passes it structuredContent and Gemini CLI the text.

The clients, their install and the stand-ins are agentlib.py's.  The
install is cached between runs, keyed by the pinned versions:
$CORRAL_TEST_CLIENTS_DIR, else $XDG_CACHE_HOME/corral-tests (else
~/.cache/corral-tests).  A cold run installs about 570 MB for Codex and the
Inspector (Codex's native binary is most of it) and 480 MB for Claude Code and
Gemini CLI, 15-30 s each here; a warm run of this file takes about a minute.
When the npm registry cannot be reached the tests are reported as skipped,
never as passed."""
import json
import os
import shlex
import shutil
import subprocess
import time

from agentlib import (AGENT_KEY, AGENT_PACKAGES, CLAUDE_VERSION, CLIENT_TIMEOUT, CODEX_VERSION, GEMINI_VERSION,
                      INSPECTOR_VERSION, KEY, PACKAGES, AnthropicAPI, GeminiAPI, Install, StandIn)
from harness import CORRAL, Tap, World, run_tests, wait_until
from mcplib import session_running

w = World()
w.start_server()

clients = Install(KEY, PACKAGES)
agents = Install(AGENT_KEY, AGENT_PACKAGES)


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


# ---- Claude Code and Gemini CLI ----------------------------------------------------------------

def answer_when_asked(client, answer, delay=0):
    """Answer the first request the agent's call puts to a person, as the
    user would in the supervisor screen, with `corral <answer...> ID`,
    delay seconds after it came; returns its id, or None when none came
    within the timeout."""
    found = []

    def asked():
        r = w.corral("approvals", "--json")
        mine = [a for a in json.loads(r.stdout or "[]") if a.get("client") == client] if r.returncode == 0 else []
        found[:] = mine
        return bool(mine)

    if not wait_until(asked, CLIENT_TIMEOUT):
        return None
    time.sleep(delay)
    w.corral(*answer, str(found[0]["id"]))
    return found[0]["id"]


def agent_home(name):
    home = os.path.join(w.base, name + "-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    return home


def run_agent(argv, env, client, answer=("approve",), delay=0):
    """The agent's run, while the test answers the request its call puts
    to a person (delay seconds after it came); (the process's result, the
    request id answered)."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, cwd=w.ws)
    approved = answer_when_asked(client, answer, delay)
    try:
        out, err = p.communicate(timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return subprocess.CompletedProcess(argv, p.returncode, out, err), approved


# An escalation: the call waits for the user, and the wait is the notice
# (item 1 of issue 21) that must reach the model whichever part of the
# result its client passes on.
def escalated(marker):
    return {"cmd": "echo %s-$((6*7))" % marker, "sandbox_permissions": "require_escalated",
            "justification": "the test asks for it"}


def claude_env(name, print_config_args=()):
    """A fresh home for Claude Code with corral registered by the claude mcp
    add line of --print-config claude; (env, the registration's result)."""
    home = agent_home(name)
    env = dict(w.env, HOME=home, ANTHROPIC_API_KEY="dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    for k in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "MCP_TOOL_TIMEOUT", "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT"):
        env.pop(k, None)
    snippet = w.corral("mcp", *print_config_args, "--print-config", "claude").stdout
    add = [x for x in snippet.splitlines() if x.startswith("claude mcp add")]
    r = subprocess.run([agents.bin("claude")] + shlex.split(add[0])[1:], capture_output=True, text=True, env=env,
                       cwd=w.ws, timeout=CLIENT_TIMEOUT) if add else None
    return env, r


def run_claude(env, api, answer=("approve",), delay=0):
    env = dict(env, ANTHROPIC_BASE_URL="http://127.0.0.1:%d" % api.port)
    # --allowedTools mcp__corral, as --print-config claude says.
    r = run_agent([agents.bin("claude"), "-p", "run the command", "--allowedTools", "mcp__corral",
                   "--output-format", "json"], env, "claude", answer, delay)
    api.close()
    return r


def test_claude(t):
    what = "Claude Code %s runs a command through corral mcp" % CLAUDE_VERSION
    if not agents.check(t, what):
        return
    if agents.note:
        t.diag(agents.note)
    env, r = claude_env("claude")
    t.ok(r is not None and r.returncode == 0, "the claude mcp add line of --print-config claude registers corral",
         r and (r.stdout + r.stderr)[-2000:])
    api = AnthropicAPI(escalated("claude-marker"))
    r, approved = run_claude(env, api)
    t.eq(r.returncode, 0, "claude -p finishes (exit 0)", (r.stderr[-3000:], r.stdout[-3000:]))
    bodies = api.bodies()
    first = json.dumps(bodies[0]) if bodies else ""
    t.ok("mcp__corral__exec_command" in first and "mcp__corral__write_stdin" in first,
         "its first model request already offers corral's tools (listed at once, not a second late)",
         first[-2000:])
    loaded = [{x["name"]: x for x in b.get("tools", [])} for b in bodies]
    loaded = [x for x in loaded if "mcp__corral__exec_command" in x]
    ours = tools_list()
    t.ok(loaded and all(loaded[0].get("mcp__corral__" + n, {}).get("input_schema") == ours[n]["inputSchema"]
                        for n in ours), "with corral's schemas, once the model loads them",
         loaded and {n: loaded[0].get("mcp__corral__" + n) for n in ours})
    s = session_running(w, "claude-marker-$((6*7))")
    t.ok(s and s["client"] == "claude" and s.get("exit_code") == 0 and approved is not None,
         "the command ran in a corral session of the client claude, once approved", (s, approved))
    results = api.tool_results()
    mine = [x for x in results if "claude-marker-42" in x]
    t.ok(mine, "the command's output reached the model stand-in", results)
    t.ok(mine and ("this call waited" in mine[0] and "answer request %s" % approved in mine[0]),
         "and so did corral's notice of the wait for the user (Claude Code passes structuredContent)", mine)


# Claude Code may end a tool call its server has said nothing about for
# CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT ms, without telling the server; set low
# here, with progress every second from corral mcp, and the approval comes
# well after it.  (Claude Code 2.1.332 in -p mode was seen to keep such a
# call open without progress too: this checks that the call survives and
# its result arrives, not that the idle timeout would otherwise fire.
# test_sdk_idle_timeout below shows that, with the SDK's own client.)
IDLE_TIMEOUT_MS = 4000
APPROVAL_DELAY = 12


def test_claude_idle_timeout(t):
    if not agents.check(t, "Claude Code: progress keeps a call waiting for approval past the client's idle timeout"):
        return
    env, r = claude_env("claude-idle", ("--progress-interval", "1"))
    t.ok(r is not None and r.returncode == 0, "corral registered with --progress-interval 1",
         r and (r.stdout + r.stderr)[-2000:])
    env["CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT"] = str(IDLE_TIMEOUT_MS)
    api = AnthropicAPI(escalated("claude-idle"))
    start = time.monotonic()
    r, approved = run_claude(env, api, delay=APPROVAL_DELAY)
    waited = time.monotonic() - start
    t.ok(r.returncode == 0 and approved is not None and waited > IDLE_TIMEOUT_MS / 1000.0 + 5,
         "claude -p finishes; the approval came %d s after the request, the idle timeout is %d s" %
         (APPROVAL_DELAY, IDLE_TIMEOUT_MS // 1000), (r.returncode, waited, r.stderr[-2000:], r.stdout[-2000:]))
    s = session_running(w, "claude-idle-$((6*7))")
    t.ok(s and s.get("exit_code") == 0, "the approved command ran", s)
    results = api.tool_results()
    t.ok(any("claude-idle-42" in x for x in results),
         "and its output reached the model, past the idle timeout", results)


# The same idle timeout, through the MCP TypeScript SDK's own client (the
# library the clients are built on; Claude Code calls tools with its
# timeout, maxTotalTimeout and resetTimeoutOnProgress): 3 s of silence end
# a call, and corral mcp's progress is what keeps it open, both while a
# person decides and during a plain yield.  With progress all but off
# (--progress-interval 600: one at the request, then nothing) the same
# calls end, and the SDK's notifications/cancelled withdraws the request.
SDK_IDLE_MS = 3000
SDK_CALL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk_call.mjs")


def sdk_call(args, interval, during=lambda: None):
    """One exec_command call through the SDK client with the idle timeout
    (corral mcp --progress-interval interval); (its JSON line, what during()
    returned, run while the call is open)."""
    sdk = os.path.join(clients.dir, "node_modules", "@modelcontextprotocol", "sdk")
    argv = ["node", SDK_CALL, sdk, str(SDK_IDLE_MS), json.dumps(args), "--", CORRAL, "mcp", "--progress-interval",
            str(interval)]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=w.env, cwd=w.ws)
    seen = during()
    try:
        out, err = p.communicate(timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    lines = [x for x in out.splitlines() if x.startswith("{")]
    return (json.loads(lines[-1]) if lines else {"stderr": err[-2000:], "stdout": out[-2000:]}), seen


def pending(client):
    r = w.corral("approvals", "--json")
    return [a for a in json.loads(r.stdout or "[]") if a.get("client") == client] if r.returncode == 0 else None


def test_sdk_idle_timeout(t):
    if not clients.check(t, "the MCP SDK's client: progress keeps a call open past its idle timeout"):
        return
    if not shutil.which("node"):
        t.skip("the MCP SDK's client: progress keeps a call open past its idle timeout", "node is not installed")
        return
    res, approved = sdk_call(escalated("sdk-approved"), 1, lambda: answer_when_asked("idle-probe", ("approve",), 8))
    t.ok(res.get("ok") and "sdk-approved-42" in res.get("text", "") and approved is not None,
         "an approval 8 s after the request, the client's idle timeout 3 s, progress every 1 s: the output arrives",
         res)
    t.ok(res.get("progress", 0) >= 5, "progress came while the person decided, one a second", res)

    res, _ = sdk_call({"cmd": "sleep 6; echo sdk-yield-$((6*7))", "yield_time_ms": 10000}, 1)
    t.ok(res.get("ok") and "sdk-yield-42" in res.get("text", ""),
         "a 10 s yield on a 6 s command, the idle timeout 3 s, progress every 1 s: the output arrives", res)

    res, _ = sdk_call({"cmd": "sleep 6; echo sdk-quiet-$((6*7))", "yield_time_ms": 10000}, 600)
    t.ok(not res.get("ok") and (res.get("error") or {}).get("code") == -32001,
         "the same yield with progress all but off ends at the client's idle timeout (so progress is what kept it)",
         res)

    res, asked = sdk_call(escalated("sdk-abandoned"), 600,
                          lambda: wait_until(lambda: pending("idle-probe"), CLIENT_TIMEOUT))
    t.ok(asked and asked[0].get("waiter") == "its MCP call is open, kept alive by progress every 600 s",
         "while it waited, corral approvals said the call was open and how often progress comes", asked)
    t.ok(asked and (res.get("error") or {}).get("code") == -32001,
         "an approval nobody answers, progress all but off: the call ends at the client's idle timeout", res)
    t.ok(wait_until(lambda: pending("idle-probe") == [], 30),
         "and the client's cancel withdraws the request from every screen", pending("idle-probe"))
    t.ok(session_running(w, "sdk-abandoned-$((6*7))") is None, "and nothing ran")


def held(marker):
    """exec_command's arguments for a command that prints marker once
    release(marker) is called (it waits for a file, not for a clock), with
    a yield short enough to return while it waits."""
    return {"cmd": "while [ ! -e .release-%s ]; do sleep 0.02; done; echo %s-$((6*7))" % (marker, marker),
            "yield_time_ms": 250}


def release(marker):
    return lambda: open(os.path.join(w.ws, ".release-" + marker), "w").close()


def test_claude_poll(t):
    if not agents.check(t, "Claude Code: a yield, then a write_stdin poll"):
        return
    env, _ = claude_env("claude-poll")
    api = AnthropicAPI(held("claude-polled"), on_poll=release("claude-polled"))
    env = dict(env, ANTHROPIC_BASE_URL="http://127.0.0.1:%d" % api.port)
    r = subprocess.run([agents.bin("claude"), "-p", "run the command", "--allowedTools", "mcp__corral",
                        "--output-format", "json"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       env=env, cwd=w.ws, timeout=CLIENT_TIMEOUT)
    api.close()
    results = []  # corral's results, each once, in the order the model got them
    for x in api.tool_results():
        if "chunk_id" in x and x not in results:
            results.append(x)
    t.ok(r.returncode == 0 and len(results) >= 2 and '\\"session_id\\"' in results[0] and
         "claude-polled-42" in results[-1] and '\\"exit_code\\":0' in results[-1],
         "the yield returns a session id, and a write_stdin poll of it the output and the exit", results)


DENIAL_NOTE = "use the workspace instead"


def test_claude_denied(t):
    if not agents.check(t, "Claude Code: a denial's note reaches the model"):
        return
    env, _ = claude_env("claude-denied")
    api = AnthropicAPI(escalated("claude-denied"))
    r, denied = run_claude(env, api, ("deny", "--note", DENIAL_NOTE))
    results = api.tool_results()
    t.ok(r.returncode == 0 and denied is not None and any(DENIAL_NOTE in x and "did not run" in x for x in results),
         "a request the user denied with a note: the model reads that it did not run, and the note", results)
    t.ok(session_running(w, "claude-denied-$((6*7))") is None, "and nothing ran")


def test_gemini(t):
    what = "Gemini CLI %s runs a command through corral mcp" % GEMINI_VERSION
    if not agents.check(t, what):
        return
    gemini = agents.bin("gemini")
    home = agent_home("gemini")
    settings = json.loads(w.corral("mcp", "--print-config", "gemini").stdout)
    settings["security"] = {"auth": {"selectedType": "gemini-api-key"}}
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump(settings, f)
    api = GeminiAPI(escalated("gemini-marker"))
    env = dict(w.env, HOME=home, GEMINI_API_KEY="dummy", GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % api.port,
               GEMINI_CLI_TRUST_WORKSPACE="true")
    env.pop("GOOGLE_API_KEY", None)
    # A model named, so that no routing request (which wants a JSON
    # classification) precedes the turn.
    r, approved = run_agent([gemini, "-m", "gemini-2.5-flash", "-p", "run the command", "--output-format", "json"],
                            env, "gemini")
    api.close()
    t.eq(r.returncode, 0, "gemini -p finishes (exit 0)", (r.stderr[-3000:], r.stdout[-3000:]))
    bodies = api.tool_bodies()
    offered = {d["name"]: d for b in bodies[:1] for x in b.get("tools", []) for d in x.get("functionDeclarations", [])}
    ours = tools_list()
    # Gemini CLI adds a property of its own to every tool (wait_for_previous,
    # which it passes on and corral ignores).
    schemas = {}
    for n in ours:
        schema = json.loads(json.dumps(offered.get("mcp_corral_" + n, {}).get("parametersJsonSchema", {})))
        schema.get("properties", {}).pop("wait_for_previous", None)
        schemas[n] = schema
    t.ok(all(schemas[n] == ours[n]["inputSchema"] for n in ours),
         "it offers the model corral's two tools with their schemas (trusted, as --print-config gemini says)",
         sorted(offered))
    s = session_running(w, "gemini-marker-$((6*7))")
    t.ok(s and s["client"] == "gemini" and s.get("exit_code") == 0 and approved is not None,
         "the command ran in a corral session of the client gemini, once approved", (s, approved))
    responses = api.function_responses()
    mine = [x for x in responses if "gemini-marker-42" in x]
    t.ok(mine, "the command's output reached the model stand-in", responses)
    t.ok(mine and ("this call waited" in mine[0] and "answer request %s" % approved in mine[0]),
         "and so did corral's notice of the wait for the user (Gemini CLI passes the text)", mine)

    api = GeminiAPI(escalated("gemini-denied"))
    env["GOOGLE_GEMINI_BASE_URL"] = "http://127.0.0.1:%d" % api.port
    r, denied = run_agent([gemini, "-m", "gemini-2.5-flash", "-p", "run the command", "--output-format", "json"],
                          env, "gemini", ("deny", "--note", DENIAL_NOTE))
    api.close()
    responses = api.function_responses()
    t.ok(r.returncode == 0 and denied is not None and any(DENIAL_NOTE in x and "did not run" in x
                                                          for x in responses),
         "a request the user denied with a note: the model reads that it did not run, and the note", responses)
    t.ok(session_running(w, "gemini-denied-$((6*7))") is None, "and nothing ran")

    api = GeminiAPI(held("gemini-polled"), on_poll=release("gemini-polled"))
    env["GOOGLE_GEMINI_BASE_URL"] = "http://127.0.0.1:%d" % api.port
    r = subprocess.run([gemini, "-m", "gemini-2.5-flash", "-p", "run the command", "--output-format", "json"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=w.ws,
                       timeout=CLIENT_TIMEOUT)
    api.close()
    responses = api.function_responses()
    t.ok(r.returncode == 0 and len(responses) >= 2 and "Process running with session ID" in responses[0] and
         "gemini-polled-42" in responses[-1] and "Process exited with code 0" in responses[-1],
         "the yield returns a session id, and a write_stdin poll of it the output and the exit", responses)


run_tests(Tap(), [test_inspector, test_codex, test_claude, test_claude_denied, test_claude_poll, test_claude_idle_timeout,
                  test_sdk_idle_timeout, test_gemini])
