#!/usr/bin/env python3
"""Escalations through the real server, answered with the CLI (the TUI's
dialog has its own test): corral escalate from inside a sandboxed session
over its session channel (path 2), the shell hook of interactive bash and
zsh sessions (path 3), and the one retry offered when a sandboxed exec
fails like a sandbox denial (path 4).  Every request ends in the same
approval queue; the session channel accepts nothing but requests, and bad
messages on it never hurt the server."""
import base64
import json
import os
import shutil
import subprocess
import tempfile

from harness import CORRAL, TIMEOUT, Tap, World, pid_alive, read_jsonl, run_tests, wait_until

RULES = '''prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="use trash instead")
prefix_rule(pattern=["touch", "deployed"], decision="prompt", justification="deploys")
prefix_rule(pattern=["forbidden-tool"], decision="forbidden", justification="never from a session")
'''

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server()
mon = w.connect("monitor")
mon.call({"cmd": "subscribe"})
# A place on the host the sandbox sees read-only: /var/tmp is not the
# sandbox's private /tmp, and not in the workspace.
outside = tempfile.mkdtemp(prefix="corral-esc-", dir="/var/tmp")


def next_message(pred, what):
    """The first message (kept or new) on the monitor that pred accepts;
    the others stay queued for later waits."""
    for i, m in enumerate(mon.events):
        if pred(m):
            return mon.events.pop(i)
    while True:
        m = mon.read_msg()
        if pred(m):
            return m
        mon.events.append(m)


def next_approval(kind=None):
    m = next_message(lambda m: m.get("event") == "approval" and (kind is None or m["approval"]["kind"] == kind),
                     "approval")
    return m["approval"]


def approval_done(aid):
    return next_message(lambda m: m.get("event") == "approval_done" and m.get("approval") == aid, "approval_done")


def screen_until(sid, marker):
    """The session's terminal bytes (a watch) until marker shows."""
    data = b""
    while marker.encode() not in data:
        m = next_message(lambda m: m.get("event") == "term" and m.get("session") == sid, "term")
        data += base64.b64decode(m["data_b64"])
    return data.decode(errors="replace")


