#!/usr/bin/env python3
"""Shell completion (src/shell/completion/), through real bash and zsh and
the real binary and server: verbs, a verb's options, the running server's
session ids, and nothing (so the shell completes file names) where a
directory or a command comes."""
import os
import shutil
import subprocess

from harness import CORRAL, TIMEOUT, Tap, World, run_tests

SRC = os.path.dirname(os.environ.get("CORRAL_TESTS_SRCDIR") or os.path.join(os.path.dirname(__file__), ".."))
BASH_FILE = os.path.join(SRC, "src", "shell", "completion", "bash", "corral")
ZSH_FILE = os.path.join(SRC, "src", "shell", "completion", "zsh", "_corral")

w = World()
w.start_server()
ENV = dict(w.env, PATH=os.path.dirname(os.path.abspath(CORRAL)) + os.pathsep + os.environ.get("PATH", ""))
SID = w.corral("new", "-n", "compl", "--", "sleep", "1000").stdout.strip()


def bash_complete(*words):
    """COMPREPLY for a command line whose last word is being completed."""
    arr = " ".join("'%s'" % x for x in words)
    script = ('source "%s"; COMP_WORDS=(%s); COMP_CWORD=%d; _corral; printf "%%s\\n" "${COMPREPLY[@]}"'
              % (BASH_FILE, arr, len(words) - 1))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=ENV, capture_output=True, text=True,
                       timeout=TIMEOUT)
    return [x for x in r.stdout.splitlines() if x], r.stderr


def zsh_complete(*words):
    """What _corral hands to compadd, or FILES when it leaves it to _files
    (both stubbed: the completion system itself is zsh's)."""
    arr = " ".join("'%s'" % x for x in words)
    script = ('compadd() { [[ $1 == -a ]] && print -rl -- "${(@P)2}" }; _files() { print FILES }; '
              'words=(%s); CURRENT=%d; source "%s"' % (arr, len(words), ZSH_FILE))
    r = subprocess.run(["zsh", "-f", "-c", script], env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
    return [x for x in r.stdout.splitlines() if x], r.stderr


def test_bash(t):
    got, err = bash_complete("corral", "rep")
    t.eq(got, ["replay"], "a verb from its first letters", err)
    got, err = bash_complete("corral", "replay", "--sp")
    t.eq(got, ["--speed"], "a verb's option, from its own usage", err)
    got, err = bash_complete("corral", "kill", "")
    t.ok(SID in got, "a session id of the running server", (got, err))
    got, err = bash_complete("corral", "exec", "-C", "")
    t.eq(got, [], "after -C nothing of corral's: bash completes directories (compopt -o default)", err)
    got, err = bash_complete("corral", "exec", "--", "ls", "--co")
    t.eq(got, [], "the command after -- is the command's own: nothing of corral's", err)


def test_zsh(t):
    if not shutil.which("zsh"):
        t.skip("zsh completion", "zsh is not installed")
        return
    got, err = zsh_complete("corral", "rep")
    t.eq(got, ["replay"], "a verb from its first letters", err)
    got, err = zsh_complete("corral", "pin", "")
    t.ok(SID in got, "session ids", (got, err))
    got, err = zsh_complete("corral", "sandbox", "-C", "")
    t.eq(got, ["FILES"], "a directory after -C: _files", err)


def test_no_server_is_started(t):
    w.stop()
    got, err = bash_complete("corral", "kill", "")
    t.eq(got, [], "with no server, no ids", err)
    t.ok(not os.path.exists(w.socket_path), "and completing never starts one")


run_tests(Tap(), [test_bash, test_zsh, test_no_server_is_started])
