#!/usr/bin/env python3
"""corral's sandbox escape battery (a TAP producer for automake's tap-driver).

Every file in attacks/ but attacklib.py (the Python attacks' shared code) is
one attack (see README.md).  For each, this runner builds a fresh world -- a
scratch workspace, a fake home full of canary secrets, private XDG
directories, secrets in the environment, fds 7 and 255 left open -- runs the
attack with `corral sandbox ... -- python3 ATTACK INFO` and judges it twice:

  * "blocked": the attack printed `BLOCKED ...`, exited as expected, and
    every host-side check passed (nothing changed in the fake home, outside
    the workspace, in protected parts of the workspace; no connection
    reached the host listeners; the host process it tried to kill lives; no
    process of it survives; nothing was pushed into the terminal);
  * "neighbour": the attack printed `NEIGHBOUR OK` (the legitimate operation
    next to the attack still works).

Git attacks name git commands the user would run afterwards
(`# host-git: DIR: ARGS; DIR: ARGS`, DIR relative to the workspace,
`{outside}` for the world's outside directory): the runner runs them on the
host, outside the sandbox, with the user's own git, home and config, and the
attack fails if any of them ran code the sandbox planted (planted code
writes INFO["host_marker"], a file the sandbox itself cannot write).  An
attack with `# runs: 2` is started twice in the same world, as two commands
of one session; the first gets INFO["run"] == 1, must print PREPARED and
exit 0 (attacks/_gitlib.py has the helpers).

As root it runs the battery a second time as a temporary unprivileged user
(`corral-battery`, removed afterwards): root inside a user namespace and an
ordinary user take different paths through the kernel.

Usage: battery.py [--only SUBSTRING]... [--list] [--keep]
Environment: CORRAL_BIN (the corral binary), CORRAL_TESTS_SRCDIR,
CORRAL_BATTERY_TMPDIR (where scratch directories go; default /var/tmp: the
sandbox's /tmp is private, so a world under /tmp would be invisible in it).
"""
import argparse
import ctypes
import fcntl
import hashlib
import json
import os
import pty
import pwd
import select
import selectors
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import termios
import threading

# tests/unprivileged.py: the temporary user (beside this file when staged
# for that user, one directory up in the source tree).
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),
                os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
from unprivileged import USER_NAME, TempUser, python_for  # noqa: E402
import time
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
ATTACK_LIBRARY = "attacklib.py"  # the attacks' shared code in attacks/, not an attack
DEFAULT_TIMEOUT = 60
SECRET_PREFIX = "corral-battery-secret"

# Names that must never change on the host, in every world.
FAKE_HOME_SECRETS = [
    ".ssh/id_test", ".ssh/id_ed25519", ".ssh/config", ".aws/credentials", ".config/gh/hosts.yml",
    ".netrc", ".docker/config.json", ".kube/config", ".git-credentials", ".npmrc", ".pypirc",
    ".gnupg/private-keys-v1.d/key.key", ".password-store/site.gpg",
    ".local/share/keyrings/login.keyring", ".azure/accessTokens.json", ".config/gcloud/credentials.db",
    ".bash_history", ".python_history", ".lesshst", ".viminfo", ".zsh_history", ".node_repl_history",
    ".psql_history", ".mysql_history", "private-notes.txt",
]
FAKE_HOME_PLAIN = {
    ".profile": "# fake .profile of the battery\n",
    ".bashrc": "# fake .bashrc of the battery\n",
    "owned-file": "a file of the user outside the workspace\n",
    ".config/other-app/settings.ini": "[other]\ncolour = blue\n",
}


def find_corral():
    b = os.environ.get("CORRAL_BIN")
    return os.path.abspath(b) if b else os.path.abspath(os.path.join(HERE, "..", "..", "src", "corral"))


def find_attacks_dir():
    src = os.environ.get("CORRAL_TESTS_SRCDIR")
    if src and os.path.isdir(os.path.join(src, "sandbox", "attacks")):
        return os.path.join(src, "sandbox", "attacks")
    return os.path.join(HERE, "attacks")


def sandbox_python():
    """The interpreter the attacks run with inside the sandbox."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


# ---- attacks and their metadata ----------------------------------------------

class Attack:
    def __init__(self, path):
        self.path = path
        self.file = os.path.basename(path)
        self.meta = {}
        # The metadata block: "# key: value" lines among the first comment lines.
        with open(path, encoding="utf-8") as f:
            for line in f.readlines()[:40]:
                if not line.startswith("#"):
                    break
                key, sep, value = line[1:].strip().partition(":")
                if sep and key.strip() in ("id", "tries", "expect", "neighbour", "needs", "sandbox-args",
                                           "timeout", "expect-rc", "refusal-ok", "known-gap", "host-git",
                                           "runs", "config"):
                    self.meta[key.strip()] = value.strip()
        self.id = self.meta.get("id", "?")
        needs = self.meta.get("needs", "-")
        self.needs = set() if needs in ("", "-") else {n.strip() for n in needs.split(",")}
        self.timeout = float(self.meta.get("timeout", DEFAULT_TIMEOUT))
        self.expect_rc = int(self.meta.get("expect-rc", "0"))
        args = self.meta.get("sandbox-args", "-")
        self.sandbox_args = [] if args in ("", "-") else shlex.split(args)
        # corral may rightly refuse to start when it cannot enforce its
        # protections for a layout (exit 125 with a message): that counts.
        self.refusal_ok = self.meta.get("refusal-ok", "no") == "yes"
        # The user's own git, run on the host after the sandbox (in order):
        # "DIR: ARGS; DIR: ARGS", DIR relative to the workspace.
        self.host_git = []
        for step in self.meta.get("host-git", "").split(";"):
            d, sep, args = step.partition(":")
            if sep and args.strip():
                self.host_git.append((d.strip(), shlex.split(args)))
        # Sandboxed commands run one after the other in the same world;
        # all but the last prepare (and print PREPARED).
        self.runs = int(self.meta.get("runs", "1"))
        # corral's config file in the world: "[section] key = value; ...".
        self.config = ""
        for setting in self.meta.get("config", "").split(";"):
            section, sep, assignment = setting.strip().partition("]")
            if sep and section.startswith("["):
                self.config += "%s]\n\t%s\n" % (section, assignment.strip())

    @property
    def name(self):
        return os.path.splitext(self.file)[0]


def load_attacks(directory, only):
    directory = os.path.abspath(directory)  # corral runs them from the workspace
    attacks = []
    for f in sorted(os.listdir(directory)):
        if f.endswith((".py", ".sh")) and not f.startswith("_") and f != ATTACK_LIBRARY:
            a = Attack(os.path.join(directory, f))
            if not only or any(o in f for o in only):
                attacks.append(a)
    return attacks


# ---- host-side helpers ---------------------------------------------------------

def digest(path):
    """What must not change about path: its type and inode, and for a
    directory every entry below it (name, type, mode, content)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError as e:
        return "error %s" % e.errno
    h = hashlib.sha256()
    h.update(("%o %d %d\n" % (stat.S_IFMT(st.st_mode), st.st_ino, st.st_nlink)).encode())
    if stat.S_ISDIR(st.st_mode):
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(dirs + files):
                p = os.path.join(root, name)
                try:
                    s = os.lstat(p)
                except OSError:
                    continue
                h.update(("%s %o %d\n" % (os.path.relpath(p, path), s.st_mode, s.st_size)).encode())
                if stat.S_ISREG(s.st_mode):
                    with open(p, "rb") as f:
                        h.update(f.read())
                elif stat.S_ISLNK(s.st_mode):
                    h.update(os.readlink(p).encode())
    elif stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            h.update(f.read())
    elif stat.S_ISLNK(st.st_mode):
        h.update(os.readlink(path).encode())
    return h.hexdigest()


