#!/usr/bin/env python3
"""[notify] command through the real server: a program of the user's runs
on the host when a request starts to wait, with the request in its
environment only (never in its command line, never through a shell), what
a sandbox chose made visible and cut, and at most one run per interval
(what came meanwhile told in one run at its end)."""
import json
import os
import subprocess

from harness import CORRAL, Tap, World, run_tests, wait_until

w = World()
OUT = os.path.join(w.base, "notified")
os.makedirs(OUT)
SCRIPT = os.path.join(w.base, "notifier")
with open(SCRIPT, "w") as f:
    f.write("#!/usr/bin/env python3\n"
            "import json, os, sys, time\n"
            "name = os.path.join(sys.argv[1], 'run-%020d-%d.json' % (time.time_ns(), os.getpid()))\n"
            "with open(name + '.tmp', 'w') as f:\n"
            "    json.dump({'argv': sys.argv, 'env': dict(os.environ)}, f)\n"
            "os.rename(name + '.tmp', name)\n")
os.chmod(SCRIPT, 0o755)
PWNED = os.path.join(w.base, "pwned")
w.write_config('[notify]\ncommand = %s %s\ninterval = 5s\n' % (SCRIPT, OUT))
w.start_server()
watcher = w.connect("watcher")
watcher.call({"cmd": "subscribe"})

HOSTILE = ("\x1b]0;owned\x07\x1b[2J\r\n$(touch %s) `touch %s`; touch %s | cat & \"'\\ \u202e\x9b"
           % (PWNED, PWNED, PWNED)) + "A" * 20000


def next_approval():
    while True:
        m = watcher.events.pop(0) if watcher.events else watcher.read_msg()
        if m.get("event") == "approval":
            return m["approval"]


def ask(justification, *cmd):
    """An exec that must be approved (outside the sandbox), in the background."""
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--sandbox-permissions", "require_escalated",
                          "--justification", justification, "--"] + list(cmd),
                         env=w.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p, next_approval()


def runs():
    """Every run so far, oldest first (the files are named by the time)."""
    out = []
    for name in sorted(os.listdir(OUT)):
        if name.endswith(".json"):
            with open(os.path.join(OUT, name)) as f:
                out.append(json.load(f))
    return out


def deny(a, p):
    w.corral("deny", str(a["id"]))
    p.communicate()


def test_hostile_request(t):
    p, a = ask(HOSTILE, "true")
    wait_until(lambda: len(runs()) == 1)
    run = runs()[0]
    env = run["env"]
    t.eq(run["argv"], [SCRIPT, OUT], "the command line is the config's words, nothing of the request")
    j = env.get("CORRAL_NOTIFY_JUSTIFICATION", "")
    t.ok(j != "" and not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in j),
         "the justification reaches it in the environment with no control or invisible character", repr(j[:200]))
    t.ok("]0;owned" in j and "\\u202e" in j, "what cannot be seen is shown, not dropped", repr(j[:200]))
    t.ok("$(touch " in j and "`touch " in j, "shell syntax arrives as text", repr(j[:200]))
    t.ok(len(j.encode()) <= 2100, "a huge justification is cut", len(j))
    t.ok(not os.path.exists(PWNED), "and nothing of it ran")
    t.eq((env.get("CORRAL_NOTIFY_ID"), env.get("CORRAL_NOTIFY_KIND"), env.get("CORRAL_NOTIFY_COMMAND")),
         (str(a["id"]), "exec", "true"), "the request's id, kind and command")
    s = env.get("CORRAL_NOTIFY_SUMMARY", "")
    t.ok("asks to run outside the sandbox: true" in s, "and a one-line summary", s)
    t.eq(env.get("CORRAL_NOTIFY_WAITING"), "1", "and how many wait")
    t.ok("PATH" in env, "in the server's own environment (a desktop notifier needs its session bus)")
    deny(a, p)


def test_rate_limit(t):
    # The last run was just now: these come within the interval.
    before = len(runs())
    p1, a1 = ask("first", "echo", "one")
    p2, a2 = ask("second \x1b[31m", "echo", "two")
    wait_until(lambda: "request %d held back" % a2["id"] in w.server_log())
    t.eq(len(runs()), before, "requests within the interval start no run of their own")
    wait_until(lambda: len(runs()) == before + 1)
    env = runs()[-1]["env"]
    s = env.get("CORRAL_NOTIFY_SUMMARY", "")
    t.ok(s.startswith("2 requests came; the latest: ") and "echo two" in s,
         "one run at the interval's end tells them together", s)
    t.eq((env.get("CORRAL_NOTIFY_ID"), env.get("CORRAL_NOTIFY_WAITING")), (str(a2["id"]), "2"),
         "naming the latest and how many wait")
    t.ok("\x1b" not in env.get("CORRAL_NOTIFY_JUSTIFICATION", "x\x1b"), "its justification made visible too")
    deny(a1, p1)
    deny(a2, p2)


def test_from_inside_a_sandbox(t):
    """corral escalate from a sandboxed session: the reason and the command
    are the sandbox's own choice."""
    before = len(runs())
    script = ("corral escalate --reason \"$(printf 'why\\033]0;owned\\007 $(id) `id`; | &')\" -- "
              "sh -c 'echo \"$(printf \"\\033[2J\")\"'; echo status=$?")
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--yield", "30000", "--", "sh", "-c", script], env=w.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    a = next_approval()
    t.eq(a["kind"], "escalate", "a request from inside the sandbox")
    wait_until(lambda: len(runs()) == before + 1)
    env = runs()[-1]["env"]
    j, c = env.get("CORRAL_NOTIFY_JUSTIFICATION", ""), env.get("CORRAL_NOTIFY_COMMAND", "")
    t.ok(j.startswith("why") and "]0;owned" in j and "$(id)" in j and "`id`" in j,
         "its reason reaches the command as text", repr(j))
    t.ok(not any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in j + c), "with no control character, nor its command",
         repr(j + c))
    t.eq((env.get("CORRAL_NOTIFY_KIND"), env.get("CORRAL_NOTIFY_SESSION")), ("escalate", str(a["session"])),
         "and names the session it came from")
    t.eq(runs()[-1]["argv"], [SCRIPT, OUT], "the command line is still only the config's")
    deny(a, p)


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_hostile_request, test_rate_limit, test_from_inside_a_sandbox])
    finally:
        w.cleanup()
