#!/usr/bin/env python3
"""Unified exec over the real socket and through the CLI: envelopes, exit
statuses, early return, yields, PTY sessions, stdin-closed pipes, output
truncation."""
import os
import pty
import re
import select
import signal
import subprocess

from harness import CORRAL, TIMEOUT, Tap, World, run_tests, wait_until

ENVELOPE = re.compile(r"^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\n"
                      r"(Process exited with code (\d+)|Process running with session ID (\d+))\n"
                      r"Original token count: (\d+)\nOutput:\n(.*)$", re.S)

w = World()
w.start_server()


def test_echo_envelope(t):
    r = w.corral("exec", "--", "echo", "hi")
    m = ENVELOPE.match(r.stdout)
    t.ok(m is not None, "exec echo hi prints the envelope", r.stdout + r.stderr)
    if m:
        t.eq(m.group(2), "0", "envelope says exited with code 0")
        t.eq(m.group(4), "1", "original token count is ceil(3 bytes / 4)")
        t.eq(m.group(5), "hi\n", "output is the command's output")
    t.eq(r.returncode, 0, "exec exits 0 when it got a reply")


def test_socket_exit_code(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", "echo out; echo err >&2; exit 7"], "workdir": w.ws})
    t.eq(r.get("exit_code"), 7, "exit code 7 comes back over the socket")
    t.ok("session_id" not in r, "an exited process carries no session_id")
    t.eq(r.get("output"), "out\nerr\n", "stdout and stderr share one pipe, in order")
    t.ok(r.get("text", "").startswith("Chunk ID: "), "reply carries the envelope text")
    c.close()


def test_shell_command(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "command": "echo $((6*7)) | tr 4 X", "shell": "/bin/sh", "workdir": w.ws})
    t.eq(r.get("output"), "X2\n", "a command string runs through the shell with -lc")
    c.close()


def test_raw(t):
    r = w.corral("exec", "--raw", "--", "sh", "-c", "echo a; echo b >&2; exit 3")
    t.eq((r.stdout, r.returncode), ("a\nb\n", 3), "--raw prints plain output and exits with the command's status")
    r = w.corral("exec", "--raw", "--", "sh", "-c", "kill -9 $$")
    t.eq(r.returncode, 137, "--raw: a command killed by SIGKILL exits 128+9")
    r = w.corral("exec", "--raw", "--", "seq", "1", "200000")
    want = "".join("%d\n" % i for i in range(1, 200001))
    t.ok(r.stdout == want, "--raw streams large output whole (1.3 MB, nothing truncated)",
         "got %d bytes" % len(r.stdout))


def test_missing_command(t):
    r = w.corral("exec", "--raw", "--", "no-such-command-xyz")
    t.eq(r.returncode, 127, "a command that does not exist exits 127")
    t.ok("cannot run 'no-such-command-xyz': No such file or directory" in r.stdout,
         "and says why", r.stdout)


def test_bad_workdir(t):
    r = w.corral("exec", "-C", "/no/such/dir", "--", "true")
    t.eq(r.returncode, 1, "a missing directory is an error")
    t.ok("/no/such/dir" in r.stderr, "the error names the directory", r.stderr)
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["true"], "workdir": "/no/such/dir"})
    t.eq(r.get("error", {}).get("code"), "spawn_failed", "over the socket it is spawn_failed")
    t.eq(r["error"].get("message"), "working directory '/no/such/dir' does not exist or is not a directory",
         "with a message naming the directory")
    r = c.call({"cmd": "exec", "argv": ["true"], "workdir": "relative/dir"})
    t.eq(r.get("error", {}).get("message"), "field 'workdir' must be an absolute path", "relative workdir refused")
    c.close()


def test_early_return(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["sleep", "0.3"], "workdir": w.ws, "yield_time_ms": 30000})
    t.eq(r.get("exit_code"), 0, "a short command reports its exit")
    t.ok(r.get("wall_time_seconds", 99) < 29, "without waiting out the 30 s yield",
         "wall time %r" % r.get("wall_time_seconds"))
    c.close()