def inode_of(path):
    try:
        st = os.lstat(path)
        return "%o:%d" % (stat.S_IFMT(st.st_mode), st.st_ino)
    except OSError:
        return "absent"


def git_hooks_in(root):
    """Every active git hook below root (any hooks/ directory of a git
    directory, nested, submodule or separate ones included): path -> digest."""
    found = {}
    for d, dirs, files in os.walk(root):
        if os.path.basename(d) != "hooks":
            continue
        parent = os.path.dirname(d)
        if not (os.path.exists(os.path.join(parent, "HEAD")) or os.path.exists(os.path.join(parent, "config"))):
            continue
        for f in files:
            if not f.endswith(".sample"):
                found[os.path.join(d, f)] = digest(os.path.join(d, f))
    return found


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def git(*args, cwd):
    env = {"PATH": "/usr/bin:/bin", "HOME": cwd, "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd,
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def first_commit(path, name):
    """Commit the file name in the fresh repository at path, as the battery's user."""
    git("config", "user.name", "Battery", cwd=path)
    git("config", "user.email", "battery@example.invalid", cwd=path)
    git("add", name, cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)


def make_repo(path, template=None):
    os.makedirs(path, exist_ok=True)
    git("init", "-q", *(["--template=" + template] if template is not None else []), cwd=path)
    write(os.path.join(path, "README"), "battery\n")
    first_commit(path, "README")


def guard_git_dir(w, g, *extra):
    """Record the inode of the git directory g (it must not be replaced) and
    return the parts of it that must come out unchanged."""
    w["inode:" + g] = inode_of(g)
    return [os.path.join(g, n) for n in ("hooks", "config", "commondir", *extra)]


def processes_with(text):
    """Host processes whose command line contains text (not us)."""
    found = []
    me = {os.getpid(), os.getppid()}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in me:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append("%s: %s" % (d, cmd.strip()))
    return found


def kill_tree(proc):
    """SIGKILL the process group of proc (started in its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def host_addresses():
    """The host's own addresses other than loopback: the source address of
    its route out, IPv4 and IPv6, where it has one (no packet is sent)."""
    found = []
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        s = socket.socket(family, socket.SOCK_DGRAM)
        try:
            s.connect((probe, 9))
            addr = s.getsockname()[0]
            if not addr.startswith("127.") and addr != "::1":
                found.append(addr)
        except OSError:
            pass
        finally:
            s.close()
    return found


class Listeners:
    """Host-side listeners an attack must never reach; every accepted
    connection or received datagram is counted."""

    def __init__(self, token, run_dir, runtime_dir):
        self.counts = {}
        self.lock = threading.Lock()
        self.sel = selectors.DefaultSelector()
        self.socks = []
        self.info = {}
        s = self._tcp(socket.AF_INET, "127.0.0.1")
        self.info["tcp_port"] = s.getsockname()[1]
        try:
            s6 = self._tcp(socket.AF_INET6, "::1")
            self.info["tcp6_port"] = s6.getsockname()[1]
        except OSError:
            self.info["tcp6_port"] = None
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        self._add(u, "udp")
        self.info["udp_port"] = u.getsockname()[1]
        # The host's own addresses (N22): TCP and UDP (a DNS server's port,
        # say) on every address, and the addresses a connection out of the
        # sandbox would aim at.
        self.info["host_addrs"] = host_addresses()
        self.info["tcp_any_port"] = self._any(socket.SOCK_STREAM, "tcp-any")
        self.info["udp_any_port"] = self._any(socket.SOCK_DGRAM, "udp-any")
        name = "corral-battery-%s" % token
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        a.bind("\0" + name)
        a.listen(16)
        self._add(a, "abstract")
        self.info["abstract_name"] = name
        self.info["run_socket"] = None
        if run_dir:
            self.info["run_socket"] = self._unix(os.path.join(run_dir, "agent.sock"), "run")
        self.info["runtime_socket"] = self._unix(os.path.join(runtime_dir, "bus"), "runtime")
        self.info["ssh_sock"] = self._unix(os.path.join(runtime_dir, "ssh-agent.sock"), "ssh-agent")
        self.stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _add(self, s, label):
        s.setblocking(False)
        self.socks.append(s)
        self.counts[label] = 0
        self.sel.register(s, selectors.EVENT_READ, label)

    def _tcp(self, family, addr):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, 0))
        s.listen(16)
        self._add(s, "tcp6" if family == socket.AF_INET6 else "tcp")
        return s

    def _any(self, kind, label):
        """A listener on every address of the host (IPv6 and IPv4 where the
        host has IPv6); its port."""
        try:
            s = socket.socket(socket.AF_INET6, kind)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind(("::", 0))
        except OSError:
            s = socket.socket(socket.AF_INET, kind)
            s.bind(("0.0.0.0", 0))
        if kind == socket.SOCK_STREAM:
            s.listen(16)
        self._add(s, label)
        return s.getsockname()[1]

    def _unix(self, path, label):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o777)
        s.listen(16)
        self._add(s, label)
        return path

    def _loop(self):
        while not self.stop:
            for key, _ in self.sel.select(0.2):
                s = key.fileobj
                try:
                    if s.type == socket.SOCK_DGRAM:
                        s.recvfrom(65536)
                    else:
                        c, _ = s.accept()
                        c.close()
                except OSError:
                    continue
                with self.lock:
                    self.counts[key.data] += 1

    def snapshot(self):
        with self.lock:
            return dict(self.counts)

    def close(self):
        self.stop = True
        self.thread.join(2)
        for s in self.socks:
            s.close()


def sysv_shm(create_key=None, remove_id=None):
    """Create (returns the id) or remove a host SysV shared memory segment."""
    libc = ctypes.CDLL(None, use_errno=True)
    if create_key is not None:
        return libc.shmget(ctypes.c_int(create_key), ctypes.c_size_t(4096), ctypes.c_int(0o1000 | 0o600))
    libc.shmctl(ctypes.c_int(remove_id), 0, None)  # IPC_RMID
    return 0


# ---- one battery run (root, or the unprivileged user) ---------------------------

class Battery:
    def __init__(self, scratch, corral, attacks_dir, run_dir, keep, emit):
        self.scratch = scratch
        self.corral = corral
        self.attacks_dir = attacks_dir
        self.keep = keep
        self.emit = emit  # emit(result dict) or emit(diag string)
        self.python = sandbox_python()
        self.token = os.urandom(6).hex()
        self.runtime = os.path.join(scratch, "xdg-runtime")
        os.makedirs(self.runtime, mode=0o700)
        os.makedirs(os.path.join(self.runtime, "corral"), mode=0o700)
        write(os.path.join(self.runtime, "corral", "session-token"), "%s-runtime\n" % SECRET_PREFIX, 0o600)
        # The inherited descriptors the sandbox must not see: fd 7, a
        # directory above every world (a fchdir() way out), and fd 255, a
        # file outside every workspace opened for appending.  Claimed
        # before anything else here opens descriptors.
        self.fd255_file = os.path.join(scratch, "fd255-canary.txt")
        write(self.fd255_file, "")
        self.inherited = []
        for fd, opener in ((7, lambda: os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)),
                           (255, lambda: os.open(self.fd255_file, os.O_WRONLY | os.O_APPEND))):
            try:
                fcntl.fcntl(fd, fcntl.F_GETFD)  # already open: pass what is there
            except OSError:
                tmp = opener()
                os.dup2(tmp, fd, inheritable=True)
                os.close(tmp)
            self.inherited.append(fd)
        self.listeners = Listeners(self.token, run_dir, self.runtime)
        # Host objects the sandbox must not see or touch.
        self.host_tmp_canary = "/tmp/corral-battery-%s.canary" % self.token
        write(self.host_tmp_canary, "host /tmp canary\n")
        self.devshm_name = "corral-battery-%s" % self.token
        try:
            write("/dev/shm/" + self.devshm_name, "host /dev/shm canary\n")
        except OSError:
            self.devshm_name = None
        self.shm_key = int.from_bytes(os.urandom(3), "big") | 0x43000000
        self.shm_id = sysv_shm(create_key=self.shm_key)
        self.hostname = socket.gethostname()

    def close(self):
        self.listeners.close()
        for fd in self.inherited:
            try:
                os.close(fd)
            except OSError:
                pass
        for p in (self.host_tmp_canary, "/dev/shm/%s" % self.devshm_name if self.devshm_name else None):
            if p and os.path.exists(p):
                os.unlink(p)
        if self.shm_id >= 0:
            sysv_shm(remove_id=self.shm_id)

    # -- the world of one attack --

    def make_world(self, attack):
        d = os.path.join(self.scratch, "runs", attack.name)
        os.makedirs(d)
        w = {"dir": d, "home": os.path.join(d, "home"), "ws": os.path.join(d, "ws"),
             "outside": os.path.join(d, "outside"), "token": os.urandom(6).hex(),
             # Written only by code the host's git runs (the sandbox cannot
             # write here): it must never exist.
             "host_marker": os.path.join(d, "host-ran-planted-code")}
        secret = "%s-%s" % (SECRET_PREFIX, w["token"])
        w["secret"] = secret
        for rel in FAKE_HOME_SECRETS:
            write(os.path.join(w["home"], rel), "%s %s\n" % (secret, rel), 0o600)
        for rel, text in FAKE_HOME_PLAIN.items():
            write(os.path.join(w["home"], rel), text)
        for rel in (".cache", ".npm", ".config/git"):
            os.makedirs(os.path.join(w["home"], rel), exist_ok=True)
        xdg = os.path.join(d, "xdg")
        w["xdg_config"], w["xdg_state"], w["xdg_cache"] = (os.path.join(xdg, n) for n in ("config", "state", "cache"))
        write(os.path.join(w["xdg_config"], "corral", "config"), attack.config)
        write(os.path.join(w["xdg_config"], "corral", "approvals.json"), '{"%s": "state"}\n' % secret, 0o600)
        write(os.path.join(w["xdg_state"], "corral", "sessions.db"), "%s sessions\n" % secret, 0o600)
        os.makedirs(w["xdg_cache"])
        write(os.path.join(w["outside"], "canary.txt"), "outside the workspace\n")
        os.makedirs(w["ws"])
        write(os.path.join(w["ws"], "file.txt"), "workspace file\n")
        w["protected"] = self.setup_workspace(attack, w)
        w["watched"] = [w["home"], w["xdg_config"], w["xdg_state"], w["outside"], self.runtime]
        if "home-layer = keep" in attack.config:
            # A kept home layer is meant to stay in corral's state: watch
            # the rest of the state (and that no discarded layer is left).
            w["watched"][2] = os.path.join(w["xdg_state"], "corral", "sessions.db")
            w["layers"] = os.path.join(w["xdg_state"], "corral", "home-layers")
        return w

    def setup_workspace(self, attack, w):
        """Prepare the workspace for the attack's needs; return the host
        paths inside it that must come out unchanged."""
        ws = w["ws"]
        prot = []
        if "git" in attack.needs or "git-nested" in attack.needs:
            make_repo(ws)
            prot += guard_git_dir(w, os.path.join(ws, ".git"), "config.worktree")
        if "git-nohooks" in attack.needs:
            empty = os.path.join(w["dir"], "empty-template")
            os.makedirs(empty)
            make_repo(ws, template=empty)
            prot += guard_git_dir(w, os.path.join(ws, ".git"))
        if "git-nested" in attack.needs:
            sub = os.path.join(ws, "vendor", "lib")
            make_repo(sub)
            prot += guard_git_dir(w, sub + "/.git")
        if "gitfile" in attack.needs:
            # .git is a file pointing to a gitdir inside the workspace.
            repo = os.path.join(ws, ".repo")
            os.makedirs(ws, exist_ok=True)
            git("init", "-q", "--separate-git-dir=" + repo, cwd=ws)
            first_commit(ws, "file.txt")
            prot += [ws + "/.git"] + guard_git_dir(w, repo)
        if "worktree" in attack.needs:
            main = os.path.join(w["outside"], "main-repo")
            make_repo(main)
            shutil.rmtree(ws)
            git("worktree", "add", "-q", ws, cwd=main)
            prot += [main + "/.git/hooks", main + "/.git/config", ws + "/.git",
                     main + "/.git/worktrees/ws/commondir", main + "/.git/worktrees/ws/config.worktree"]
        if "git-submodule" in attack.needs:
            src = os.path.join(w["outside"], "sub-src")
            make_repo(src)
            make_repo(ws)
            git("-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "lib", cwd=ws)
            git("commit", "-q", "-m", "submodule", cwd=ws)
            m = os.path.join(ws, ".git", "modules", "lib")
            prot += guard_git_dir(w, m) + [ws + "/.git/hooks", ws + "/.git/config"]
        if "git-symlink" in attack.needs:
            # .git is a symlink to a git directory inside the workspace.
            real = os.path.join(ws, ".realgit")
            git("init", "-q", "--separate-git-dir=" + real, cwd=ws)
            os.unlink(os.path.join(ws, ".git"))
            os.symlink(".realgit", os.path.join(ws, ".git"))
            first_commit(ws, "file.txt")
            prot += [ws + "/.git"] + guard_git_dir(w, real)
        if "git-hookspath" in attack.needs:
            # core.hooksPath in the repository's config, to a directory of
            # the work tree (as .githooks setups do).
            make_repo(ws)
            git("config", "core.hooksPath", ".githooks", cwd=ws)
            write(os.path.join(ws, ".githooks", "post-commit"), "#!/bin/sh\nexit 0\n", 0o755)
            prot += [ws + "/.githooks", ws + "/.git/config"]
        if "git-hookspath-global" in attack.needs:
            # husky's layout: core.hooksPath = .husky/_ (here in the user's
            # global config), the generated .husky/_ not there yet.
            make_repo(ws)
            write(os.path.join(ws, ".husky", "pre-commit"), "npm test\n")
            write(os.path.join(w["home"], ".gitconfig"), "[core]\n\thooksPath = .husky/_\n")
            prot += [w["home"] + "/.gitconfig"]
        if "git-include" in attack.needs:
            # The repository's config includes a file of the work tree, and
            # (on branch main) one that does not exist.
            make_repo(ws)
            write(os.path.join(ws, "shared.gitconfig"), "[color]\n\tui = auto\n")
            git("config", "include.path", "../shared.gitconfig", cwd=ws)
            git("config", "includeIf.onbranch:main.path", "../branch.gitconfig", cwd=ws)
            prot += [ws + "/shared.gitconfig", ws + "/.git/config"]
        if "git-programs" in attack.needs:
            # Config naming programs of the work tree: an fsmonitor hook, an
            # external diff, an ssh command.
            make_repo(ws)
            for name in ("fsmonitor", "difftool", "ssh"):
                write(os.path.join(ws, "tools", name), "#!/bin/sh\nexit 1\n", 0o755)
            git("config", "core.fsmonitor", "tools/fsmonitor", cwd=ws)
            git("config", "diff.external", "tools/difftool", cwd=ws)
            git("config", "core.sshCommand", "tools/ssh", cwd=ws)
            prot += [ws + "/tools", ws + "/.git/config"]
        if "git-deep" in attack.needs or "git-deep-gitlink" in attack.needs:
            # A repository five levels down: past the nested-repository
            # search; with -gitlink, a gitlink in the top index names it.
            make_repo(ws)
            deep = os.path.join(ws, "a", "b", "c", "d", "deep")
            make_repo(deep)
            if "git-deep-gitlink" in attack.needs:
                sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=deep, check=True, stdout=subprocess.PIPE,
                                     env={"PATH": "/usr/bin:/bin", "HOME": deep}).stdout.decode().strip()
                git("update-index", "--add", "--cacheinfo", "160000,%s,a/b/c/d/deep" % sha, cwd=ws)
                git("commit", "-q", "-m", "deep gitlink", cwd=ws)
                prot += guard_git_dir(w, deep + "/.git")
        if "git-worktree-main" in attack.needs:
            # The workspace is the main repository; a linked worktree of it
            # lives outside, its git directory in the workspace's .git.
            make_repo(ws)
            # Per-worktree config on, so each worktree's config.worktree is
            # read (and must not be planted).
            git("config", "core.repositoryFormatVersion", "1", cwd=ws)
            git("config", "extensions.worktreeConfig", "true", cwd=ws)
            git("worktree", "add", "-q", os.path.join(w["outside"], "wt"), cwd=ws)
            wtg = ws + "/.git/worktrees/wt"
            prot += [wtg + "/commondir", wtg + "/gitdir", ws + "/.git/config"]
        if "git-bare" in attack.needs:
            # A bare repository in the workspace, used as a local remote.
            make_repo(ws)
            git("clone", "-q", "--bare", ws, os.path.join(ws, "remote.git"), cwd=ws)
            prot += guard_git_dir(w, ws + "/remote.git")
        if "git-wide" in attack.needs:
            # 25000 directories, 30 of them repositories: more than the
            # search used to look at before it silently stopped, so in any
            # listing order about a third of them came after it gave up.
            for i in range(25000):
                os.makedirs(os.path.join(ws, "big", "d%05d" % i))
            for i in range(0, 25000, 25000 // 30):
                sub = os.path.join(ws, "big", "d%05d" % i)
                git("init", "-q", cwd=sub)
                prot += guard_git_dir(w, sub + "/.git")
        if "agent-dirs" in attack.needs:
            write(os.path.join(ws, ".codex", "config.toml"), 'model = "battery"\n')
            write(os.path.join(ws, ".agents", "AGENTS.md"), "be nice\n")
            prot += [ws + "/.codex", ws + "/.agents"]
        if "ws-dgram-socket" in attack.needs:
            # A host datagram socket where the sandbox can name it (N21);
            # the listeners count every datagram that reaches it.
            path = os.path.join(ws, "host-dgram.sock")
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(path)
            os.chmod(path, 0o777)
            with self.listeners.lock:
                self.listeners._add(s, "ws-dgram")
        if "ws-secrets" in attack.needs:
            write(os.path.join(ws, "secrets", "key.pem"), "%s ws-secret\n" % w["secret"], 0o600)
            prot += [ws + "/secrets"]
        return prot

    def info(self, w, host_sleep):
        i = dict(self.listeners.info)
        i.update({k: w[k] for k in ("ws", "home", "outside", "token", "secret", "xdg_config", "xdg_state",
                                    "xdg_cache", "host_marker")})
        i.update({"scratch": self.scratch, "xdg_runtime": self.runtime, "runner_pid": os.getpid(),
                  "host_sleep_pid": host_sleep.pid if host_sleep else None, "host_hostname": self.hostname,
                  "host_tmp_canary": self.host_tmp_canary, "devshm_name": self.devshm_name,
                  "shm_key": self.shm_key, "fd255_file": self.fd255_file,
                  "orphan_marker": "3000.%d" % int(w["token"][:5], 16)})
        return i

    def env(self, w, info):
        """A realistic, secret-laden environment for corral."""
        s = w["secret"]
        e = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": w["home"], "USER": pwd.getpwuid(os.getuid()).pw_name,
            "LOGNAME": pwd.getpwuid(os.getuid()).pw_name, "SHELL": "/bin/sh", "TERM": "xterm-256color",
            "LANG": "C.UTF-8", "LC_MESSAGES": "C", "TZ": "UTC", "COLORTERM": "truecolor", "TMPDIR": "/tmp",
            "XDG_RUNTIME_DIR": self.runtime, "XDG_STATE_HOME": w["xdg_state"],
            "XDG_CONFIG_HOME": w["xdg_config"], "XDG_CACHE_HOME": w["xdg_cache"],
            # credentials and credential pointers
            "GITHUB_TOKEN": s, "GH_TOKEN": s, "AWS_ACCESS_KEY_ID": s, "AWS_SECRET_ACCESS_KEY": s,
            "AWS_SESSION_TOKEN": s, "ANTHROPIC_API_KEY": s, "OPENAI_API_KEY": s, "NPM_TOKEN": s,
            "DATABASE_PASSWORD": s, "STRIPE_SECRET": s, "MY_SERVICE_CREDENTIALS": s,
            "SSH_AUTH_SOCK": info["ssh_sock"], "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + info["runtime_socket"],
            "DOCKER_HOST": "unix:///run/docker.sock", "KUBECONFIG": w["home"] + "/.kube/config",
            "GIT_ASKPASS": "/bin/true", "SSH_ASKPASS": "/bin/true", "DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0",
            "HTTP_PROXY": "http://battery:%s@proxy.invalid:3128" % s,
            "HTTPS_PROXY": "http://battery:%s@proxy.invalid:3128" % s,
            "ALL_PROXY": "socks5h://battery:%s@proxy.invalid:1080" % s,
            "http_proxy": "http://battery:%s@proxy.invalid:3128" % s, "NO_PROXY": "localhost",
            # variables that make programs run code
            "BASH_ENV": w["home"] + "/.bashrc", "ENV": w["home"] + "/.profile", "PROMPT_COMMAND": "true",
            "NODE_OPTIONS": "--require /nonexistent.js", "PYTHONSTARTUP": "/nonexistent.py",
            "PYTHONPATH": "/nonexistent", "LD_LIBRARY_PATH": "/nonexistent", "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "true", "GIT_SSH_COMMAND": "true",
        }
        return e

    def run_host_git(self, attack, w):
        """The user's own git, run on the host after the sandbox as the
        attack's host-git line says (the user's config and home, nothing
        of the sandbox); the problems found: a command that hung, or the
        marker that only planted code writes."""
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": w["home"],
               "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "Battery User", "GIT_AUTHOR_EMAIL": "user@example.invalid",
               "GIT_COMMITTER_NAME": "Battery User", "GIT_COMMITTER_EMAIL": "user@example.invalid",
               "GIT_TERMINAL_PROMPT": "0"}
        problems = []
        for d, args in attack.host_git:
            cwd = os.path.join(w["ws"], d.replace("{outside}", w["outside"]))
            if not os.path.isdir(cwd):
                continue
            try:
                subprocess.run(["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
                               start_new_session=True)
            except subprocess.TimeoutExpired:
                problems.append("the host's git %s (in %s) did not finish in 60s" % (" ".join(args), cwd))
        if os.path.exists(w["host_marker"]):
            with open(w["host_marker"], errors="replace") as f:
                ran = " / ".join(l.strip() for l in f if l.strip())
            problems.append("the host's own git ran code the sandbox planted: %s" % (ran or "(marker written)"))
        return problems

    def run_one(self, attack):
        t0 = time.monotonic()
        result = {"file": attack.file, "id": attack.id, "known_gap": attack.meta.get("known-gap"),
                  "tries": attack.meta.get("tries", ""),
                  "blocked": False, "neighbour": False, "diag": []}
        diag = result["diag"]
        w = self.make_world(attack)
        host_sleep = None
        if "host-sleep" in attack.needs:
            host_sleep = subprocess.Popen(["sleep", "300"], start_new_session=True, stdin=subprocess.DEVNULL)
        info = self.info(w, host_sleep)
        info_path = os.path.join(w["dir"], "info.json")

        def write_info(run):
            info["run"] = run
            with open(info_path, "w") as f:
                json.dump(info, f, indent=1)
            with open(os.path.join(w["dir"], "info.sh"), "w") as f:
                for k, v in info.items():
                    f.write("%s=%s\n" % (k.upper(), shlex.quote("" if v is None else str(v))))
        write_info(1)
        before = {p: digest(p) for p in w["watched"] + w["protected"]}
        # Placeholders corral makes for absent protected names must be gone
        # (or at least empty) afterwards.
        absent_top = [n for n in (".corral", ".codex", ".agents", ".git")
                      if not os.path.lexists(os.path.join(w["ws"], n))]
        conns = self.listeners.snapshot()
        hooks_before = git_hooks_in(w["ws"])
        fd255_size = os.path.getsize(self.fd255_file)

        subst = {"{ws}": w["ws"], "{home}": w["home"], "{scratch}": self.scratch}
        sargs = []
        for a in attack.sandbox_args:
            for k, v in subst.items():
                a = a.replace(k, v)
            sargs.append(a)
        script = attack.path
        if attack.file.endswith(".py"):
            cmd = [self.python, script, info_path]
        else:
            cmd = ["/bin/sh", script, os.path.join(w["dir"], "info.sh")]
        reuse = ["--reuse", "1"] if getattr(self, "prebuilt", False) else []
        argv = [self.corral, "sandbox", *sargs, *reuse, "-C", w["ws"], "--", *cmd]
        master = slave = None
        stdin = subprocess.DEVNULL
        if "pty" in attack.needs:
            master, slave = pty.openpty()
            tty.setraw(slave)
            stdin = slave
        env = self.env(w, info)
        prepare_problems = []
        for run in range(1, attack.runs + 1):
            write_info(run)
            timed_out = False
            proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, pass_fds=self.inherited, start_new_session=True, cwd=w["dir"])
            try:
                out, err = proc.communicate(timeout=attack.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_tree(proc)
                out, err = proc.communicate()
            except BaseException:  # interrupted: leave nothing running
                kill_tree(proc)
                if host_sleep is not None:
                    host_sleep.kill()
                raise
            rc = proc.returncode
            out = out.decode(errors="replace")
            err = err.decode(errors="replace")
            if run < attack.runs and (timed_out or rc != 0 or "PREPARED" not in out.splitlines()):
                # A command before the last one only prepares the world (as
                # an earlier command of a session would): it must work.
                prepare_problems.append("run %d of %d did not prepare (exit %s%s)" %
                                        (run, attack.runs, rc, ", timed out" if timed_out else ""))
                prepare_problems += ["run %d stdout: %s" % (run, l) for l in out.splitlines()[-20:]]
                prepare_problems += ["run %d stderr: %s" % (run, l) for l in err.splitlines()[-20:]]
                break
        elapsed = time.monotonic() - t0
        lines = out.splitlines()
        verdicts = [l for l in lines if l.startswith(("BLOCKED", "ESCAPED"))]
        neighbours = [l for l in lines if l.startswith("NEIGHBOUR")]
        result["notes"] = [l[5:] for l in lines if l.startswith("NOTE ")]

        refused = attack.refusal_ok and rc == 125 and not lines and err.strip().startswith("corral:")
        if refused:
            verdicts = ["BLOCKED corral refused to start: " + err.strip().splitlines()[0]]
            neighbours = ["NEIGHBOUR OK"]
            rc = attack.expect_rc
        # Host-side checks: every one of them failing is an escape.
        problems = list(prepare_problems)
        if timed_out:
            problems.append("timed out after %gs (process tree killed)" % attack.timeout)
        if rc != attack.expect_rc:
            problems.append("exit status %s, expected %d" % (rc, attack.expect_rc))
        if len(verdicts) != 1:
            problems.append("expected one BLOCKED/ESCAPED line, got %d" % len(verdicts))
        elif not verdicts[0].startswith("BLOCKED"):
            problems.append(verdicts[0])
        for p in w["watched"] + w["protected"]:
            now = digest(p)
            if now != before[p]:
                problems.append("host path changed: %s (%s -> %s)" % (p, before[p][:12], now[:12]))
        for k, v in w.items():
            if k.startswith("inode:") and inode_of(k[6:]) != v:
                problems.append("host %s was replaced (%s -> %s)" % (k[6:], v, inode_of(k[6:])))
        if w.get("layers") and os.path.isdir(w["layers"]):
            left = [n for n in os.listdir(w["layers"]) if not n.startswith("w-")]
            if left:
                problems.append("home layers left behind: %s" % left)
        for n in absent_top:
            p = os.path.join(w["ws"], n)
            if os.path.lexists(p) and (not os.path.isdir(p) or os.path.islink(p) or os.listdir(p)):
                problems.append("host %s exists after the run with content (a placeholder was written)" % p)
        for path, d in sorted(git_hooks_in(w["ws"]).items()):
            if hooks_before.get(path) != d:
                problems.append("a git hook the host's git would run appeared or changed: %s" % path)
        problems += self.run_host_git(attack, w)
        after = self.listeners.snapshot()
        for k in after:
            if after[k] != conns.get(k, 0):
                problems.append("host listener '%s' was reached (%d connection(s))" % (k, after[k] - conns.get(k, 0)))
        if os.path.getsize(self.fd255_file) != fd255_size:
            problems.append("the file behind inherited fd 255 was written")
        if not os.path.exists(self.host_tmp_canary):
            problems.append("host /tmp canary was removed")
        if socket.gethostname() != self.hostname:
            problems.append("host name changed to %r" % socket.gethostname())
        if host_sleep is not None:
            if host_sleep.poll() is not None:
                problems.append("the host process %d was killed (status %s)" % (host_sleep.pid, host_sleep.returncode))
            else:
                host_sleep.kill()
            host_sleep.wait()
        survivors = processes_with(info["orphan_marker"]) + processes_with(w["dir"] + "/")
        if survivors:
            problems.append("processes survived the sandbox: %s" % "; ".join(survivors))
            for s in survivors:
                try:
                    os.kill(int(s.split(":")[0]), signal.SIGKILL)
                except OSError:
                    pass
        if self.devshm_name and not os.path.exists("/dev/shm/" + self.devshm_name):
            problems.append("host /dev/shm canary was removed")
        leaked = [n for n in os.listdir("/dev/shm") if w["token"] in n] if os.path.isdir("/dev/shm") else []
        if leaked:
            problems.append("the sandbox wrote the host's /dev/shm: %s" % leaked)
        if slave is not None:
            pending = fcntl.ioctl(slave, termios.TIOCINQ, b"\0\0\0\0")
            n = int.from_bytes(pending, sys.byteorder)
            if n:
                problems.append("%d byte(s) were pushed into the terminal's input queue" % n)
            os.close(slave)
            os.close(master)

        result["blocked"] = not problems
        result["blocked_text"] = verdicts[0] if len(verdicts) == 1 else "(no verdict)"
        result["neighbour"] = neighbours == ["NEIGHBOUR OK"]
        result["neighbour_text"] = neighbours[0] if neighbours else "(no NEIGHBOUR line)"
        result["seconds"] = round(elapsed, 2)
        if problems or not result["neighbour"]:
            diag += ["problem: " + p for p in problems]
            diag.append("command: %s" % " ".join(shlex.quote(a) for a in argv))
            diag += ["stdout: " + l for l in lines[-40:]]
            diag += ["stderr: " + l for l in err.splitlines()[-40:]]
        if not self.keep:
            shutil.rmtree(w["dir"], ignore_errors=True)
        return result

    def run(self, attacks):
        for a in attacks:
            try:
                r = self.run_one(a)
            except Exception as e:  # a runner bug must not hide the other attacks
                import traceback
                r = {"file": a.file, "id": a.id, "tries": a.meta.get("tries", ""), "blocked": False,
                     "neighbour": False, "blocked_text": "runner error", "neighbour_text": "runner error",
                     "diag": traceback.format_exc().splitlines(), "seconds": 0}
                _ = e
            self.emit(r)


# ---- TAP ---------------------------------------------------------------------

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0
        self.counts = {}

    def line(self, ok, desc, diag=(), todo=None):
        self.n += 1
        # A TODO line is a documented known gap: TAP reports it (XFAIL)
        # without failing the run.
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, desc, " # TODO %s" % todo if todo and not ok else ""))
        if not ok and not todo:
            self.failed += 1
            for d in diag:
                print("#   " + d)
        sys.stdout.flush()

    def diag(self, msg):
        for l in str(msg).splitlines():
            print("# " + l)
        sys.stdout.flush()

    def result(self, label, r):
        c = self.counts.setdefault(label, {"blocked": 0, "escaped": 0, "gaps": 0, "errors": 0,
                                           "broken": 0, "seconds": 0.0})
        gap = r.get("known_gap") if not r["blocked"] else None
        # No verdict at all (the sandbox never started, the runner broke) is
        # a failure, but not an escape: count it apart so the summary says
        # which it was.
        no_verdict = r["blocked_text"] in ("(no verdict)", "runner error")
        c["blocked" if r["blocked"] else "gaps" if gap else "errors" if no_verdict else "escaped"] += 1
        c["broken"] += 0 if r["neighbour"] else 1
        c["seconds"] += r.get("seconds", 0)
        what = "%s: %s %s" % (label, r["id"], r["file"])
        self.line(r["blocked"], "%s: attack blocked [%s]" % (what, r["blocked_text"][:100]),
                  r["diag"] if not r["blocked"] else (), todo=gap and "known gap: " + gap)
        if r["blocked"] and r.get("known_gap"):
            self.diag("note (%s, %s): the known gap is now blocked: drop its known-gap line" % (label, r["file"]))
        self.line(r["neighbour"], "%s: neighbour works [%s]" % (what, r["neighbour_text"][:100]),
                  r["diag"] if r["blocked"] and not r["neighbour"] else ())
        for n in r.get("notes", []):
            self.diag("note (%s, %s): %s" % (label, r["file"], n))


def summary(tap):
    lines = []
    total_b = total_e = total_x = 0
    for label, c in tap.counts.items():
        lines.append("%s: %d attacks blocked, %d escaped, %d known gaps, %d without a verdict, "
                     "%d neighbours broken (%.0fs)" %
                     (label, c["blocked"], c["escaped"], c["gaps"], c["errors"], c["broken"], c["seconds"]))
        total_b += c["blocked"]
        total_e += c["escaped"]
        total_x += c["errors"]
    lines.append("%d attacks blocked, %d escaped" % (total_b, total_e) +
                 (", %d without a verdict" % total_x if total_x else ""))
    return lines


# ---- the unprivileged second run (as root) ------------------------------------

def remove_stale_run_dirs():
    """/run/corral-battery-PID* directories of runs that were interrupted."""
    for name in os.listdir("/run"):
        if name.startswith("corral-battery-"):
            pid = name.split("-")[2]
            if pid.isdigit() and not os.path.exists("/proc/" + pid):
                shutil.rmtree(os.path.join("/run", name), ignore_errors=True)


def stage_tools(scratch, corral, attacks_dir):
    """Copy corral, this runner and the attacks into the scratch directory,
    readable by everyone: the sandbox hides the host's /tmp (where a clone
    of the repository may live) and the battery user cannot enter a private
    build directory.  Returns the copies of corral and the attacks."""
    binaries = os.path.join(scratch, "bin")
    os.makedirs(binaries, mode=0o755)
    shutil.copy(corral, os.path.join(binaries, "corral"))
    shutil.copy(os.path.abspath(__file__), os.path.join(binaries, "battery.py"))
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "unprivileged.py"), os.path.join(os.path.dirname(here), "unprivileged.py")):
        if os.path.exists(cand):
            shutil.copy(cand, os.path.join(binaries, "unprivileged.py"))
            break
    for p in os.listdir(binaries):
        os.chmod(os.path.join(binaries, p), 0o755)
    copy = os.path.join(scratch, "attacks")
    shutil.copytree(attacks_dir, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for root, dirs, files in os.walk(copy):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return os.path.join(binaries, "corral"), copy


def run_as_user(tap, scratch, corral, attacks_dir, attacks, args):
    """Create the temporary user, run the battery as it, remove it."""
    run_dir = None
    child = None
    home = os.path.join(scratch, "user")
    try:
        with TempUser(home, tap.diag) as pw:
            binaries = os.path.dirname(corral)
            run_dir = "/run/corral-battery-%d" % os.getpid()
            os.makedirs(run_dir, mode=0o755)
            os.chown(run_dir, pw.pw_uid, pw.pw_gid)
            python = python_for(pw)
            if not python:
                tap.line(False, "user: no Python interpreter usable by %s" % USER_NAME)
                return
            argv = [python, os.path.join(binaries, "battery.py"), "--worker", "--scratch", home, "--corral",
                    corral, "--attacks", attacks_dir, "--run-dir", run_dir]
            for o in args.only:
                argv += ["--only", o]
            if args.keep:
                argv.append("--keep")
            if args.prebuilt:
                argv.append("--prebuilt")
            child = subprocess.Popen(argv, user=pw.pw_uid, group=pw.pw_gid, extra_groups=[], cwd=home,
                                     env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home},
                                     stdout=subprocess.PIPE, start_new_session=True)
            seen = 0
            for raw in child.stdout:
                seen += 1
                tap.result("user", json.loads(raw)["result"])
            child.wait()
            if child.returncode != 0 or seen != len(attacks):
                tap.line(False, "user: the unprivileged runner ended with status %s after %d of %d attacks" %
                         (child.returncode, seen, len(attacks)))
    finally:
        if child is not None and child.poll() is None:
            kill_tree(child)
        if run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


# ---- main ----------------------------------------------------------------------

def worker_main(args):
    """The unprivileged run: results as JSON lines on stdout."""
    def emit(r):
        print(json.dumps({"result": r}), flush=True)
    attacks = load_attacks(args.attacks, args.only)
    b = Battery(args.scratch, args.corral, args.attacks, args.run_dir, args.keep, emit)
    b.prebuilt = args.prebuilt
    try:
        b.run(attacks)
    finally:
        b.close()
    return 0


def main():
    ap = argparse.ArgumentParser(description="corral sandbox escape battery (TAP)")
    ap.add_argument("--only", action="append", default=[], help="run attacks whose file name contains this")
    ap.add_argument("--list", action="store_true", help="list the attacks and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--prebuilt", action="store_true",
                    help="run each attack's command from a pre-built sandbox (corral sandbox --reuse 1)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--scratch", help=argparse.SUPPRESS)
    ap.add_argument("--corral", help=argparse.SUPPRESS)
    ap.add_argument("--attacks", help=argparse.SUPPRESS)
    ap.add_argument("--run-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)

    attacks_dir = find_attacks_dir()
    attacks = load_attacks(attacks_dir, args.only)
    if args.list:
        for a in attacks:
            print("%-4s %-34s %s" % (a.id, a.file, a.meta.get("tries", "")))
        return 0
    tap = Tap()
    corral = find_corral()
    if not os.access(corral, os.X_OK):
        print("Bail out! corral binary not found at %s (set CORRAL_BIN)" % corral)
        return 1
    if not attacks:
        print("Bail out! no attacks found in %s" % attacks_dir)
        return 1
    base = os.environ.get("CORRAL_BATTERY_TMPDIR") or "/var/tmp"
    scratch = tempfile.mkdtemp(prefix="corral-battery-", dir=base)
    os.chmod(scratch, 0o711)
    corral, attacks_dir = stage_tools(scratch, corral, attacks_dir)
    attacks = load_attacks(attacks_dir, args.only)  # their paths now point at the copies
    t0 = time.monotonic()
    interrupted = []

    def on_signal(sig, _frame):
        interrupted.append(sig)
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        label = "root" if os.geteuid() == 0 else "user"
        tap.diag("corral: %s; %d attacks from %s; scratch %s" % (corral, len(attacks), attacks_dir, scratch))
        if os.geteuid() != 0:
            tap.diag("not root: one run as %s (the unprivileged one); as root the battery also runs as a "
                     "temporary unprivileged user" % pwd.getpwuid(os.getuid()).pw_name)
        own = os.path.join(scratch, "self")
        os.makedirs(own, mode=0o700)
        run_dir = None
        if os.geteuid() == 0:
            remove_stale_run_dirs()
            run_dir = "/run/corral-battery-%d-root" % os.getpid()
            os.makedirs(run_dir, mode=0o755)
        b = Battery(own, corral, attacks_dir, run_dir, args.keep, lambda r: tap.result(label, r))
        b.prebuilt = args.prebuilt
        if args.prebuilt:
            tap.diag("every command from a pre-built sandbox (corral sandbox --reuse 1)")
        try:
            b.run(attacks)
        finally:
            b.close()
            if run_dir:
                shutil.rmtree(run_dir, ignore_errors=True)
        if os.geteuid() == 0:
            try:
                run_as_user(tap, scratch, corral, attacks_dir, attacks, args)
            except (OSError, subprocess.CalledProcessError, RuntimeError) as e:
                tap.line(False, "user: cannot run the battery as an unprivileged user: %s" % e)
    except KeyboardInterrupt:
        tap.line(False, "interrupted (signal %s)" % (interrupted[0] if interrupted else "SIGINT"))
    finally:
        if args.keep:
            tap.diag("scratch kept: %s" % scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    tap.diag("total time %.0fs" % (time.monotonic() - t0))
    for l in summary(tap):  # the count of escapes comes last
        tap.diag(l)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
