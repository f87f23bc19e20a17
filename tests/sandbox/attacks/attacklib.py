"""What the Python attacks of the escape battery share (not an attack itself:
battery.py skips this file).

An attack runs as `python3 attacks/NAME.py [INFO.json]`; Python puts the
script's directory first on sys.path, so `from attacklib import ...` finds
this module inside the sandbox too.  An attack defines attack() and
neighbour() and ends with `main(attack, neighbour)`, which prints the two
verdict lines battery.py reads:

    BLOCKED <how> | ESCAPED <what>
    NEIGHBOUR OK | NEIGHBOUR BROKEN <why>

Standard library only; raw system calls use x86_64 numbers.
"""
import ctypes
import errno
import fcntl
import json
import os
import resource
import select
import socket
import subprocess
import sys
import termios

# The runner's description of the world (README.md "What one attack gets");
# empty when an attack is run by hand without one.
INFO = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else {}
# What failed the expected way, and what did not: one entry makes ESCAPED.
escaped, blocked = [], []


def attempt(what, fn, *expected):
    """fn must fail with one of the expected errnos; success or another
    errno means the sandbox did not stop it the way it should."""
    try:
        r = fn()
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        if e.errno in expected:
            blocked.append("%s: %s" % (what, name))
        else:
            escaped.append("%s: unexpected %s" % (what, name))
        return None
    escaped.append("%s: succeeded" % what)
    return r


def home_layer():
    """Whether $HOME is the sandbox's home layer (an overlay mounted on it):
    writes there then succeed and land in the layer, and the runner checks
    that the real home did not change."""
    home = os.path.realpath(os.environ.get("HOME", "/"))
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = left.split()
            point = fields[4].encode().decode("unicode_escape") if len(fields) > 4 else ""
            if point == home and right.split()[:1] == ["overlay"]:
                return True
    return False


def attempt_home_write(what, fn, *expected):
    """A write to the home: with the home layer it lands in the layer (it
    must work: tools rely on it; the real home is the runner's to check);
    without one it must fail with one of expected."""
    if not home_layer():
        return attempt(what, fn, *expected)
    try:
        r = fn()
    except OSError as e:
        escaped.append("%s: the home layer refused it: %s" % (what, errno.errorcode.get(e.errno, e.errno)))
        return None
    blocked.append("%s: into the sandbox's home layer" % what)
    return r


def judge_errno(what, e, *expected):
    """For an attempt made by hand that raised the OSError e: record
    "what: ENAME" as blocked when its errno is one of expected, else as escaped."""
    (blocked if e.errno in expected else escaped).append("%s: %s" % (what, errno.errorcode[e.errno]))


def attempt_read(what, path, got="%d bytes"):
    """Reading path must fail with EACCES or ENOENT, or find the file empty;
    reading any byte escapes ("what: " + got % the byte count)."""
    try:
        data = open(path, "rb").read()
    except OSError as e:
        judge_errno(what, e, errno.EACCES, errno.ENOENT)
        return
    (escaped if data else blocked).append("%s: %s" % (what, got % len(data) if data else "empty"))


def attempt_listdir(what, path):
    """Listing path must fail with EACCES or ENOENT, or find it empty."""
    try:
        names = os.listdir(path)
    except OSError as e:
        judge_errno("ls %s" % what, e, errno.EACCES, errno.ENOENT)
        return
    (escaped if names else blocked).append("ls %s: %s" % (what, names or "empty"))


def main(attack, neighbour):
    """Run the attack, then the neighbour (which returns None when the
    legitimate operation works, else why not), and print the verdicts."""
    try:
        attack()
    except Exception as e:  # an attack that crashes proves nothing
        escaped.append("attack crashed: %r" % e)
    try:
        problem = neighbour()
    except Exception as e:
        problem = "crashed: %r" % e
    if not escaped and not blocked:
        # Nothing this attack needs exists here (no cgroup hierarchy, say):
        # say so instead of an empty BLOCKED that looks like a real result.
        blocked.append("nothing to try in this sandbox: no attempt was made")
    print("ESCAPED " + "; ".join(escaped) if escaped else "BLOCKED " + "; ".join(blocked), flush=True)
    print("NEIGHBOUR BROKEN " + problem if problem else "NEIGHBOUR OK", flush=True)


# ---- system calls and limits -----------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
AT_FDCWD = -100


