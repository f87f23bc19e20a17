#!/usr/bin/env python3
"""The shell hooks check the line that runs, whatever the shell's history
holds: hooked interactive bash and zsh sessions through the real server,
with a history already 10, 100 or 10,000 entries long (a loaded HISTFILE,
or lines typed first), bash's HISTTIMEFORMAT and HISTCONTROL, zsh's
timestamps and HIST_IGNORE_SPACE, lines that start with a space or a digit,
lines continued over several screen lines, and history expansion.  A line
a rule forbids is refused every time, and the session's timeline (corral
log --json) names each line exactly as it was typed."""
import json
import os
import shutil
import tempfile

from harness import Tap, World, run_tests

RULES = 'prefix_rule(pattern=["touch", "forbidden-mark"], decision="forbidden", justification="marked off-limits")\n'
REASON = "marked off-limits"
FORBIDDEN = "touch forbidden-mark"

# The user's startup file: the session's own settings come from a file in
# its directory, so that every session of one server can differ.
USER_RC = '[ -f "$PWD/.test-rc" ] && . "$PWD/.test-rc"\n'

home = tempfile.mkdtemp(prefix="corral-home-", dir="/var/tmp")  # visible (read-only) in the sandbox
for name in (".bashrc", ".zshrc"):
    with open(os.path.join(home, name), "w") as f:
        f.write(USER_RC)