def test_running_then_poll(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", "echo started; sleep 100"], "workdir": w.ws,
                "yield_time_ms": 250})
    sid = r.get("session_id")
    t.ok(isinstance(sid, int) and 1000 <= sid < 100000, "a running sleep returns a session id in 1000..99999",
         r)
    t.ok("Process running with session ID %s\n" % sid in r.get("text", ""), "the envelope says it is running")
    t.eq(r.get("output"), "started\n", "with the output so far")
    r = w.corral("poll", "--yield", "250", str(sid))
    t.ok("Process running with session ID %s" % sid in r.stdout, "poll shows it still running later", r.stdout)
    t.ok(r.stdout.endswith("Output:\n"), "with no new output", r.stdout)
    ls = w.corral("ls")
    t.ok(re.search(r"^%s\s+sh\s+running" % sid, ls.stdout, re.M) is not None, "ls lists it as running",
         ls.stdout)
    k = w.corral("kill", str(sid))
    t.eq(k.stdout.strip(), "session %s: killed SIGKILL" % sid, "kill reports how it ended")
    r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "", "yield_time_ms": 0})
    t.eq(r.get("exit_code"), 137, "a poll after the kill reports exit code 137")
    c.close()


def test_tty_cat_echo(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["cat"], "tty": True, "workdir": w.ws, "yield_time_ms": 250})
    sid = r.get("session_id")
    t.ok(sid is not None, "a tty cat keeps running")
    r = w.corral("send", "--escapes", str(sid), "hello\\r")
    out = r.stdout.split("Output:\n", 1)[-1]
    t.eq(out, "hello\r\nhello\r\n", "cat on a tty echoes what send writes (terminal echo + cat's copy)")
    r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "\x04", "yield_time_ms": 5000})
    t.eq(r.get("exit_code"), 0, "Ctrl-D ends cat and the reply reports the exit")
    c.close()


def test_stdin_closed(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["sleep", "100"], "workdir": w.ws, "yield_time_ms": 250})
    sid = r.get("session_id")
    r = c.call({"cmd": "write_stdin", "session_id": sid, "chars": "x"})
    t.eq(r.get("error"), {"code": "stdin_closed", "message":
                          "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"},
         "writing to a tty=false process is refused with Codex's message")
    c.call({"cmd": "kill", "session": sid})
    r = c.call({"cmd": "write_stdin", "session_id": 7, "chars": ""})
    t.eq(r.get("error", {}).get("code"), "not_found", "an unknown session id is not_found")
    c.close()


def test_truncation(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["seq", "1", "100000"], "workdir": w.ws, "max_output_tokens": 100})
    out = r.get("output", "")
    head = "Warning: truncated output (original token count: 147224)\nTotal output lines: 100000\n\n"
    t.ok(out.startswith(head), "truncated output starts with Codex's warning header", out[:200])
    body = out[len(head):]
    t.ok(body.startswith("1\n2\n3\n"), "keeps the head")
    t.ok(body.endswith("99999\n100000\n"), "keeps the tail")
    m = re.search("\u2026(\\d+) tokens truncated\u2026", body)
    t.ok(m is not None and int(m.group(1)) == (588895 - 400 + 3) // 4, "marks the middle with the token count",
         m and m.group(0))
    t.eq(r.get("original_token_count"), 147224, "original token count is ceil(588895 / 4)")
    t.ok(len(body.encode()) <= 400 + 40, "and fits the 100-token budget plus the marker")
    c.close()


# What a hostile command prints to take over the terminal it reaches: an
# OSC 52 clipboard write, an OSC 0 title, a DECRQSS and a CSI 21t (both make
# the terminal answer into its input, as if typed), an 8-bit CSI (U+009B).
ATTACK = "\x1b]52;c;aGk=\x07\x1b]0;pwned\x07\x1bP$qm\x1b\\\x1b[21t\u009b6n done\n"
SHOWN = "^[]52;c;aGk=^G^[]0;pwned^G^[P$qm^[\\^[[21tM-^[6n done"
PRINT_ATTACK = ["printf", ATTACK.replace("\\", "\\\\").replace("%", "%%")]