def exec_bg(*args):
    return subprocess.Popen([CORRAL, "exec", "-C", w.ws] + list(args), env=w.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def in_session(script, yield_ms="30000"):
    """A sandboxed exec session running sh -c script, in the background."""
    return exec_bg("--yield", yield_ms, "--", "sh", "-c", script)


# ---- path 2: corral escalate ---------------------------------------------------

def test_escalate_outside_a_session(t):
    env = dict(w.env)
    env.pop("CORRAL_SESSION_FD", None)
    r = subprocess.run([CORRAL, "escalate", "--", "true"], env=env, capture_output=True, text=True, timeout=TIMEOUT)
    t.eq(r.returncode, 126, "corral escalate outside a session does not run anything (exit 126)", r.stderr)
    t.ok("only inside a corral session" in r.stderr, "and says it works only inside a session", r.stderr)


def test_corral_on_path_in_every_shell(t):
    """corral escalate must be found by the shells a session starts: a login
    bash (exec -c and an agent's exec_command run bash -lc, whose profile
    sets PATH anew), a plain bash -c and sh -c; CORRAL_BIN is absolute."""
    for argv in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"]):
        r = subprocess.run([CORRAL, "exec", "--raw", "-C", w.ws, "--"] + argv +
                           ['command -v corral; case "$CORRAL_BIN" in /*) echo ABSOLUTE;; esac; '
                            'corral escalate --help >/dev/null 2>&1 && echo ESCALATE-FOUND'],
                           env=w.env, capture_output=True, text=True, timeout=TIMEOUT)
        t.ok(r.stdout.startswith("/") and "ABSOLUTE" in r.stdout and "ESCALATE-FOUND" in r.stdout,
             "%s: corral is on PATH and CORRAL_BIN is absolute" % " ".join(argv), r.stdout + r.stderr)
    r = subprocess.run([CORRAL, "exec", "--raw", "-C", w.ws, "--", "env", "-u", "BASH_ENV", "bash", "-lc",
                        "command -v corral || echo NOT-FOUND"], env=w.env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    profile_resets = "NOT-FOUND" in r.stdout
    t.diag("this machine's login profile %s PATH" % ("resets" if profile_resets else "keeps"))
    # An interactive login shell reads no BASH_ENV: corral starts it with its
    # hook, which reads the login files, then puts corral back on PATH.
    sid = int(w.corral("new", "-n", "login", "-C", w.ws, "--", "bash", "-l").stdout.split()[0])
    mon.call({"cmd": "watch", "session": sid})
    mon.call({"cmd": "input", "session": sid, "data": "command -v corral; echo hooked=${__corral_hooked-no}; "
              "echo profile=${PROFILE_READ-no}-$((40+2))\r"})
    seen = mon.screen_until(sid, "-42")
    t.ok("/run/corral/bin/corral" in seen and "hooked=1" in seen,
         "bash -l as a session: corral is on PATH and the shell hook checks its lines", seen)
    w.corral("kill", str(sid))


def test_escalate_approved(t):
    target = os.path.join(outside, "escalated")
    p = in_session("touch %s 2>&1; echo sandboxed=$?; corral escalate --reason 'write the release notes' -- "
                   "sh -c 'touch %s && echo escalated-ran pager=$PAGER; exit 3'; echo status=$?" % (target, target))
    a = next_approval("escalate")
    t.eq(a["argv"], ["sh", "-c", "touch %s && echo escalated-ran pager=$PAGER; exit 3" % target],
         "the request carries the exact argv from inside the session")
    t.eq(a.get("justification"), "write the release notes", "and the reason typed with it")
    t.ok(isinstance(a.get("session"), int) and a["permissions"]["sandbox"] == "escalated",
         "it names its session and asks to leave the sandbox", a)
    t.ok(not os.path.exists(target), "nothing ran before the answer")
    r = w.corral("approve", str(a["id"]))
    t.eq(r.returncode, 0, "corral approve answers it", r.stderr)
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("Read-only file system" in out and "sandboxed=1" in out, "the session itself cannot write there", out)
    t.ok(os.path.exists(target), "approved, the command ran outside the sandbox and wrote on the host")
    t.ok("escalated-ran" in out, "its output went to the requester's stdout, in the session's output", out)
    t.ok("pager=cat" in out, "and it ran with an agent's non-interactive environment (PAGER=cat)", out)
    t.ok("status=3" in out, "corral escalate exits with the command's status", out)
    t.ok("corral escalate: request %d approved; running it now" % a["id"] in out + err,
         "after the answer, corral escalate says the command runs", out + err)
    events = [e["event"] for e in read_jsonl(os.path.join(w.session_dir(a["session"]), "events.jsonl"))]
    t.ok("approval_requested" in events and "approval_decided" in events and "escalated" in events and
         "escalation_ended" in events, "the session's log has the request, the decision and the run", events)


def test_escalate_denied_with_note(t):
    target = os.path.join(outside, "denied")
    p = in_session("corral escalate -- touch %s; echo status=$?" % target)
    a = next_approval("escalate")
    r = w.corral("deny", "--note", "use the workspace copy", str(a["id"]))
    t.eq(r.returncode, 0, "corral deny answers it", r.stderr)
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("status=126" in out, "a denied escalation exits 126", out)
    t.ok("denied" in out and "use the workspace copy" in out, "with the denial and the user's note", out)
    t.ok(not os.path.exists(target), "and nothing ran")


def test_escalate_wider_sandbox(t):
    allowed = tempfile.mkdtemp(prefix="corral-esc-w-", dir="/var/tmp")
    p = in_session("corral escalate -w %s -- sh -c 'touch %s/in && echo wrote-in; touch %s/out 2>&1; echo out=$?'"
                   % (allowed, allowed, outside))
    a = next_approval("escalate")
    t.eq((a["permissions"]["sandbox"], a["permissions"]["write"]), ("more", [allowed]),
         "-w asks for a wider sandbox with that path writable")
    w.corral("approve", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok(os.path.exists(os.path.join(allowed, "in")) and "wrote-in" in out, "the path given is writable", out)
    t.ok("out=1" in out and not os.path.exists(os.path.join(outside, "out")),
         "anything else is still refused: the command ran sandboxed", out)
    shutil.rmtree(allowed, ignore_errors=True)


def test_escalate_forbidden_by_rule(t):
    p = in_session("corral escalate -- forbidden-tool --now; echo status=$?")
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("status=126" in out and "never from a session" in out, "a rule's forbidden refuses it without asking",
         out)
    t.eq(json.loads(w.corral("approvals", "--json").stdout), [], "and nothing waits for approval")


def test_escalate_requester_gone(t):
    p = in_session("corral escalate -- true")
    a = next_approval("escalate")
    p.kill()
    p.wait()
    # corral exec going away ends its session (the stream's owner); the
    # request is withdrawn with it.
    w.corral("kill", str(a["session"]))
    done = approval_done(a["id"])
    t.eq(done.get("answer"), "gone", "when the requester goes away, its request is withdrawn", done)


def test_escalated_ends_with_session(t):
    p = in_session("corral escalate -- sleep 1000", yield_ms="250")
    a = next_approval("escalate")
    w.corral("approve", str(a["id"]))
    log = os.path.join(w.session_dir(a["session"]), "events.jsonl")
    ev = wait_until(lambda: [e for e in read_jsonl(log) if e["event"] == "escalated"])
    t.ok(ev, "the escalated command started", read_jsonl(log))
    pid = ev[0]["pid"] if ev else 0
    t.ok(pid_alive(pid), "it is running (outside the sandbox, under the server)")
    p.communicate(timeout=TIMEOUT)
    w.corral("kill", str(a["session"]))
    t.ok(wait_until(lambda: not pid_alive(pid)), "killing its session ends it: nothing outlives its session")


CHANNEL_ABUSE = r'''
import array, json, os, socket, sys
chan = socket.socket(fileno=3)
def ask(obj, fds=()):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    chan.sendmsg([json.dumps(obj).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno()] + list(fds)))])
    b.close()
    a.settimeout(20)
    return a.recv(65536).decode()
chan.send(b"not json and no reply socket")
try:
    chan.send(b"x" * (1 << 20))
except OSError as e:
    print("huge:", e.errno)
print("verb:", ask({"verb": "approve", "id": int(sys.argv[1]), "cwd": "/"}))
print("garbage:", ask({"verb": "escalate"}))
print("noargv:", ask({"verb": "escalate", "cwd": "/", "argv": []}, [0, 1, 2]))
print("nofds:", ask({"verb": "escalate", "cwd": "/", "argv": ["true"]}))
print("relative:", ask({"verb": "escalate", "cwd": "/", "argv": ["true"], "write": ["rel"]}, [0, 1, 2]))
r, wr = os.pipe()
chan.sendmsg([b'{"verb":"check","cwd":"/","shell":"bash","line":"true"}'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
print("done")
'''


def test_channel_is_requests_only(t):
    waiting = in_session("corral escalate -- true")
    a = next_approval("escalate")
    script = os.path.join(w.ws, "abuse.py")
    with open(script, "w") as f:
        f.write(CHANNEL_ABUSE)
    r = w.corral("exec", "-C", w.ws, "--", "python3", script, str(a["id"]))
    out = r.stdout
    t.ok("unknown verb" in out and "verb:" in out, "the channel has no verb to answer a request", out)
    t.ok("garbage:" in out and "needs 'verb' and 'cwd'" in out, "a malformed request gets a failure", out)
    t.ok("noargv:" in out and "non-empty 'argv'" in out, "an empty argv is refused", out)
    t.ok("nofds:" in out and "stdin, stdout and stderr" in out, "escalate without stdio is refused", out)
    t.ok("relative:" in out and "absolute" in out, "relative write paths are refused", out)
    t.ok("done" in out, "messages without a reply socket, or with a pipe as one, are dropped", out + r.stderr)
    pending = json.loads(w.corral("approvals", "--json").stdout)
    t.eq([x["id"] for x in pending], [a["id"]], "the pending request is still pending: only a human answers it")
    t.eq(w.corral("ls").returncode, 0, "the server is unharmed")
    w.corral("deny", str(a["id"]))
    waiting.communicate(timeout=TIMEOUT)


FLOOD = r'''
import array, json, socket
chan = socket.socket(fileno=3)
keep, states = [], []
for i in range(10):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    msg = json.dumps({"verb": "escalate", "cwd": "/", "argv": ["true", str(i)]}).encode()
    chan.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), 0, 1, 2]))])
    b.close()
    a.settimeout(20)
    states.append(json.loads(a.recv(65536))["state"])
    keep.append(a)
print("states:", " ".join(states))
'''


def test_channel_flood_capped(t):
    script = os.path.join(w.ws, "flood.py")
    with open(script, "w") as f:
        f.write(FLOOD)
    r = w.corral("exec", "-C", w.ws, "--", "python3", script)
    t.ok("states: " + " ".join(["pending"] * 8 + ["failed"] * 2) in r.stdout,
         "a session can have at most 8 requests open; more are refused", r.stdout + r.stderr)
    gone = [approval_done(a["id"]) for a in [next_approval("escalate") for _ in range(8)]]
    t.ok(all(d.get("answer") == "gone" for d in gone), "and they are withdrawn when the requester exits", gone)


LONG_PATH = r'''
import array, json, os, shutil, socket
chan = socket.socket(fileno=3)
top = d = os.path.join(os.getcwd(), "deep")
os.mkdir(top)
for i in range(14):
    d = os.path.join(d, "\u00e9" * 127)
    os.mkdir(d)
def ask(obj):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    chan.sendmsg([json.dumps(obj).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), 0, 1, 2]))])
    b.close()
    a.settimeout(20)
    return a.recv(65536).decode()
# The error names the path twice and is cut: one of these two cuts falls
# inside a two-byte character.
for k in range(2):
    missing = os.path.join(d, "x" * k + "\u00e9" * 100, "y")
    print("reply:", ask({"verb": "escalate", "cwd": "/", "argv": ["true"], "write": [missing]}))
shutil.rmtree(top)
'''


def test_channel_long_path_error(t):
    script = os.path.join(w.ws, "longpath.py")
    with open(script, "w") as f:
        f.write(LONG_PATH)
    r = w.corral("exec", "-C", w.ws, "--", "python3", script)
    replies = [json.loads(line[len("reply: "):]) for line in r.stdout.splitlines() if line.startswith("reply: {")]
    t.eq(len(replies), 2, "a write path whose error is cut short still gets a reply", r.stdout + r.stderr)
    t.ok(all(x.get("state") == "failed" and "write path: " in x.get("message", "") for x in replies),
         "it says what failed", replies)


# ---- path 3: the shell hook ---------------------------------------------------

def start_shell(shell):
    r = mon.call({"cmd": "new", "argv": [shell], "cwd": w.ws, "name": shell + "-hooked"})
    sid = r["session"]["id"]
    mon.call({"cmd": "watch", "session": sid})
    return sid


def type_line(sid, line):
    mon.call({"cmd": "input", "session": sid, "data": line + "\r"})


def shell_tests(t, shell):
    sid = start_shell(shell)
    type_line(sid, "echo hook-ready-$((40+2))")
    screen_until(sid, "hook-ready-42")
    type_line(sid, "touch %s-a; rm -rf junk; touch %s-b; echo line1-$((1+1))" % (shell, shell))
    type_line(sid, "echo next-$((2+3))")
    text = screen_until(sid, "next-5")
    t.ok("was not run" in text and "use trash instead" in text,
         "%s: a forbidden line is not run and the reason is printed" % shell, text)
    t.ok(not os.path.exists(os.path.join(w.ws, shell + "-a")) and "line1-2" not in text,
         "%s: no part of that line ran" % shell, text)
    type_line(sid, "touch deployed")
    a = next_approval("command")
    t.ok(a.get("session") == sid and "touch deployed" in " ".join(a["argv"]),
         "%s: a line the policy asks about waits in the approval queue" % shell, a)
    w.corral("approve", str(a["id"]))
    # Keys typed before the hook hears the answer are dropped with it (they
    # were meant for the dialog): the next line is typed once the line ran.
    wait_until(lambda: os.path.exists(os.path.join(w.ws, "deployed")))
    type_line(sid, "echo after-$((3+4))")
    screen_until(sid, "after-7")
    t.ok(os.path.exists(os.path.join(w.ws, "deployed")), "%s: approved, the line runs" % shell)
    os.unlink(os.path.join(w.ws, "deployed"))
    type_line(sid, "touch deployed")
    a = next_approval("command")
    w.corral("deny", "--note", "not today", str(a["id"]))
    text = screen_until(sid, "not today")  # the hook heard the answer (and dropped what was typed before it)
    type_line(sid, "echo denied-$((4+5))")
    text += screen_until(sid, "denied-9")
    t.ok(not os.path.exists(os.path.join(w.ws, "deployed")) and "not today" in text,
         "%s: denied, it does not run and the note is shown" % shell, text)
    # Ctrl-C in the shell while its line waits: the request is withdrawn
    # (as every screen's "Waiting:" line says), and nothing runs.
    type_line(sid, "touch deployed")
    a = next_approval("command")
    t.ok("Ctrl-C there withdraws" in a.get("waiter", ""), "%s: the request says who waits: the shell" % shell, a)
    mon.call({"cmd": "input", "session": sid, "data": "\x03"})
    done = approval_done(a["id"])
    type_line(sid, "echo interrupted-$((5+5))")
    text = screen_until(sid, "interrupted-10")
    t.ok(done.get("answer") == "gone" and not os.path.exists(os.path.join(w.ws, "deployed")),
         "%s: Ctrl-C withdraws the waiting line's request, and it does not run" % shell, (done, text))
    return sid


def test_bash_hook(t):
    sid = shell_tests(t, "bash")
    # A line kept out of history is checked command by command.
    type_line(sid, "HISTCONTROL=ignorespace")
    type_line(sid, " touch hidden-a; rm -rf junk; touch hidden-b")
    type_line(sid, "echo hist-$((5+6))")
    text = screen_until(sid, "hist-11")
    t.ok("use trash instead" in text and not os.path.exists(os.path.join(w.ws, "hidden-b")),
         "bash: a line kept out of history is still checked; from the refused command on nothing runs", text)
    mon.call({"cmd": "kill", "session": sid})


def test_zsh_hook(t):
    if not shutil.which("zsh"):
        t.skip("zsh: the shell hook", "zsh is not installed")
        return
    sid = shell_tests(t, "zsh")
    mon.call({"cmd": "kill", "session": sid})


BASHRC = r'''
# The user's own prompt commands: a string ending in ';' (as tools such as
# pyenv leave it), or a bash 5.1 array, chosen by a marker file.
if [ -e use-array ]; then
    PROMPT_COMMAND=("touch pc-array")
else
    PROMPT_COMMAND='touch pc-string;'
fi
echo user-bashrc-read
'''


def test_bash_hook_keeps_user_prompt_command(t):
    home = tempfile.mkdtemp(prefix="corral-home-", dir="/var/tmp")  # visible (read-only) in the sandbox
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write(BASHRC)
    other = World()
    os.makedirs(os.path.join(other.config, "corral", "rules"), exist_ok=True)
    with open(os.path.join(other.config, "corral", "rules", "user.rules"), "w") as f:
        f.write(RULES)
    other.start_server(extra_env={"HOME": home})
    c = other.connect("screen")
    try:
        for form, cwd in (("string", other.ws), ("array", os.path.join(other.ws, "arr"))):
            os.makedirs(cwd, exist_ok=True)
            if form == "array":
                open(os.path.join(cwd, "use-array"), "w").close()
            sid = c.call({"cmd": "new", "argv": ["bash"], "cwd": cwd})["session"]["id"]
            c.call({"cmd": "watch", "session": sid})
            c.call({"cmd": "input", "session": sid, "data": "rm -rf junk; echo not-$((1+1))\r"})
            c.call({"cmd": "input", "session": sid, "data": "echo done-$((2+2))\r"})
            data = b""
            while b"done-4" not in data:
                m = c.events.pop(0) if c.events else c.read_msg()
                if m.get("event") == "term" and m.get("session") == sid:
                    data += base64.b64decode(m["data_b64"])
            text = data.decode(errors="replace")
            t.ok("user-bashrc-read" in text and "syntax error" not in text,
                 "bash, PROMPT_COMMAND as a %s: the user's .bashrc is read and its prompt command kept" % form, text)
            t.ok(os.path.exists(os.path.join(cwd, "pc-" + form)), "bash (%s): the user's prompt command runs" % form)
            t.ok("use trash instead" in text and "not-2" not in text,
                 "bash (%s): and the hook still refuses a forbidden line" % form, text)
            c.call({"cmd": "kill", "session": sid})
    finally:
        c.close()
        other.cleanup()
        shutil.rmtree(home, ignore_errors=True)


# ---- path 4: one retry after a sandbox denial ---------------------------------------

def test_denial_retry_approved(t):
    target = os.path.join(outside, "retried")
    p = exec_bg("--", "touch", target)
    a = next_approval("retry")
    t.eq(a["argv"], ["touch", target], "a sandboxed exec failing like a denial offers a retry of the same argv")
    t.ok("read-only file system" in a.get("reason", "") and a["permissions"]["sandbox"] == "escalated",
         "saying why it looks like a denial, and that the retry leaves the sandbox", a)
    t.ok(isinstance(a.get("failed_session"), int) and a["failed_session"] > 0 and "failed_session_name" in a,
         "and naming the session that failed", a)
    w.corral("approve", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("exited with code 0" in out and os.path.exists(target), "approved, the retry runs and its result is the "
         "reply", out + err)


def test_denial_retry_denied(t):
    target = os.path.join(outside, "not-retried")
    p = exec_bg("--", "touch", target)
    a = next_approval("retry")
    w.corral("deny", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("exited with code 1" in out and "Read-only file system" in out, "denied, the failed run's reply comes back",
         out)
    t.ok(not os.path.exists(target), "and nothing ran again")


def test_denial_retry_once(t):
    target = os.path.join(outside, "once")
    p = exec_bg("--", "sh", "-c", "touch %s; exit 1" % target)
    a = next_approval("retry")
    w.corral("approve", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("exited with code 1" in out and os.path.exists(target), "the retry failing again is the answer", out)
    t.eq(json.loads(w.corral("approvals", "--json").stdout), [], "never a second retry")


def test_retry_needs_a_sandbox_shaped_failure(t):
    """Item 11: a keyword in the output is not a sandbox denial."""
    r = w.corral("exec", "-C", w.ws, "--", "sh", "-c", "echo 'git@host: Permission denied (publickey).' >&2; exit 1")
    t.ok("exited with code 1" in r.stdout, "'Permission denied' with no path is not the sandbox's doing: the reply "
         "comes at once", r.stdout)
    own = os.path.join(w.ws, "locked")
    os.makedirs(own, exist_ok=True)
    os.chmod(own, 0o500)
    try:
        r = w.corral("exec", "-C", w.ws, "--", "sh", "-c", "echo x > %s/f || true; echo 'Permission denied: %s/f' "
                     ">&2; exit 1" % (own, own))
    finally:
        os.chmod(own, 0o700)
    t.ok("exited with code 1" in r.stdout, "a denial inside the workspace (the host's own permissions) is not "
         "retried", r.stdout)
    t.eq(json.loads(w.corral("approvals", "--json").stdout), [], "no retry was asked")


def test_no_retry_when_nobody_can_answer(t):
    """Item 11: with no screen attached and no timeout, nobody could answer
    a retry: the exec must not hang on one."""
    lone = World()
    lone.start_server()
    try:
        r = lone.corral("exec", "-C", lone.ws, "--", "touch", os.path.join(outside, "lone"))
        t.ok("exited with code 1" in r.stdout and "Read-only file system" in r.stdout,
             "the failed run's reply comes at once", r.stdout + r.stderr)
        t.eq(json.loads(lone.corral("approvals", "--json").stdout), [], "and no retry waits for an answer")
    finally:
        lone.cleanup()


def test_no_retry_for_other_failures(t):
    r = w.corral("exec", "-C", w.ws, "--", "sh", "-c", "echo no such thing; exit 1")
    t.ok("exited with code 1" in r.stdout, "a failure that does not look like a denial returns at once", r.stdout)


def test_yield_extended_while_waiting(t):
    # What is left of the yield after the answer must hold an escalated
    # `true` and an echo, also under the sanitizers on a busy machine.
    p = in_session("corral escalate -- true; echo after-escalate", yield_ms="2000")
    a = next_approval("escalate")
    # Proving a reply did *not* come needs time to pass: well past the
    # 2 s yield, the exec is still waiting because a human is deciding.
    try:
        p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    t.ok(p.poll() is None, "while the session's request waits for a human, the exec's yield does not run out")
    w.corral("approve", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok("exited with code 0" in out and "after-escalate" in out,
         "answered, the wait goes on for the rest of its yield and sees the command finish", out)


def test_session_policy_never(t):
    r = w.corral("exec", "-C", w.ws, "--approval-policy", "never", "--", "sh", "-c",
                 "corral escalate -- true; echo status=$?")
    t.ok("status=126" in r.stdout and "approval policy never" in r.stdout,
         "a session with approval policy never refuses escalations without asking", r.stdout)
    r = w.corral("exec", "-C", w.ws, "--approval-policy", "never", "--", "touch", os.path.join(outside, "never"))
    t.ok("exited with code 1" in r.stdout, "and offers no retry after a sandbox denial", r.stdout)
    r = w.corral("exec", "-C", w.ws, "--approval-policy", "sometimes", "--", "true")
    t.ok(r.returncode == 2 and "--approval-policy wants" in r.stderr, "an unknown policy is a usage error", r.stderr)
    t.eq(json.loads(w.corral("approvals", "--json").stdout), [], "nothing was queued")


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_escalate_outside_a_session, test_corral_on_path_in_every_shell, test_escalate_approved,
                          test_escalate_denied_with_note,
                          test_escalate_wider_sandbox, test_escalate_forbidden_by_rule, test_escalate_requester_gone,
                          test_escalated_ends_with_session, test_channel_is_requests_only, test_channel_flood_capped, test_channel_long_path_error,
                          test_bash_hook, test_bash_hook_keeps_user_prompt_command,
                          test_zsh_hook, test_denial_retry_approved, test_denial_retry_denied,
                          test_denial_retry_once, test_retry_needs_a_sandbox_shaped_failure,
                          test_no_retry_when_nobody_can_answer, test_no_retry_for_other_failures,
                          test_session_policy_never,
                          test_yield_extended_while_waiting])
    finally:
        shutil.rmtree(outside, ignore_errors=True)
