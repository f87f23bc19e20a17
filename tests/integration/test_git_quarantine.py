#!/usr/bin/env python3
"""A repository a command creates, or whose config or hooks it changes,
is made inert when the command ends, before the user's own git meets it
(docs/sandbox.md, "Repositories a command makes"): an agent's exec and a
line of a hooked shell plant a core.fsmonitor, a pre-commit hook, an
include and a .git file; the user's git on the host then runs none of it,
the command's record shows exactly what it would have run, and corral
git-restore shows it and puts it back only unchanged.  Run as root, the
file runs itself again as a temporary unprivileged user."""
import json
import os
import subprocess
import sys
import time

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

w = World()
w.start_server()
MARKER = os.path.join(w.base, "host-ran-planted-code")
GIT_ENV = dict(os.environ, HOME=w.base, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@e",
               GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@e")

PLANT = r'''
set -e
git init -q {sub}
printf '#!/bin/sh\necho hook >> {marker}\n' > {sub}/.git/hooks/pre-commit
chmod +x {sub}/.git/hooks/pre-commit
git -C {sub} config core.fsmonitor 'echo fsmonitor >> {marker}; false #'
git -C {sub} config remote.origin.url https://example.invalid/x.git
printf '[alias]\n\tst = !echo alias >> {marker}\n' > {sub}/.git/planted.inc
git -C {sub} config include.path planted.inc
'''


def sessions():
    return json.loads(w.corral("ls", "--json").stdout)["sessions"]


def newest():
    """The session started last (ids are drawn at random)."""
    return max(sessions(), key=lambda s: s["created"])["id"]


def host_git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, timeout=TIMEOUT)


def record_of(sid, n=1):
    log = w.corral("log", str(sid), "--json")
    recs = [json.loads(l) for l in log.stdout.splitlines() if l.strip()]
    return next((e for e in recs if e.get("kind") == "command" and e.get("command") == n), None)


def test_an_exec_plants_a_repository(t):
    script = PLANT.format(sub="sub", marker=MARKER)
    r = w.corral("exec", "-C", w.ws, "--", "sh", "-c", script)
    t.ok("Process exited with code 0" in r.stdout, "a command creates sub/.git with a hook, an fsmonitor and an include",
         r.stdout + r.stderr)
    sid = newest()
    sub = os.path.join(w.ws, "sub")
    # The user's own git in the new repository, as a prompt would run it.
    host_git(sub, "status")
    host_git(sub, "commit", "-q", "--allow-empty", "-m", "from the host")
    host_git(sub, "st")
    t.ok(not os.path.exists(MARKER), "the host's git status, commit and alias there run nothing planted",
         open(MARKER).read() if os.path.exists(MARKER) else "")
    t.eq(host_git(sub, "config", "remote.origin.url").stdout.strip(), "https://example.invalid/x.git",
         "what a repository needs stays (its remote)")
    rec = record_of(sid)
    text = json.dumps(rec)
    t.ok(rec and "core.fsmonitor = echo fsmonitor" in text and "include.path = planted.inc" in text and
         "hook pre-commit" in text, "the command's record names exactly what would have run", text[:3000])
    risk = rec.get("risk", []) if rec else []
    t.ok(risk and risk[0]["path"] == "sub/.git/config" and "made inert" in risk[0].get("detail", ""),
         "first among its risk marks", risk)
    d = w.corral("diff", str(sid), "1", "--name-status")
    t.ok("core.fsmonitor = echo fsmonitor" in d.stderr, "corral diff says so on stderr", d.stderr)
    # git-restore: shown first, put back only with --yes.
    r = w.corral("git-restore", str(sid), "1")
    t.ok(r.returncode == 0 and "core.fsmonitor = echo fsmonitor" in r.stdout and "--yes" in r.stdout,
         "corral git-restore shows what it would put back", r.stdout + r.stderr)
    t.ok(not os.path.exists(os.path.join(sub, ".git", "hooks", "pre-commit")), "and changes nothing without --yes")
    r = w.corral("git-restore", str(sid), "1", "--yes")
    t.ok(r.returncode == 0 and os.path.exists(os.path.join(sub, ".git", "hooks", "pre-commit")) and
         "fsmonitor" in open(os.path.join(sub, ".git", "config")).read(),
         "with --yes the hook and the config are back", r.stdout + r.stderr)


def test_restore_refuses_what_changed_since(t):
    script = PLANT.format(sub="sub2", marker=MARKER)
    w.corral("exec", "-C", w.ws, "--", "sh", "-c", script)
    sid = newest()
    rec = record_of(sid)
    moved = [q["moved_to"] for q in (rec or {}).get("quarantined", []) if q["path"].endswith("/config")]
    t.ok(len(moved) == 1, "the config was moved aside", rec)
    if not moved:
        return
    # A later command rewrites what was moved aside.
    w.corral("exec", "-C", w.ws, "--", "sh", "-c", "echo '[core]' > %s; echo '\tfsmonitor = evil' >> %s" %
             (moved[0], moved[0]))
    r = w.corral("git-restore", str(sid), "1", "--yes")
    t.ok(r.returncode != 0 and "changed since" in r.stderr, "a quarantined file changed since is not put back",
         r.stdout + r.stderr)
    t.ok("evil" not in open(os.path.join(w.ws, "sub2", ".git", "config")).read(), "the reduced config stays")


