"""A temporary unprivileged user for the tests that must also cross the
sandbox's boundaries as an ordinary user (root inside a user namespace is
still host uid 0 for permission checks; an ordinary user takes other paths
through the kernel, and both must hold).

Run as root, `TempUser` creates the system user `corral-battery` (home in a
scratch directory, removed afterwards, a leftover of an interrupted run
removed first and only if its comment shows a test made it), under a lock so
that one such run at a time uses it on this machine.  `run_script_as_user`
runs one TAP test file as that user and hands its results back, each
prefixed with "user: ".
"""
import fcntl
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

USER_NAME = "corral-battery"
USER_COMMENT = "corral sandbox escape battery (temporary)"
LOCK_PATH = "/run/lock/corral-battery.lock"


def user_exists(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def kill_uid(uid, timeout=10):
    """SIGKILL every process of uid (the temporary user's: they can only be
    ours) and wait, through pidfds, until they are gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pidfds = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/status" % d) as f:
                    owner = [l.split()[1] for l in f if l.startswith("Uid:")][0]
                if int(owner) != uid:
                    continue
                fd = os.pidfd_open(int(d))
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                pidfds.append(fd)
            except (OSError, IndexError):
                continue
        if not pidfds:
            return True
        poller = select.poll()
        for fd in pidfds:
            poller.register(fd, select.POLLIN)
        remaining = set(pidfds)
        while remaining and time.monotonic() < deadline:
            for fd, _ in poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
                poller.unregister(fd)
                remaining.discard(fd)
                os.close(fd)
        for fd in remaining:
            os.close(fd)
    return False


def remove_user(diag=print):
    pw = user_exists(USER_NAME)
    if not pw:
        return
    if pw.pw_gecos != USER_COMMENT:
        raise RuntimeError("a user %s exists that these tests did not create; not touching it" % USER_NAME)
    if not kill_uid(pw.pw_uid):
        diag("processes of %s did not end" % USER_NAME)
    r = subprocess.run(["userdel", USER_NAME], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0 and user_exists(USER_NAME):
        diag("userdel %s failed: %s" % (USER_NAME, r.stdout.decode(errors="replace")))


class TempUser:
    """`with TempUser(home) as pw:` the user exists (home created, owned by
    it) and nobody else uses it; afterwards its processes and it are gone.
    shell: its login shell (nologin unless a test logs in as it, as the
    hosts test does through a local sshd)."""

    def __init__(self, home, diag=print, shell="/usr/sbin/nologin"):
        self.home = home
        self.diag = diag
        self.shell = shell
        self.lock = None

    def __enter__(self):
        os.makedirs(os.path.dirname(LOCK_PATH), exist_ok=True)
        self.lock = open(LOCK_PATH, "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)  # one unprivileged run at a time on this machine
        try:
            remove_user(self.diag)
            subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", self.home, "--shell",
                            self.shell, "--user-group", "--comment", USER_COMMENT, USER_NAME], check=True,
                           stdout=subprocess.DEVNULL)
            pw = pwd.getpwnam(USER_NAME)
            os.makedirs(self.home, mode=0o700, exist_ok=True)
            os.chown(self.home, pw.pw_uid, pw.pw_gid)
            return pw
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            remove_user(self.diag)
        finally:
            if self.lock:
                self.lock.close()
                self.lock = None
        return False


def python_for(pw):
    """An interpreter the user can run (the build's may live where it cannot
    go, /root/.pyenv), or None."""
    for cand in (sys.executable, "/usr/bin/python3"):
        try:
            r = subprocess.run([cand, "-c", "pass"], user=pw.pw_uid, group=pw.pw_gid, extra_groups=[],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        except OSError:
            continue
        if r.returncode == 0:
            return cand
    return None


def run_script_as_user(tap, script, corral, helpers=(), timeout=900, shell="/usr/sbin/nologin"):
    """Run the TAP test file script as the temporary user (shell: its login
    shell), with corral (and the helper modules beside it) copied where the
    user can read them; report each of its results on tap as "user: ..."."""
    scratch = tempfile.mkdtemp(prefix="corral-user-", dir="/var/tmp")
    os.chmod(scratch, 0o755)
    child = None
    try:
        staged = os.path.join(scratch, "bin")
        os.makedirs(staged, mode=0o755)
        for f in [script] + list(helpers):
            shutil.copy(f, staged)
        shutil.copy(corral, os.path.join(staged, "corral"))
        for f in os.listdir(staged):
            os.chmod(os.path.join(staged, f), 0o755)
        with TempUser(os.path.join(scratch, "home"), tap.diag, shell) as pw:
            python = python_for(pw)
            if not python:
                tap.ok(False, "user: no Python interpreter usable by %s" % USER_NAME)
                return
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": os.path.join(scratch, "home"),
                   "CORRAL_BIN": os.path.join(staged, "corral"), "CORRAL_AS_USER": "1"}
            child = subprocess.Popen([python, os.path.join(staged, os.path.basename(script))], user=pw.pw_uid,
                                     group=pw.pw_gid, extra_groups=[], cwd=os.path.join(scratch, "home"), env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
            seen, detail, last = 0, [], None
            deadline = time.monotonic() + timeout
            for line in child.stdout:
                line = line.rstrip("\n")
                if line.startswith("ok ") or line.startswith("not ok "):
                    if last is not None:
                        tap.ok(last[0], "user: " + last[1], "\n".join(detail) or None)
                    ok = line.startswith("ok ")
                    desc = line.split(" - ", 1)[1] if " - " in line else line
                    last, detail = (ok, desc), []
                    seen += 1
                elif line.startswith("# ") and last is not None:
                    detail.append(line[2:])
                if time.monotonic() > deadline:
                    break
            if last is not None:
                tap.ok(last[0], "user: " + last[1], "\n".join(detail) or None)
            child.wait(timeout=60)
            tap.ok(child.returncode == 0 and seen > 0, "user: the run as %s ended cleanly (%d results)" %
                   (USER_NAME, seen))
    finally:
        if child is not None and child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        shutil.rmtree(scratch, ignore_errors=True)
