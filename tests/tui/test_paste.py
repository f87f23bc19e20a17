#!/usr/bin/env python3
"""A paste through a real terminal (a private tmux server, whose
paste-buffer -p brackets a paste only for a program that asked for it):
the supervisor screen asks its terminal for bracketed paste while it runs,
not only as it exits, so a paste is never read as keys.  In supervisor
focus a pasted "xyQq" (kill, yes, stop the server, detach) is dropped with
its notice: the session, the server and the screen are all still there.
In pane focus a paste reaches a program that asked for bracketed paste
bracketed: cat -v shows ^[[200~ ... ^[[201~, and bash's readline takes it
as a paste (its bracketed-paste-begin sequence, bound to a probe)."""
import os
import re
import shlex
import subprocess
import time

from tuilib import CORRAL, TIMEOUT, Tap, World, run_tests

w = World()
w.start_server()
c = w.connect()


class Tmux:
    """A private tmux server (its own socket, no configuration) running one
    command in a detached session of a fixed size."""

    def __init__(self, argv, cols=120, rows=36):
        self.sock = os.path.join(w.base, "tmux-%d.sock" % len(os.listdir(w.base)))
        self.tmux("new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows),
                  " ".join(shlex.quote(a) for a in argv))

    def tmux(self, *args):
        r = subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null"] + list(args), env=w.env,
                           capture_output=True, timeout=TIMEOUT)
        if r.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait(self, pattern):
        """The screen once pattern (a regex, one row at a time) is on it:
        polled, as nothing announces a terminal's redraw to its reader."""
        end = time.monotonic() + TIMEOUT
        while True:
            s = self.screen()
            if re.search(pattern, s, re.M):
                return s
            if time.monotonic() > end:
                raise AssertionError("timeout waiting for %r; screen:\n%s" % (pattern, s))
            time.sleep(0.02)

    def paste(self, text):
        """What a user's paste into the terminal does: tmux sends text,
        bracketed only if the program in the pane asked for it."""
        self.tmux("set-buffer", "-b", "p", text)
        self.tmux("paste-buffer", "-p", "-b", "p", "-t", "t")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def close(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], env=w.env, capture_output=True, timeout=TIMEOUT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def new_session(name, argv):
    r = c.call({"cmd": "new", "argv": argv, "cwd": w.ws, "name": name})
    return r["session"]["id"]


def state_of(sid):
    for s in c.call({"cmd": "ls"})["sessions"]:
        if s["id"] == sid:
            return s["state"]
    return None


def test_supervisor_focus(t):
    sid = new_session("victim", ["cat"])
    with Tmux([CORRAL]) as tm:
        tm.wait("victim")
        tm.wait("^ SUPERVISOR ")
        tm.paste("xyQq")
        screen = tm.wait("a paste is not commands")
        t.ok(True, "a paste in supervisor focus is dropped, and the screen says so")
        t.eq(state_of(sid), "running", "the selected session was not killed", screen)
        t.ok("victim" in tm.screen() and w.server.poll() is None,
             "the server runs and the screen is still there", tm.screen())
    c.call({"cmd": "kill", "session": sid})


PROBE = r"""stty -echo; printf '\033[?2004hprobe-ready\n'; exec cat -v"""


def test_pane_focus_cat(t):
    sid = new_session("probe", ["sh", "-c", PROBE])
    with Tmux([CORRAL, "attach", str(sid)]) as tm:
        tm.wait("^ PANE ")
        tm.wait("probe-ready")
        tm.paste("pasted-text\n")
        tm.keys("Enter")  # cat -v prints the end bracket with the next line
        screen = tm.wait(r"\^\[\[201~")
        t.ok(re.search(r"^\^\[\[200~pasted-text$", screen, re.M) is not None,
             "a paste into a program that asked for bracketed paste arrives bracketed", screen)
    c.call({"cmd": "kill", "session": sid})


# bash's readline asks for bracketed paste at its prompt; the probe takes
# the start bracket's place, and says when it comes.
BASHRC = r"""PS1='bash-ready$ '
bind -x '"\e[200~": echo "readline-took-a-paste"'
"""


def test_pane_focus_bash(t):
    rc = os.path.join(w.ws, "probe.bashrc")
    with open(rc, "w") as f:
        f.write(BASHRC)
    sid = new_session("shell", ["bash", "--noprofile", "--rcfile", rc, "-i"])
    with Tmux([CORRAL, "attach", str(sid)]) as tm:
        tm.wait("^ PANE ")
        tm.wait("bash-ready")
        tm.paste("echo pasted")
        tm.wait("readline-took-a-paste")
        t.ok(True, "a paste at bash's prompt reaches readline bracketed (its paste's start sequence)")
    c.call({"cmd": "kill", "session": sid})


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_supervisor_focus, test_pane_focus_cat, test_pane_focus_bash])
    finally:
        w.cleanup()
