#!/usr/bin/env python3
"""Agents inside a corral session (issue 21, item 7): `corral new -- codex`,
`-- claude`, `-- gemini`, the agent itself the session's program in the
session's sandbox (workspace-write, network mode proxy).

Each agent talks to a local stand-in for its model API (agentlib.py) on
the host's loopback, which a network_rule names, through corral's proxy
(the session's HTTP(S)_PROXY; NO_PROXY emptied for the agent, since the
sandbox's own 127.0.0.1 is not the host's).  The stand-in has the agent run
two shell commands with its own shell tool: one writes a file in the
workspace, one tries to write outside it.  The file is there, the outside
write failed, each command is a command of the session (corral diff --list
with its counts, corral log), the request to the stand-in is an allowed
network event of the session, and the stand-in's final answer is on the
session's screen.  Each agent is skipped (never passed) when npm cannot
install it.

Without npm: the outermost `bash -c` of a session whose program is not a
hooked shell is a command of its own (path.bash), a nested one is not, a
hooked shell's typed line is one command (not two), an exec is one
command, a hostile line (control characters, 20 KB) is cut and shown
visibly, and a program that closed fd 3 still marks through the sandbox's
door (127.0.0.1:3129), which takes nothing but marks."""
import json
import os
import pwd
import re
import shutil
import tempfile

from agentlib import (AGENT_KEY, AGENT_PACKAGES, CLAUDE_VERSION, CODEX_VERSION, GEMINI_VERSION, KEY, PACKAGES,
                      AnthropicAPI, GeminiAPI, Install, StandIn)
from harness import Tap, World, read_jsonl, run_tests, wait_until
from mcplib import sessions

AGENT_TIMEOUT = 240
# The stand-ins listen on the host's loopback: an address, named by a rule
# (http for absolute-form requests, https for clients that CONNECT even for
# http:// URLs).  The agents' own calls home are refused at once rather
# than asked about.
RULES = """network_rule(host="127.0.0.1", protocol="http", decision="allow")
network_rule(host="127.0.0.1", protocol="https", decision="allow")
network_rule(host="github.com", protocol="https", decision="deny")
network_rule(host="ab.chatgpt.com", protocol="https", decision="deny")
network_rule(host="chatgpt.com", protocol="https", decision="deny")
network_rule(host="play.googleapis.com", protocol="https", decision="deny")
"""

# The server's (and so the sessions') home: the agents' configuration goes
# there; a sandbox writes into a layer of its own above it.  /var/tmp is
# seen read-only inside (the sandbox's /tmp is its own).
home = tempfile.mkdtemp(prefix="corral-home-", dir="/var/tmp")
os.chmod(home, 0o755)
outside = tempfile.mkdtemp(prefix="corral-outside-", dir="/var/tmp")
os.chmod(outside, 0o777)
w = World()
# Started as CI starts it, with no SHELL in its environment: a session still
# sees the user's shell (Claude Code picks zsh over bash without one).
w.env.pop("SHELL", None)
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server(extra_env={"HOME": home})

WRITE = "echo hi > made-by-agent.txt"


def escape(name):
    return "echo no > %s/escaped-%s.txt" % (outside, name)


def workspace(name):
    d = os.path.join(w.ws, name)
    os.makedirs(d)
    return d


def ended(sid, timeout):
    """The session's entry once it is no longer running (None on time-out)."""
    def done():
        for s in sessions(w):
            if s["id"] == sid and s.get("state") != "running":
                return s
        return None
    return wait_until(done, timeout)


def commands(sid, want=None, timeout=30):
    """corral diff SID --list, once it lists want commands (if given)."""
    out = []

    def listed():
        r = w.corral("diff", str(sid), "--list")
        out[:] = [x for x in r.stdout.splitlines() if x.strip()]
        return want is None or len(out) >= want
    wait_until(listed, timeout)
    return out


def start(cwd, argv):
    r = w.corral("new", "-C", cwd, "--", *argv)
    return int(r.stdout.split()[0]) if r.returncode == 0 and r.stdout.strip() else None, r


def installed(t, install, what):
    """The install is there and a sandbox sees it (its /tmp is its own)."""
    if not install.check(t, what):
        return False
    if os.path.realpath(install.dir).startswith("/tmp/"):
        t.skip(what, "the clients are installed under /tmp (%s), which a sandbox does not see: set "
               "CORRAL_TEST_CLIENTS_DIR elsewhere" % install.dir)
        return False
    return True


