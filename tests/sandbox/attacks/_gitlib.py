"""What the git attacks share (not an attack: battery.py skips names that
start with '_').

Planted code writes the runner's host marker (INFO["host_marker"], a file
outside the workspace that the sandbox cannot write): if the marker exists
after the runner ran the user's own git on the host (the attack's
`host-git:` line), the host ran what the sandbox planted.

An attack with `runs: 2` is started twice in the same world, as two
commands of one session: the first (INFO["run"] == 1) prepares and prints
PREPARED, the second attacks (`phases`).
"""
import errno
import os
import shlex

from attacklib import INFO, attempt, blocked, main

MARKER = INFO.get("host_marker") or "/nonexistent/host-ran-planted-code"
DENIED = (errno.EROFS, errno.EACCES, errno.EPERM, errno.EBUSY)


def planted_script(what):
    """A shell script that records, in the host marker, that it ran."""
    return "#!/bin/sh\necho %s >> %s\nexit 0\n" % (shlex.quote("planted %s ran" % what), shlex.quote(MARKER))


def planted_command(what):
    """A one-line shell command (for core.fsmonitor and the like) that does the same."""
    return "echo %s >> %s; false #" % (shlex.quote("planted %s ran" % what), shlex.quote(MARKER))


def write_script(path, what):
    """Write an executable planted script at path (raises OSError)."""
    with open(path, "w") as f:
        f.write(planted_script(what))
    os.chmod(path, 0o755)


def attempt_script(path, what):
    """Planting a script at path must be refused."""
    attempt("write %s" % path, lambda: write_script(path, what), *DENIED)


def plant_anyway(what, fn):
    """A write no mount can refuse (a repository the command owns): made,
    and judged by the runner's host checks once corral has made the
    repository inert at the command's end (docs/sandbox.md, "Repositories
    a command makes"): no active hook left, the host's git runs nothing."""
    try:
        fn()
    except OSError as e:
        blocked.append("%s: %s" % (what, errno.errorcode.get(e.errno, str(e.errno))))
        return
    blocked.append("%s: written inside; corral makes it inert when the command ends (the runner checks the host)"
                   % what)


def attempt_mkdir_script(directory, name, what):
    """Creating directory (and a script in it) must be refused."""
    def plant():
        os.makedirs(directory, exist_ok=True)
        write_script(os.path.join(directory, name), what)
    attempt("create %s/%s" % (directory, name), plant, *DENIED)


def fsmonitor_config(what):
    """Config text that makes git run planted code on `git status`."""
    return '[core]\n\tfsmonitor = "%s"\n' % planted_command(what).replace('"', '\\"')


def attempt_append(path, text):
    """Appending to path must be refused."""
    def append():
        with open(path, "a") as f:
            f.write(text)
    attempt("append to %s" % path, append, *DENIED)


def attempt_create(path, text):
    """Creating path must be refused."""
    def create():
        with open(path, "x") as f:
            f.write(text)
    attempt("create %s" % path, create, *DENIED)


def phases(prepare, attack, neighbour):
    """Run 1 of 2 prepares (what an earlier command of the session did);
    run 2 (or a run by hand) attacks and judges."""
    if INFO.get("run") == 1:
        prepare()
        print("PREPARED", flush=True)
        return
    main(attack, neighbour)