def sys_call(nr, *args):
    """A raw x86_64 system call; integers travel as full 64-bit words."""
    conv = [ctypes.c_ulong(a % 2**64) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def setrlimit(res, limits):
    """resource.setrlimit, with CPython's ValueError for EPERM turned back into the errno."""
    try:
        resource.setrlimit(res, limits)
    except ValueError as e:
        if "not allowed" in str(e):
            raise OSError(errno.EPERM, str(e))
        raise


# ---- processes -------------------------------------------------------------------

def blocked_child():
    """A child that waits on a pipe until the parent closes it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    return pid, w


# ---- git (needs: git and its variants) -------------------------------------------

def git(*args, env=None):
    """Run git; its output (stdout and stderr) in .stdout."""
    return subprocess.run(["git", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def git_steps(*commands, env=None):
    """Run git commands (argument lists) in turn: None when every one
    works, else which failed and what it said."""
    for args in commands:
        r = git(*args, env=env)
        if r.returncode != 0:
            return "git %s failed: %s" % (args[0], r.stdout.strip())
    return None


def git_commit_neighbour():
    """git add and git commit work in the workspace (needs: git)."""
    open("new.txt", "w").write("new\n")
    problem = git_steps(("add", "new.txt"), ("commit", "-q", "-m", "from the sandbox"))
    if problem:
        return problem
    r = git("log", "--oneline")
    return None if len(r.stdout.splitlines()) >= 2 else "commit missing from git log"


# ---- the network (off) -----------------------------------------------------------

def loopback_neighbour():
    """With the network off, servers and their clients inside the sandbox talk
    over its own loopback: TCP and UDP, on 127.0.0.1 and ::1."""
    for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            srv = socket.socket(family, socket.SOCK_STREAM)
            srv.bind((addr, 0))
            srv.listen(1)
            cli = socket.create_connection(srv.getsockname()[:2], timeout=10)
            conn, _ = srv.accept()
            cli.sendall(b"ping")
            got = conn.recv(4)
            for s in (cli, conn, srv):
                s.close()
            if got != b"ping":
                return "TCP over %s passed %r" % (addr, got)
            a = socket.socket(family, socket.SOCK_DGRAM)
            a.bind((addr, 0))
            b = socket.socket(family, socket.SOCK_DGRAM)
            b.sendto(b"pong", a.getsockname()[:2])
            a.settimeout(10)
            got, _ = a.recvfrom(16)
            a.close()
            b.close()
            if got != b"pong":
                return "UDP over %s passed %r" % (addr, got)
        except OSError as e:
            return "a server and client over %s: %s" % (addr, errno.errorcode.get(e.errno, e))
    return None


def connect_new(family, addr, timeout=10):
    """Connect a new TCP socket to addr (the socket is closed again)."""
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(addr)
    finally:
        s.close()


def udp_exchange(family, addr, payload, timeout=10):
    """Send a datagram to addr from a connected UDP socket and wait for an
    answer: on the sandbox's own loopback, where nothing listens, the
    kernel answers ECONNREFUSED (an ICMP port unreachable from itself)."""
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.connect(addr)
        s.send(payload)
        return s.recv(512)
    finally:
        s.close()


def socketpair_neighbour():
    """Local IPC keeps working with the network off: an AF_UNIX socketpair."""
    a, b = socket.socketpair()
    os.write(a.fileno(), b"ping")
    got = os.read(b.fileno(), 4)
    a.close()
    b.close()
    return None if got == b"ping" else "socketpair passed %r" % got


# ---- the terminal (needs: pty) ---------------------------------------------------

TIOCSTI, TIOCLINUX, TIOCGWINSZ = 0x5412, 0x541C, 0x5413
SYS_ioctl = 16


def stdin_has_input():
    return bool(select.select([0], [], [], 0.2)[0])


def pty_neighbour():
    if not os.isatty(0):
        return "stdin is not a terminal (run this attack with a pty as stdin)"
    fcntl.ioctl(0, TIOCGWINSZ, b"\0" * 8)
    termios.tcgetattr(0)
    master, slave = os.openpty()  # the sandbox's own devpts
    os.write(master, b"ping\n")
    got = os.read(slave, 16)
    os.close(master)
    os.close(slave)
    return None if got.startswith(b"ping") else "own pty read %r" % got