def check_agent(t, name, sid, cwd, port, final):
    s = ended(sid, AGENT_TIMEOUT)
    t.ok(s and s.get("exit_code") == 0, "%s: the agent ran in its session and finished (exit 0)" % name, s)
    path = os.path.join(cwd, "made-by-agent.txt")
    t.ok(os.path.exists(path) and open(path).read() == "hi\n",
         "%s: its shell command's write landed in the workspace" % name, os.listdir(cwd))
    t.ok(not os.path.exists(os.path.join(outside, "escaped-%s.txt" % name)),
         "%s: its write outside the workspace did not happen" % name, os.listdir(outside))
    listed = commands(sid)
    mine = [x for x in listed if "made-by-agent.txt" in x]
    t.ok(len(mine) == 1 and " +1 " in mine[0],
         "%s: corral diff --list shows the command, +1" % name, listed)
    esc = [x for x in listed if "escaped-%s.txt" % name in x]
    t.ok(len(esc) == 1 and " +0 " in esc[0], "%s: and the refused write as a command of its own, +0" % name, listed)
    log = w.corral("log", str(sid)).stdout
    t.ok(any(" command " in x and "made-by-agent.txt" in x and "+1" in x for x in log.splitlines()),
         "%s: corral log shows the command with its counts" % name, log[-3000:])
    events = read_jsonl(os.path.join(w.session_dir(sid), "events.jsonl"))
    nets = [e for e in events if e.get("event") == "network" and e.get("host") == "127.0.0.1" and
            e.get("port") == port]
    t.ok(nets and all(e.get("decision") == "allow_explicit" for e in nets),
         "%s: its requests to the model API went through the proxy, allowed by the rule" % name,
         [e for e in events if e.get("event") == "network"])
    screen = w.corral("screen", str(sid)).stdout
    t.ok(final in screen, "%s: the model's final answer reached the session's screen" % name, screen[-2000:])


def test_codex(t):
    clients = Install(KEY, PACKAGES)
    if not installed(t, clients, "Codex CLI %s inside a session" % CODEX_VERSION):
        return
    api = StandIn([WRITE, escape("codex")], builtin=True, final="final-answer-from-codex")
    os.makedirs(os.path.join(home, ".codex"), exist_ok=True)
    with open(os.path.join(home, ".codex", "config.toml"), "w") as f:
        f.write('model = "mock-model"\nmodel_provider = "standin"\n[model_providers.standin]\nname = "standin"\n'
                'base_url = "http://127.0.0.1:%d/v1"\nwire_api = "responses"\n' % api.port)
    cwd = workspace("codex")
    # corral is the sandbox: Codex's own is off; its shell snapshot (a bash
    # of its own before each command) too, so each command is one.
    sid, r = start(cwd, ["env", "NO_PROXY=", "no_proxy=", clients.bin("codex"), "exec", "--skip-git-repo-check",
                         "--dangerously-bypass-approvals-and-sandbox", "--disable", "shell_snapshot",
                         "run the commands"])
    t.ok(sid is not None, "corral new -- codex exec ...", r.stderr)
    if sid is not None:
        check_agent(t, "codex", sid, cwd, api.port, "final-answer-from-codex")
    api.close()


def test_claude(t):
    agents = Install(AGENT_KEY, AGENT_PACKAGES)
    if not installed(t, agents, "Claude Code %s inside a session" % CLAUDE_VERSION):
        return
    api = AnthropicAPI([{"command": WRITE, "description": "write a file"},
                        {"command": escape("claude"), "description": "write outside"}],
                       tool="Bash", final="final-answer-from-claude")
    cwd = workspace("claude")
    # Its keys are not passed into a sandbox unless named: the stand-in's
    # dummy one is given on the command line.
    sid, r = start(cwd, ["env", "NO_PROXY=", "no_proxy=", "ANTHROPIC_API_KEY=dummy",
                         "ANTHROPIC_BASE_URL=http://127.0.0.1:%d" % api.port,
                         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", agents.bin("claude"), "-p", "run the commands",
                         "--allowedTools", "Bash"])
    t.ok(sid is not None, "corral new -- claude -p ...", r.stderr)
    if sid is not None:
        check_agent(t, "claude", sid, cwd, api.port, "final-answer-from-claude")
    api.close()


def test_gemini(t):
    agents = Install(AGENT_KEY, AGENT_PACKAGES)
    if not installed(t, agents, "Gemini CLI %s inside a session" % GEMINI_VERSION):
        return
    api = GeminiAPI([{"command": WRITE}, {"command": escape("gemini")}], tool="run_shell_command",
                    final="final-answer-from-gemini")
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "privacy": {"usageStatisticsEnabled": False}}, f)
    cwd = workspace("gemini")
    sid, r = start(cwd, ["env", "NO_PROXY=", "no_proxy=", "GEMINI_API_KEY=dummy",
                         "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:%d" % api.port, "GEMINI_CLI_TRUST_WORKSPACE=true",
                         agents.bin("gemini"), "-m", "gemini-2.5-flash", "-p", "run the commands", "--yolo"])
    t.ok(sid is not None, "corral new -- gemini -p ...", r.stderr)
    if sid is not None:
        check_agent(t, "gemini", sid, cwd, api.port, "final-answer-from-gemini")
    api.close()


