#!/usr/bin/env python3
"""Broken rules files never take the server down (issue 9 item 8): with the
typo that once crashed it (`prefix_rule(pattern = ["git"] + "unterminated`,
free(): invalid pointer, and then no server would start) and other hostile
files in ~/.config/corral/rules/, the server starts, runs commands, keeps
the good files' rules, and reports each broken file with FILE:LINE:COLUMN
(server log, corral approvals, corral doctor, which exits 1)."""
import os
import subprocess

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

w = World()
RULES = os.path.join(w.config, "corral", "rules")
os.makedirs(RULES)


def write(name, text, mode="w"):
    path = os.path.join(RULES, name)
    with open(path, mode) as f:
        f.write(text)
    return path


TYPO = write("10-typo.rules", 'prefix_rule(pattern = ["git"] + "unterminated\n')
DEEP = write("20-deep.rules", "prefix_rule(pattern=" + "[" * 200000 + "\n")
BIG = write("30-big.rules", "# filler\n" * 200000)
GOOD = write("40-good.rules", 'prefix_rule(pattern=["touch", "forbidden-here"], decision="forbidden", '
                              'justification="the good file still loads")\n')
FIFO = os.path.join(RULES, "50-fifo.rules")
os.mkfifo(FIFO)  # opening it for reading would wait for a writer forever


def test_server_starts(t):
    try:
        w.start_server()
        started = True
    except RuntimeError as e:
        started = False
        t.diag(e)
    t.ok(started, "the server starts with broken rules files in the user's rules directory")
    r = w.corral("exec", "-C", w.ws, "--", "echo", "still here")
    t.ok(r.returncode == 0 and "still here" in r.stdout, "and runs a command", r.stdout + r.stderr)
    r = w.corral("exec", "-C", w.ws, "--", "touch", "forbidden-here")
    t.ok(r.returncode == 1 and "the good file still loads" in r.stderr,
         "the good file's rules apply (a broken file is left out alone)", r.stdout + r.stderr)
    t.ok(w.server.poll() is None, "the server is still running")


WANT = [TYPO + ":1:33: unfinished string literal (no closing \")",
        DEEP + ":1:37: lists nested more than 16 deep",
        BIG + ": too large: 1800000 bytes (a rules file holds at most 1048576 bytes)",
        FIFO + ": not a regular file"]


def test_errors_reported(t):
    log = w.server_log()
    t.ok(all(x in log for x in WANT), "the server log names each broken file and what is wrong", log)
    a = w.corral("approvals")
    t.ok("some rules were not loaded" in a.stderr and all(x in a.stderr for x in WANT),
         "corral approvals shows each error", a.stderr)
    d = subprocess.run([CORRAL, "doctor"], cwd=w.ws, env=w.env, capture_output=True, text=True, timeout=TIMEOUT)
    t.ok(d.returncode == 1, "corral doctor exits 1", "%d\n%s" % (d.returncode, d.stdout))
    t.ok(all(x in d.stdout for x in WANT) and GOOD in d.stdout, "naming each broken file with its error, and the "
         "good one as loaded", d.stdout)


def test_fixed_file_loads(t):
    write("10-typo.rules", 'prefix_rule(pattern = ["git"] + ["unterminated"], decision="forbidden")\n')
    r = w.corral("exec", "-C", w.ws, "--", "git", "unterminated")
    t.ok(r.returncode == 1 and "forbid" in r.stderr, "once fixed, the file loads at the next command", r.stderr)
    t.ok(TYPO not in w.corral("approvals").stderr, "and its error is gone")


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_server_starts, test_errors_reported, test_fixed_file_loads])
    finally:
        w.cleanup()