def on_pty(*args):
    """Run the CLI with its stdout on a real terminal (a PTY); returns its
    exit status and every byte it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([CORRAL] + list(args), stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                         env=w.env)
    os.close(slave)
    out = b""
    try:
        while select.select([master], [], [], TIMEOUT)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    p.stderr.read()
    return p.wait(timeout=TIMEOUT), out


def test_escapes_visible_on_a_terminal(t):
    rc, out = on_pty("exec", "-C", w.ws, "--", *PRINT_ATTACK)
    t.ok(rc == 0 and b"\x1b" not in out and "\u009b".encode() not in out,
         "exec on a terminal: no escape sequence from the command reaches it", out)
    t.ok(SHOWN.encode() in out, "they show as cat -v shows them", out)
    rc, out = on_pty("exec", "--raw", "-C", w.ws, "--", *PRINT_ATTACK)
    t.ok(rc == 0 and b"\x1b" not in out and SHOWN.encode() in out, "exec --raw on a terminal too", out)
    r = subprocess.run([CORRAL, "exec", "--raw", "-C", w.ws, "--"] + PRINT_ATTACK, env=w.env,
                       stdout=subprocess.PIPE, timeout=TIMEOUT)
    t.eq(r.stdout, ATTACK.encode(), "exec --raw to a pipe keeps the bytes exact")
    r = subprocess.run([CORRAL, "exec", "-C", w.ws, "--"] + PRINT_ATTACK, env=w.env, stdout=subprocess.PIPE,
                       timeout=TIMEOUT)
    t.ok(r.stdout.endswith(ATTACK.encode()), "and exec to a pipe prints the output as before", r.stdout)


def test_escapes_visible_from_send_and_poll(t):
    c = w.connect()
    r = c.call({"cmd": "exec", "argv": ["cat"], "tty": True, "workdir": w.ws, "yield_time_ms": 250})
    sid = r.get("session_id")
    rc, out = on_pty("send", "--escapes", str(sid), "\\e]52;c;aGk=\\a\\e]0;pwned\\a\\r")
    t.ok(rc == 0 and b"\x1b" not in out and b"\x07" not in out, "send on a terminal: no escape from the session "
         "reaches it", out)
    t.ok(b"^[]52;c;aGk=^G^[]0;pwned^G" in out, "the one cat printed back shows as ^[ text", out)
    w.corral("kill", str(sid))
    fifo = os.path.join(w.ws, "go")
    os.mkfifo(fifo)
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", 'cat go >/dev/null; exec "$@"', "sh"] + PRINT_ATTACK,
                "workdir": w.ws, "yield_time_ms": 250})
    sid = r.get("session_id")
    t.ok(sid is not None, "a command waiting on a fifo keeps running", r)
    with open(fifo, "w"):
        pass  # it prints and exits; its output waits for a poll
    rc, out = on_pty("poll", str(sid))
    t.ok(rc == 0 and b"\x1b" not in out and SHOWN.encode() in out, "poll on a terminal shows them as ^[ text",
         out)
    os.unlink(fifo)
    c.close()


def holder_of(pid, ws):
    """Whether pid is a pre-built sandbox's holder for workspace ws."""
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
        if b"--base" not in argv:
            return False
        return os.path.realpath(ws).encode() in open("/proc/%s/mountinfo" % pid, "rb").read()
    except OSError:
        return False


def test_one_shot_commands_share_a_prebuilt_sandbox_layers_in_memory(t):
    """Commands from one base, each with a home layer of its own in memory
    (the default): nothing of any layer on disk, none made ahead."""
    v = World()
    v.write_config("[sandbox]\n    keep-warm = 1m\n")
    v.start_server()
    marker = "corral-warm-mem-%d" % os.getpid()
    layers = os.path.join(v.state, "corral", "home-layers")
    try:
        c = v.connect()

        def run(cmd):
            r = c.call({"cmd": "exec", "argv": ["sh", "-c", cmd], "workdir": v.ws})
            return r.get("output", "")
        seen = []
        for i in range(3):
            out = run("cat ~/%s >/dev/null 2>&1 || echo absent; echo %d > ~/%s; cat ~/%s" % (marker, i, marker, marker))
            seen.append(out)
            seen.append(os.path.isdir(layers))
        t.eq(seen, ["absent\n0\n", False, "absent\n1\n", False, "absent\n2\n", False],
             "memory: each command from the base writes to a home layer of its own, and none is on disk, while it "
             "runs or waiting for the next")
        holders = [p for p in os.listdir("/proc") if p.isdigit() and holder_of(p, v.ws)]
        t.eq(len(holders), 1, "memory: the commands came from one base", holders)
        t.ok(not os.path.exists(os.path.expanduser("~/" + marker)), "memory: the real home is not written")
        c.close()
    finally:
        v.cleanup()