# ---- without npm ----------------------------------------------------------------------------------

def test_bash_commands(t):
    cwd = workspace("plain")
    sid, r = start(cwd, ["sh", "-c", 'bash -c "echo a > a.txt"; bash -c "echo b > b.txt"; '
                                     "bash -c 'bash -c \"echo c > c.txt\"'; bash -c 'exit 3'"])
    t.ok(sid is not None and ended(sid, 60), "a session running sh -c with four bash -c ends", r.stderr)
    listed = commands(sid, 5)
    lines = [x.split("  ")[-1] for x in listed]
    t.eq(lines[1:], ['echo a > a.txt', 'echo b > b.txt', 'bash -c "echo c > c.txt"', 'exit 3'],
         "each outermost bash -c is a command, in order; the nested one is not one more", listed)
    t.ok(len(listed) == 5 and all(" +1 " in listed[i] for i in (1, 2, 3)) and " +0 " in listed[4],
         "each with its own diff (+1, +1, +1, +0)", listed)
    t.ok(lines[0].startswith("sh -c"), "the program's own start is command 1 (its stretches without changes are "
         "not recorded)", listed)
    log = w.corral("log", str(sid)).stdout
    t.ok(any("#5" in x and "exit 3" in x for x in log.splitlines()), "corral log has each, with its exit status",
         log)


def test_program_edits_between(t):
    """What the program changes itself between its bash commands (as an
    agent's own edit tools do) is a command of its own, the program's."""
    cwd = workspace("between")
    sid, r = start(cwd, ["sh", "-c", 'bash -c "echo a > a.txt"; echo own > own.txt; bash -c "echo b > b.txt"'])
    t.ok(sid is not None and ended(sid, 60), "a session whose program writes between its bash commands", r.stderr)
    listed = commands(sid, 4)
    t.ok(len(listed) == 4 and "echo a > a.txt" in listed[1] and listed[2].split("  ")[-1].startswith("sh -c") and
         " +1 " in listed[2] and "echo b > b.txt" in listed[3],
         "its own write is the program's command between the two", listed)


def test_hooked_shell(t):
    mon = w.connect("monitor")
    cwd = workspace("hooked")
    sid = mon.call({"cmd": "new", "argv": ["bash"], "cwd": cwd, "name": "hooked"})["session"]["id"]
    mon.call({"cmd": "watch", "session": sid})
    mon.type_line(sid, "echo ready-$((40+2))")
    mon.screen_until(sid, "ready-42")
    mon.type_line(sid, 'bash -c "echo t > typed.txt"; echo typed-$((1+1))')
    mon.screen_until(sid, "typed-2")
    mon.type_line(sid, "echo after-$((2+3))")
    mon.screen_until(sid, "after-5")
    listed = commands(sid, 3)
    typed = [x for x in listed if "typed.txt" in x]
    t.ok(len(typed) == 1 and 'bash -c "echo t > typed.txt"; echo typed-$((1+1))' in typed[0] and " +1 " in typed[0],
         "a hooked shell's typed line (a bash -c in it) is one command, as typed, not two", listed)
    mon.call({"cmd": "kill", "session": sid})
    mon.close()


def test_exec(t):
    cwd = workspace("exec")
    r = w.corral("exec", "-C", cwd, "-c", 'bash -c "echo e > e.txt"')
    t.eq(r.returncode, 0, "corral exec -c 'bash -c ...'", r.stderr)
    sid = max(s["id"] for s in sessions(w) if s.get("cwd") == cwd)
    listed = commands(sid, 1)
    t.ok(len(listed) == 1 and " +1 " in listed[0], "an exec is one command (its bash -c not marked again)", listed)


def test_hostile_line(t):
    cwd = workspace("hostile")
    script = ('bash -c "true \'$(printf "\\033[2J\\007")\' $(head -c 20000 /dev/zero | tr "\\0" x)"; '
              'corral __hook-mark --status 0 --command 999 end; corral __hook-mark --command 1 end; '
              'corral __hook-mark start -- "$(head -c 100000 /dev/zero | tr "\\0" y)" >/dev/null; true')
    sid, r = start(cwd, ["sh", "-c", script])
    t.ok(sid is not None and ended(sid, 60), "a session sends a hostile line and stray marks", r.stderr)
    listed = commands(sid, 2)
    raw = w.corral("diff", str(sid), "--list").stdout + w.corral("log", str(sid)).stdout
    t.ok("\033" not in raw and "\007" not in raw and "\\033[2J" in raw.replace("\\x1b", "\\033").replace("\\e", "\\033"),
         "its control characters are shown, not sent to the terminal", listed)
    t.ok(any("xxxx" in x and "[cut:" in x for x in listed), "its 20 KB line is cut, and says so", [x[-120:] for x in listed])
    t.ok(all(len(x.encode()) < 9000 for x in listed), "no listed line is longer than the cap allows",
         [len(x) for x in listed])
    events = read_jsonl(os.path.join(w.session_dir(sid), "events.jsonl"))
    ends = [e for e in events if e.get("event") == "command_ended"]
    t.ok(len(ends) == len({e.get("command") for e in ends}), "a stray end mark ends nothing twice, nothing else",
         ends)