def test_a_gitfile_pointing_elsewhere(t):
    # Inside the workspace: the git directory it names is made inert (the
    # next sandbox protects it through the pointer).
    script = ("mkdir -p hidden && git init -q --bare hidden/g && git -C hidden/g config core.fsmonitor 'echo gitfile >> %s' "
              "&& mkdir -p sub3 && echo 'gitdir: ../hidden/g' > sub3/.git" % MARKER)
    w.corral("exec", "-C", w.ws, "--", "sh", "-c", script)
    sid = newest()
    host_git(os.path.join(w.ws, "sub3"), "status")
    t.ok(not os.path.exists(MARKER), "a .git file made by a command leads the host's git to nothing it planted")
    t.ok("fsmonitor" not in open(os.path.join(w.ws, "hidden", "g", "config")).read(),
         "the git directory it names was made inert")
    rec = record_of(sid)
    t.ok(rec and "core.fsmonitor = echo gitfile" in json.dumps(rec), "what it would have run is in the record", rec)
    # Outside it (a writable root of the session's: here the sandbox's own
    # /tmp, gone with it): the pointer itself goes.
    w.corral("exec", "-C", w.ws, "--", "sh", "-c", "mkdir -p sub4 && echo 'gitdir: /tmp/elsewhere/.git' > sub4/.git")
    sid = newest()
    t.ok(not os.path.exists(os.path.join(w.ws, "sub4", ".git")) and
         any(n.startswith(".git.corral-quarantined-") for n in os.listdir(os.path.join(w.ws, "sub4"))),
         "a .git file pointing out of the workspace is renamed aside", os.listdir(os.path.join(w.ws, "sub4")))
    rec = record_of(sid)
    t.ok(rec and "gitdir: /tmp/elsewhere/.git" in json.dumps(rec), "its text is in the record", rec)


def test_a_typed_line_in_a_hooked_shell(t):
    sub = os.path.join(w.ws, "typed")
    mon = w.connect("monitor")
    sid = mon.call({"cmd": "new", "argv": ["bash"], "cwd": w.ws, "name": "typed"})["session"]["id"]
    mon.call({"cmd": "watch", "session": sid})
    mon.type_line(sid, "echo ready-$((40+2))")
    mon.screen_until(sid, "ready-42")
    mon.type_line(sid, "git init -q typed && git -C typed config core.fsmonitor 'echo typed >> %s; false #'" % MARKER)
    mon.type_line(sid, "echo done-$((1+2))")
    mon.screen_until(sid, "done-3")
    # The line's record is written once its snapshot after is taken (the
    # next prompt); the record says what was made inert.
    rec = None
    for _ in range(3):
        rec = next((c for c in mon.call({"cmd": "commands", "session": sid})["commands"]
                    if c["line"].startswith("git init -q typed") and "quarantined" in c), None)
        if rec:
            break
        mon.next_event(lambda m: m.get("event") == "command" or m.get("event") == "session")
    t.ok(rec is not None and "core.fsmonitor = echo typed" in json.dumps(rec),
         "a line typed in a hooked bash that plants an fsmonitor gets a record saying it was made inert", rec)
    host_git(sub, "status")
    t.ok(not os.path.exists(MARKER), "and the host's git status there runs nothing planted")
    mon.call({"cmd": "kill", "session": sid})
    mon.close()


def test_a_repository_made_in_a_settled_directory_is_protected_next_time(t):
    """The server keeps the plan's directory listings while a directory's
    times say it is unchanged (sandbox/dents.c).  A repository made in a
    directory whose listing is kept must still be found by the next
    command's plan, its config and hooks read-only."""
    ws = os.path.join(w.base, "settled")
    os.makedirs(os.path.join(ws, "deep", "a"))
    # A listing is kept only once its directory is two seconds old: no
    # event says so, so the test lets that time pass, then a command lists
    # them (and the server keeps the listings).
    time.sleep(2.2)
    r = w.corral("exec", "-C", ws, "--", "true")
    t.ok("Process exited with code 0" in r.stdout, "a command in the settled tree", r.stdout + r.stderr)
    # What a command (or anyone) makes between two commands.
    subprocess.run(["git", "init", "-q", os.path.join(ws, "deep", "a", "new")], env=GIT_ENV, check=True)
    r = w.corral("exec", "-C", ws, "--", "sh", "-c",
                 "echo '[core] fsmonitor = planted' >> deep/a/new/.git/config; "
                 "echo '#!/bin/sh' > deep/a/new/.git/hooks/pre-commit; echo done")
    t.ok("Read-only file system" in r.stdout and "fsmonitor" not in open(
         os.path.join(ws, "deep", "a", "new", ".git", "config")).read() and
         not os.path.exists(os.path.join(ws, "deep", "a", "new", ".git", "hooks", "pre-commit")),
         "the next command finds the new repository: its config and hooks are read-only", r.stdout + r.stderr)


def test_as_an_unprivileged_user(t):
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, helpers=[os.path.join(here, "harness.py")])


if __name__ == "__main__":
    try:
        run_tests(Tap(), [test_an_exec_plants_a_repository, test_restore_refuses_what_changed_since,
                          test_a_gitfile_pointing_elsewhere, test_a_typed_line_in_a_hooked_shell,
                          test_a_repository_made_in_a_settled_directory_is_protected_next_time,
                          test_as_an_unprivileged_user])
    finally:
        w.cleanup()