w = World()
os.makedirs(os.path.join(w.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(w.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)
w.start_server(extra_env={"HOME": home})
mon = w.connect("monitor")


class Session:
    """One hooked shell in a directory of its own, watched."""

    def __init__(self, shell, name, rc, history=None):
        self.shell = shell
        self.cwd = os.path.join(w.ws, name)
        os.makedirs(self.cwd)
        with open(os.path.join(self.cwd, ".test-rc"), "w") as f:
            f.write(rc)
        if history is not None:
            with open(os.path.join(self.cwd, ".hist"), "w") as f:
                f.write(history)
        self.sid = mon.call({"cmd": "new", "argv": [shell], "cwd": self.cwd, "name": name})["session"]["id"]
        mon.call({"cmd": "watch", "session": self.sid})
        self.n = 0
        # What the timeline must say: the lines run and the lines refused.
        self.ran = []
        self.refused = []
        self.ready()

    def type(self, text):
        mon.type_line(self.sid, text)

    def marker(self):
        """A line that prints a fresh marker, and the screen until it
        shows: every line typed before it has been checked by then."""
        self.n += 1
        line = "echo mark-%d-$((%d+1))" % (self.sid, self.n)
        self.type(line)
        self.ran.append(line)
        return mon.screen_until(self.sid, "mark-%d-%d" % (self.sid, self.n + 1))

    def ready(self):
        self.marker()

    def runs(self, *typed, recorded=None):
        """Lines (one typed line over several screen lines) that run and
        are recorded as one command."""
        for t in typed:
            self.type(t)
        self.ran.append(recorded if recorded is not None else "\n".join(typed))
        return self.marker()

    def refused_line(self, *typed, recorded=None):
        for t in typed:
            self.type(t)
        self.refused.append(recorded if recorded is not None else "\n".join(typed))
        return self.marker()

    def timeline(self):
        r = w.corral("log", "--json", str(self.sid))
        entries = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        return ([e.get("line") for e in entries if e.get("kind") == "command"],
                [(e.get("line"), REASON in e.get("reason", "")) for e in entries if e.get("kind") == "refused"])


def shown(line):
    """A command's line as the timeline shows it: a control character
    (the newline of a line continued on the next) as '?'."""
    return "".join("?" if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 else c for c in line)


def history_lines(shell, n, timestamps=False):
    """A history file of n harmless entries, in the shell's own format."""
    out = []
    for i in range(n):
        cmd = "echo old-%d" % i
        if shell == "bash":
            out.append(("#%d\n" % (1700000000 + i) if timestamps else "") + cmd + "\n")
        else:
            out.append((": %d:0;" % (1700000000 + i) if timestamps else "") + cmd + "\n")
    return "".join(out)


def rc_for(shell, timestamps=False):
    if shell == "bash":
        rc = 'HISTFILE="$PWD/.hist"; HISTSIZE=20000; HISTFILESIZE=20000; HISTCONTROL=\n'
        if timestamps:
            rc += "HISTTIMEFORMAT='%F %T '\n"
        return rc
    rc = 'HISTFILE="$PWD/.hist"; HISTSIZE=20000; SAVEHIST=20000\n'
    if timestamps:
        rc += "setopt extended_history; HISTTIMEFORMAT='%F %T '\n"
    return rc


def check_lines(t, s, what):
    """The lines every session types, whatever its history."""
    p = "%s (%s)" % (s.shell, what)
    text = s.refused_line(FORBIDDEN)
    t.ok(REASON in text, "%s: the forbidden line is refused with the rule's reason" % p, text)
    s.runs("echo plain-$((1+1))")
    s.runs(" echo space-first-$((2+1))")
    s.runs("2>/dev/null echo digit-first-$((3+1))")
    # Shaped like the number history puts before an entry.
    s.runs("10000  2>/dev/null || echo number-first-$((4+1))")
    text = s.refused_line("12 || " + FORBIDDEN)
    t.ok(REASON in text, "%s: a forbidden line that starts with a digit is refused" % p, text)
    text = s.refused_line(" " + FORBIDDEN)
    t.ok(REASON in text, "%s: a forbidden line that starts with a space is refused" % p, text)
    s.runs('echo "two', 'lines-$((5+1))"')
    # bash keeps the line joined (the backslash and newline go), zsh as typed.
    text = s.refused_line("touch \\", "forbidden-mark", recorded=FORBIDDEN if s.shell == "bash" else None)
    t.ok(REASON in text, "%s: a forbidden line continued on a second screen line is refused" % p, text)
    # History expansion: the line that would run is checked, not the !!.
    s.type(FORBIDDEN)
    s.type("!!")
    s.refused += [FORBIDDEN, FORBIDDEN]
    text = s.marker()
    t.ok(text.count(REASON) == 2, "%s: !! after a refused line is refused too" % p, text)
    t.ok(not os.path.exists(os.path.join(s.cwd, "forbidden-mark")), "%s: no forbidden line ran" % p)


def check_timeline(t, s, what):
    p = "%s (%s)" % (s.shell, what)
    ran, refused = s.timeline()
    t.eq(ran, [shown(line) for line in s.ran], "%s: the timeline's commands are the lines exactly as typed" % p)
    t.eq(refused, [(line, True) for line in s.refused],
         "%s: its refused lines too, each with the rule's reason" % p)


def hist_ignore_space(t, s):
    """A line the shell keeps out of its history is still checked."""
    p = "%s (ignoring a line that starts with a space)" % s.shell
    s.runs("HISTCONTROL=ignorespace" if s.shell == "bash" else "setopt hist_ignore_space")
    text = s.refused_line(" " + FORBIDDEN, recorded=FORBIDDEN if s.shell == "bash" else " " + FORBIDDEN)
    t.ok(REASON in text, "%s: a forbidden line kept out of history is refused" % p, text)
    text = s.refused_line(" " + FORBIDDEN, recorded=FORBIDDEN if s.shell == "bash" else " " + FORBIDDEN)
    t.ok(REASON in text, "%s: every time" % p, text)
    t.ok(not os.path.exists(os.path.join(s.cwd, "forbidden-mark")), "%s: and it did not run" % p)


def matrix(t, shell):
    if not shutil.which(shell):
        t.skip("%s: the hook's history matrix" % shell, "%s is not installed" % shell)
        return
    sessions = []
    # Ten lines typed first: the history numbers reach two digits.
    s = Session(shell, shell + "-typed", rc_for(shell))
    for i in range(10):
        s.type("echo first-%d" % i)
        s.ran.append("echo first-%d" % i)
    s.marker()
    check_lines(t, s, "after 10 typed lines")
    hist_ignore_space(t, s)
    sessions.append((s, "after 10 typed lines"))
    for n, stamps in ((10, False), (100, True), (10000, False)):
        what = "a loaded history of %d entries%s" % (n, ", timestamps shown" if stamps else "")
        rc = rc_for(shell, stamps)
        if shell == "zsh" and n == 10:
            # zsh's hook stops a refused line with an interrupt: a user's
            # INT trap that swallows interrupts must not let it run.
            rc += "TRAPINT() { return 0; }\n"
            what += ", an INT trap that ignores interrupts"
        s = Session(shell, "%s-%d" % (shell, n), rc, history_lines(shell, n, stamps))
        check_lines(t, s, what)
        sessions.append((s, what))
    for s, what in sessions:
        check_timeline(t, s, what)
        mon.call({"cmd": "kill", "session": s.sid})


def test_bash(t):
    matrix(t, "bash")


def test_zsh(t):
    matrix(t, "zsh")


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_bash, test_zsh])
    finally:
        w.cleanup()
        shutil.rmtree(home, ignore_errors=True)