def test_shell(t):
    """A session sees SHELL although the server was started without one
    (the user's shell, as tmux gives its panes)."""
    cwd = workspace("shell")
    sid, r = start(cwd, ["sh", "-c", 'printf %s "$SHELL" > shell.txt'])
    t.ok(sid is not None and ended(sid, 60), "a session that writes down its SHELL", r.stderr)
    want = pwd.getpwuid(os.getuid()).pw_shell
    if not (want.startswith("/") and os.access(want, os.X_OK)):
        want = "/bin/sh"
    path = os.path.join(cwd, "shell.txt")
    got = open(path).read() if os.path.exists(path) else None
    t.eq(got, want, "a server started without SHELL gives its sessions the user's shell", os.listdir(cwd))


def test_zsh_commands(t):
    """An agent whose shell is zsh (SHELL names it) and that sources
    CLAUDE_ENV_FILE in each command's shell, as Claude Code does: its
    zsh -c is a command too."""
    if not shutil.which("zsh"):
        t.skip("zsh -c sourcing CLAUDE_ENV_FILE is a command", "zsh is not installed (bootstrap installs it)")
        return
    cwd = workspace("zsh")
    sid, r = start(cwd, ["sh", "-c", 'zsh -c \'. "$CLAUDE_ENV_FILE"; echo z > z.txt\'; '
                                     'zsh -c \'. "$CLAUDE_ENV_FILE"; zsh -c ". \\"\\$CLAUDE_ENV_FILE\\"; exit 4"\''])
    t.ok(sid is not None and ended(sid, 60), "a session running two zsh -c that source CLAUDE_ENV_FILE", r.stderr)
    listed = commands(sid, 3)
    t.ok(len(listed) == 3 and "echo z > z.txt" in listed[1] and " +1 " in listed[1],
         "a zsh -c that sources CLAUDE_ENV_FILE is a command, with its diff", listed)
    t.ok(len(listed) == 3 and "exit 4" in listed[2], "the nested one is not one more", listed)


DOOR_PROBE = r"""
import json, socket
def ask(msg):
    s = socket.create_connection(("127.0.0.1", 3129))
    s.sendall(json.dumps(msg).encode())
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return data.decode()
        data += chunk
print("escalate:", ask({"verb": "escalate", "argv": ["true"], "cwd": "/"}))
print("garbage:", ask("not a message"))
print("start:", ask({"verb": "mark", "what": "start", "line": "probe", "cwd": "/"}))
"""


def test_door(t):
    """Without fd 3 (as agents start their commands), bash -c marks through
    the sandbox's door, which takes marks and nothing else."""
    cwd = workspace("door")
    with open(os.path.join(cwd, "probe.py"), "w") as f:
        f.write(DOOR_PROBE)
    sid, r = start(cwd, ["sh", "-c", 'exec 3>&-; bash -c "echo d > d.txt"; python3 probe.py > probe.out 2>&1'])
    t.ok(sid is not None and ended(sid, 60), "a session whose program closed fd 3 runs a bash -c", r.stderr)
    listed = commands(sid, 2)
    t.ok(any("echo d > d.txt" in x and " +1 " in x for x in listed), "its command is marked through the door", listed)
    out = open(os.path.join(cwd, "probe.out")).read() if os.path.exists(os.path.join(cwd, "probe.out")) else ""
    t.ok("escalate:" in out and "only marks come through this door" in out.split("escalate:")[1].split("\n")[0],
         "an escalation through the door is refused", out)
    t.ok("garbage:" in out and '"failed"' in out.split("garbage:")[1].split("\n")[0],
         "a message that is not JSON gets a failed reply", out)
    t.ok(re.search(r'"command":\s*[1-9]', out.split("start:")[1]) is not None if "start:" in out else False,
         "a start mark gets its number", out)


def cleanup():
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)


try:
    run_tests(Tap(), [test_bash_commands, test_program_edits_between, test_hooked_shell, test_exec,
                      test_hostile_line, test_door, test_shell, test_zsh_commands, test_codex, test_claude, test_gemini])
finally:
    cleanup()
