#!/usr/bin/env python3
"""The config file as the supervisor screen shows it: a typo never keeps a
person from the screen (it opens with every error listed: the first in the
status bar, all of them under ?), an edit of the file shows at once as
"the server runs older settings" naming the line, and R reads the file
again for the screen and the server."""
import os

from tuilib import Tap, Term, World, run_tests, CORRAL

w = World(config="[approvals]\ntimeout = 10m\n")
w.start_server()
ENV = dict(w.env, LANG="C.UTF-8")
PATH = os.path.join(w.config, "corral", "config")
# Three typos: one the screen reads, one it binds, one only the server reads.
TYPOS = ("[approvals]\ntimeout = 10m\n"
         "[ui]\nsidebar-widht = 30\n"
         "[keys]\nfrobnicate = F\n"
         "[limits]\nexec-lifetime = 5x\n")


def tui(rows=60, cols=200):
    return Term([CORRAL], rows=rows, cols=cols, env=ENV, cwd=w.ws)


def test_typos_do_not_lock_out(t):
    w.write_config(TYPOS)
    with tui() as term:
        term.supervisor_ready()
        s = term.wait("3 errors, ? lists them")
        bar = s.split("\n")[-1]
        t.ok("config: 3 errors, ? lists them; " in bar and "config:4: unknown key 'sidebar-widht' in [ui]" in bar,
             "the screen opens; the status bar names the first error (file:line)", bar)
        t.ok("the server runs older settings (config:7 changed); R reloads" in s.replace("\n", ""),
             "and that the running server's settings are not the file's, with the line", s)
        term.send("?")
        s = term.wait("R reads the file again")
        flat = s.replace("\n", " ")
        t.ok("Config file %s" % PATH in s, "? names the config file", s)
        for line, what in [(4, "unknown key 'sidebar-widht' in [ui]"), (6, "unknown action 'frobnicate' in [keys]"),
                           (8, "limits.exec-lifetime: '5x' is not a duration")]:
            t.ok("%s:%d: %s" % (PATH, line, what) in flat, "and lists %s:%d in full" % (PATH, line), s)
        t.ok("line 7 changed since it read it" in s, "and says which line the server has not read", s)
        term.send("q")
        term.wait_absent("R reads the file again")
        term.supervisor_ready()
        term.send("R")
        s = term.wait("the server keeps its settings: the file has 3 errors")
        t.ok(True, "R: the server refuses a file with an error in what it reads, and the screen says so")


def test_edit_then_reload(t):
    w.write_config("[approvals]\ntimeout = 10m\n")
    w.corral("reload")
    with tui() as term:
        term.supervisor_ready()
        term.settle()
        t.ok("config" not in term.screen().split("\n")[-1], "a file the server runs: nothing said",
             term.screen().split("\n")[-1])
        w.write_config("[approvals]\ntimeout = 10m\n\n# later\n[ui]\nmouse = true\n[session]\nscrollback = 5000\n")
        term.wait("config: the server runs older settings (config:7 changed); R reloads")
        t.ok(True, "an edit shows without a key, at the first line the server reads that changed (not a "
             "comment, not [ui])")
        term.send("R")
        term.wait("reloaded config")
        s = term.wait_absent("older settings")
        t.ok(True, "R: the server reads the file, and the notice goes")
        r = w.corral("reload")
        t.eq(r.returncode, 0, "the server's settings are the file's", r.stderr)


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_typos_do_not_lock_out, test_edit_then_reload])
    finally:
        w.cleanup()