def test_one_shot_commands_share_a_prebuilt_sandbox(t):
    """An agent's one-shot commands in one workspace start from one
    pre-built sandbox ([sandbox] keep-warm), each with its own /tmp and
    home layer (here on disk: made ahead by the server); the base (and the
    placeholders it holds) goes once keep-warm passes with no command, and
    a changed plan gets a base of its own."""
    v = World()
    secret = os.path.join(v.ws, "secret.txt")
    with open(secret, "w") as f:
        f.write("first secret\n")
    v.write_config("[sandbox]\n    keep-warm = 2s\n    deny = %s\n    home-layer-in = disk\n" % secret)
    v.start_server()
    marker = "corral-warm-%d" % os.getpid()
    try:
        c = v.connect()

        def run(cmd):
            r = c.call({"cmd": "exec", "argv": ["sh", "-c", cmd], "workdir": v.ws})
            return r.get("output", "")
        out = run("echo one > ~/%s && cat ~/%s; echo mine > /tmp/left" % (marker, marker))
        t.eq(out, "one\n", "a command writes to its home layer", out)
        out = run("cat ~/%s 2>&1 || echo absent; ls -A /tmp" % marker)
        t.ok("absent" in out.split(), "the next command, from the same base, has a home layer of its own", out)
        t.ok("left" not in out.split(), "and a /tmp of its own", out)
        t.ok(not os.path.exists(os.path.expanduser("~/" + marker)), "the real home is not written")
        t.ok(os.path.isdir(os.path.join(v.ws, ".codex")), "the base holds its placeholders while it is warm")
        layers = os.path.join(v.state, "corral", "home-layers")

        def waiting_layers():
            return sorted(os.listdir(layers)) if os.path.isdir(layers) else []
        # Two layers stay while the base is warm: the one that anchors the
        # layers directory for it, and one made ahead for its next command
        # while the last one ran (the layers of ended commands are removed
        # after their replies).
        t.ok(wait_until(lambda: len(waiting_layers()) == 2, timeout=5),
             "and, besides its own, one home layer made ahead for its next command", waiting_layers())
        ahead = set(waiting_layers())
        out = run("ls -A ~/ | grep -c %s; echo two > ~/%s" % (marker, marker))
        t.eq(out, "0\n", "the command that takes it finds it empty", out)
        t.ok(wait_until(lambda: len(waiting_layers()) == 2 and len(ahead - set(waiting_layers())) == 1, timeout=5),
             "and a new one waits for the next command", (ahead, waiting_layers()))
        out = run("cat secret.txt 2>&1")
        t.ok("first secret" not in out, "a denied file is masked in a command from the base", out)
        with open(secret + ".new", "w") as f:
            f.write("second secret\n")
        os.rename(secret + ".new", secret)  # as editors and tools save a file
        out = run("cat secret.txt 2>&1")
        t.ok("second secret" not in out, "and still after the host replaced it by a rename (the view's mask was on the old "
             "file: a new base masks the new one)", out)
        t.ok(wait_until(lambda: not os.path.exists(os.path.join(v.ws, ".codex")), timeout=TIMEOUT),
             "once keep-warm (2 s here) passes with no command, the base goes, and its placeholders with it")
        t.ok(wait_until(lambda: waiting_layers() == [], timeout=TIMEOUT),
             "and the home layer made ahead with them", waiting_layers())
        out = run("echo again")
        t.eq(out, "again\n", "a command after that starts from a new base")
        holders = [p for p in os.listdir("/proc") if p.isdigit() and holder_of(p, v.ws)]
        t.eq(len(holders), 1, "whose holder waits for the next command", holders)
        for p in holders:
            os.kill(int(p), 9)
        out = run("echo still")
        t.eq(out, "still\n", "a holder killed from outside costs nothing but the speed: the command gets a sandbox "
             "made from nothing")
        out = run("echo next")
        holders = [p for p in os.listdir("/proc") if p.isdigit() and holder_of(p, v.ws)]
        t.ok(out == "next\n" and len(holders) == 1, "and the next command has a new base", (out, holders))
        for p in holders:
            os.kill(int(p), signal.SIGSTOP)
        out = run("echo unstuck")
        t.eq(out, "unstuck\n", "a holder stopped from outside holds up nobody: after 5 s without its answer the "
             "command gets a sandbox made from nothing")
        for p in holders:
            os.kill(int(p), signal.SIGCONT)
        sub = os.path.join(v.ws, "sub")
        os.makedirs(os.path.join(sub, ".git", "objects"))
        os.makedirs(os.path.join(sub, ".git", "refs"))
        with open(os.path.join(sub, ".git", "HEAD"), "w") as f:
            f.write("ref: refs/heads/main\n")
        out = run("mkdir -p sub/.git/hooks 2>&1; touch sub/.git/hooks/pre-commit 2>&1 && echo planted")
        t.ok("planted" not in out, "a nested repository made while a base is warm is protected in the next command "
             "(its plan, and so its base, is new)", out)
        c.close()
    finally:
        v.cleanup()


try:
    run_tests(Tap(), [test_one_shot_commands_share_a_prebuilt_sandbox_layers_in_memory,
                      test_one_shot_commands_share_a_prebuilt_sandbox, test_echo_envelope, test_socket_exit_code, test_shell_command, test_raw,
                      test_missing_command, test_bad_workdir, test_early_return, test_running_then_poll,
                      test_tty_cat_echo, test_stdin_closed, test_truncation, test_escapes_visible_on_a_terminal,
                      test_escapes_visible_from_send_and_poll])
finally:
    w.cleanup()
