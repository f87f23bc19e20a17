#!/usr/bin/env python3
"""A request waits: every attached screen rings its terminal's bell and,
where the terminal shows one, sends it a desktop notification (OSC 9 or
OSC 777) naming the request, with nothing a sandbox chose able to end
the sequence early.  Read back from the exact bytes the screen wrote."""
import os
import re
import subprocess

from tuilib import CORRAL, Tap, Term, World, run_tests

w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write('prefix_rule(pattern=["echo", "ask"], decision="prompt", justification="asks first")\n')
w.start_server()
HOSTILE = "\x1b]0;owned\x07\x1b]9;fake\x07"


def screen(extra_env):
    env = dict(w.env, LANG="C.UTF-8")
    for k in ("TERM_PROGRAM", "WT_SESSION", "ConEmuANSI", "VTE_VERSION", "TMUX"):
        env.pop(k, None)
    env.update(extra_env)
    return Term([CORRAL], rows=30, cols=120, env=env, cwd=w.ws)


def one_request(term, word):
    """What the screen wrote from a request's arrival to its dialog."""
    term.supervisor_ready()
    mark = term.mark()
    p = subprocess.Popen([CORRAL, "exec", "-C", w.ws, "--", "echo", "ask", word, HOSTILE], env=w.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    term.wait("Would you like to run")
    term.wait(word)
    out = term.bytes_since(mark)
    for a in __import__("json").loads(w.corral("approvals", "--json").stdout):
        w.corral("deny", str(a["id"]))
    p.communicate()
    return out


def payloads(out, start):
    return [m.group(1) for m in re.finditer(re.escape(start) + rb"(.*?)\x07", out, re.S)]


def test_osc9(t):
    with screen({"TERM_PROGRAM": "WezTerm"}) as term:
        out = one_request(term, "nine")
        got = payloads(out, b"\x1b]9;")
        t.eq(len(got), 1, "a terminal that shows OSC 9 gets one notification", out[:400])
        if got:
            text = got[0].decode("utf-8", "replace")
            t.ok(text.startswith("corral: ") and "asks to run: echo ask nine" in text,
                 "naming the request", text)
            t.ok(not any(b < 0x20 or b == 0x7f for b in got[0]) and "fake" in text and "owned" in text,
                 "what the sandbox chose is in it as text: no escape of its own reaches the terminal", text)
        t.ok(b"\x1b]0;owned" not in out and b"\x1b]9;fake" not in out, "never as the terminal's own sequence")
        t.ok(b"\x07" in out.replace(b"\x1b]9;" + (got[0] if got else b"") + b"\x07", b""), "and the bell rings")


def test_osc777(t):
    with screen({"VTE_VERSION": "7600"}) as term:
        out = one_request(term, "seven")
        got = payloads(out, b"\x1b]777;notify;corral;")
        t.ok(len(got) == 1 and b"asks to run: echo ask seven" in got[0], "a VTE terminal gets OSC 777", out[:400])
        t.ok(b"\x1b]9;" not in out, "and no OSC 9")


def test_unknown_terminal(t):
    with screen({}) as term:
        out = one_request(term, "plain")
        t.ok(b"\x1b]9;" not in out and b"\x1b]777;" not in out,
             "a terminal not known to show them gets no notification sequence (it might print it)")
        t.ok(b"\x07" in out, "only the bell")


def test_tmux_passthrough_and_off(t):
    with screen({"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-0/default,1,0"}) as term:
        out = one_request(term, "tmuxed")
        t.ok(b"\x1bPtmux;\x1b\x1b]9;corral: " in out and b"\x1b\\" in out,
             "inside tmux the notification is passed through to the terminal", out[:400])
    w.write_config("[ui]\nnotify = off\n")
    try:
        with screen({"TERM_PROGRAM": "WezTerm"}) as term:
            out = one_request(term, "quiet")
            t.ok(b"\x1b]9;" not in out and b"\x07" not in out, "[ui] notify = off: neither", out[:200])
    finally:
        os.unlink(os.path.join(w.config, "corral", "config"))


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_osc9, test_osc777, test_unknown_terminal, test_tmux_passthrough_and_off])
    finally:
        w.cleanup()
