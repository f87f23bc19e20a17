"""Shared pieces of corral's integration tests.

Each test file is a TAP producer run by automake's tap-driver.  A test gets a
private corral world (runtime, state and config directories under one temp
directory), starts a real server in it over its real socket, and talks to it
with the real CLI or with the raw protocol.  Nothing is mocked.
"""
import atexit
import base64
import json
import os
import pty
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

CORRAL = os.environ.get("CORRAL_BIN") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", "src", "corral"))

# Every wait in these tests is for an event (a reply, a file, a process
# ending); this is only the bound after which a missing event is a failure.
TIMEOUT = 30


class Tap:
    """Minimal TAP producer: ok/not ok lines, diagnostics, final plan."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, detail=None):
        self.n += 1
        print(("ok %d - %s" if cond else "not ok %d - %s") % (self.n, desc))
        if not cond:
            self.failed += 1
            if detail is not None:
                for line in str(detail).splitlines() or [""]:
                    print("# " + line)
        sys.stdout.flush()
        return cond

    def eq(self, got, want, desc, detail=None):
        more = "" if detail is None else "\n" + str(detail)
        return self.ok(got == want, desc, "got:  %r\nwant: %r%s" % (got, want, more))

    def skip(self, desc, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, reason))
        sys.stdout.flush()

    def diag(self, msg):
        for line in str(msg).splitlines():
            print("# " + line)

    def done(self):
        print("1..%d" % self.n)
        sys.stdout.flush()
        sys.exit(1 if self.failed else 0)


def run_tests(tap, tests):
    """Run each test function with the tap; an exception is a failure."""
    for fn in tests:
        try:
            fn(tap)
        except Exception:
            tap.ok(False, "%s raised" % fn.__name__, traceback.format_exc())
    tap.done()


class World:
    """A private corral installation: its own XDG directories and server."""

    def __init__(self, config=None, base=None):
        self.base = base or tempfile.mkdtemp(prefix="crl")
        os.chmod(self.base, 0o755)
        self.runtime = os.path.join(self.base, "run")
        self.state = os.path.join(self.base, "state")
        self.config = os.path.join(self.base, "config")
        # The sessions' workspace: sandboxed commands may write here.
        self.ws = os.path.join(self.base, "ws")
        for d in (self.runtime, self.state, self.config, self.ws):
            os.makedirs(d, exist_ok=True)
        os.chmod(self.runtime, 0o700)
        self.env = dict(os.environ)
        self.env.update(XDG_RUNTIME_DIR=self.runtime, XDG_STATE_HOME=self.state,
                        XDG_CONFIG_HOME=self.config)
        self.env.pop("CORRAL_CLIENT", None)
        self.env.pop("CORRAL_SESSION", None)
        if config is not None:
            self.write_config(config)
        self.server = None
        self.cleaned = False
        # A test file that dies before its own cleanup must not leave a
        # server (and its sessions) running after the test run.
        atexit.register(self.cleanup)

    @property
    def socket_path(self):
        return os.path.join(self.runtime, "corral", "default.sock")

    def write_config(self, text):
        os.makedirs(os.path.join(self.config, "corral"), exist_ok=True)
        with open(os.path.join(self.config, "corral", "config"), "w") as f:
            f.write(text)

    def session_dir(self, sid):
        return os.path.join(self.state, "corral", "sessions", str(sid))

    def start_server(self, extra_env=None, preexec=None, wrap=()):
        """Start `corral server --foreground` and wait for its ready line;
        wrap: a command it runs under (nsenter into a namespace, say)."""
        r, w = os.pipe()
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        log = open(os.path.join(self.base, "server.log"), "ab")
        self.server = subprocess.Popen(
            list(wrap) + [CORRAL, "server", "--foreground", "--ready-fd", str(w)],
            env=env, pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=log,
            stderr=log, preexec_fn=preexec)
        os.close(w)
        line = read_line_fd(r, TIMEOUT)
        os.close(r)
        if not line.startswith("ok "):
            raise RuntimeError("server did not start: %r; log:\n%s" % (line, self.server_log()))
        return self.server

    def server_log(self):
        try:
            with open(os.path.join(self.base, "server.log")) as f:
                return f.read()
        except OSError:
            return ""

    def corral(self, *args, input=None, timeout=TIMEOUT, env=None):
        """Run the CLI; stdout/stderr are decoded as they are (no newline
        translation: a terminal's \r\n must stay visible)."""
        e = dict(self.env)
        if env:
            e.update(env)
        r = subprocess.run([CORRAL] + list(args), input=input.encode() if input else None,
                           capture_output=True, timeout=timeout, env=e)
        r.stdout = r.stdout.decode("utf-8", "replace")
        r.stderr = r.stderr.decode("utf-8", "replace")
        return r

    def connect(self, client="test", hello=True):
        c = Client(self.socket_path)
        if hello:
            r = c.call({"cmd": "hello", "protocol": 1, "client": client})
            if "error" in r:
                raise RuntimeError("hello failed: %r" % r)
        return c

    def stop(self):
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        # A server started by a client (autostart) is found by its lock.
        lock = os.path.join(self.runtime, "corral", "default.lock")
        try:
            pid = int(open(lock).read().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid > 0 and pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            wait_until(lambda: not pid_alive(pid), TIMEOUT)

    def cleanup(self):
        if self.cleaned:
            return
        self.cleaned = True
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


def read_line_fd(fd, timeout):
    data = b""
    end = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = end - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


class Client:
    """The raw protocol over the admin socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1
        self.events = []

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, obj):
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def read_msg(self, timeout=TIMEOUT):
        self.sock.settimeout(timeout)
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def read_reply(self, timeout=TIMEOUT):
        """The next reply (a message that is not an event), keeping the
        events that come before it (an exec waiting for approval is told
        so with an approval_pending event first)."""
        while True:
            m = self.read_msg(timeout)
            if "event" in m:
                self.events.append(m)
                continue
            return m

    def call(self, req, timeout=TIMEOUT):
        """Send req with a fresh id; return the reply, keeping events."""
        rid = self.next_id
        self.next_id += 1
        req = dict(req, id=rid)
        self.send(req)
        while True:
            m = self.read_msg(timeout)
            if "event" in m:
                self.events.append(m)
                continue
            if m.get("id") == rid or ("error" in m and m.get("id") is None):
                return m

    def next_event(self, pred):
        """The first message pred accepts: from those kept, else the next
        ones read (keeping the others for later)."""
        for i, m in enumerate(self.events):
            if pred(m):
                return self.events.pop(i)
        while True:
            m = self.read_msg()
            if pred(m):
                return m
            self.events.append(m)

    def screen_until(self, sid, marker):
        """A watched session's terminal bytes until marker shows."""
        data = b""
        while marker.encode() not in data:
            m = self.next_event(lambda m: m.get("event") == "term" and m.get("session") == sid)
            data += base64.b64decode(m["data_b64"])
        return data.decode(errors="replace")

    def type_line(self, sid, line):
        """A line typed into a session's terminal."""
        self.call({"cmd": "input", "session": sid, "data": line + "\r"})

    def close(self):
        self.sock.close()



def run_in_pty(argv, env=None, answer=None):
    """argv with a terminal as stdin and stdout (asciinema cat insists on
    /dev/tty), env its whole environment (default: this one): its exit
    status and everything it printed.  answer: (prompt, reply) bytes: reply
    is typed once prompt has been printed (a question the program asks)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    out = b""
    while True:
        if not select.select([fd], [], [], TIMEOUT)[0]:
            break  # printed nothing for TIMEOUT: the caller sees what it did print
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if answer and answer[0] in out:
            os.write(fd, answer[1])
            answer = None
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out

def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def pid_alive(pid):
    """True if pid exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def parent_of(pid):
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def pids_whose_argv(pred):
    """The live processes whose argv (a list of bytes) pred accepts."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if pred(argv):
            pids.append(int(d))
    return pids


def reader_pids(ws):
    """The confined snapshot readers of workspace ws (their cmdline names
    it)."""
    return pids_whose_argv(lambda argv: b"__snapworker" in argv and ws.encode() in argv)


def store_pids(ws):
    """The snapshot store processes of workspace ws (corral __snapstore WS)."""
    return pids_whose_argv(lambda argv: argv[1:3] == [b"__snapstore", ws.encode()])


def descendants(root):
    """Every live process whose parent chain leads to root."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            pp = parent_of(int(name))
            if pp is not None:
                parents[int(name)] = pp
    found = set()
    changed = True
    while changed:
        changed = False
        for pid, pp in parents.items():
            if pid not in found and (pp == root or pp in found):
                found.add(pid)
                changed = True
    return {p for p in found if pid_alive(p)}


def placeholder_registry():
    """corral's registry of the placeholders it made, one per user
    (sandbox/placeholders.h): /dev/shm/corral-UID/placeholders, or /tmp's
    where /dev/shm is not a world-writable sticky directory."""
    try:
        st = os.stat("/dev/shm")
        shm = (st.st_mode & 0o1777) == 0o1777
    except OSError:
        shm = False
    return os.path.join("/dev/shm" if shm else "/tmp", "corral-%d" % os.geteuid(), "placeholders")


def placeholders_held(ws, depth=3):
    """The registry's entries that a launcher holds for placeholders in ws
    or its directories (to depth levels below it): an entry is named after
    its parent directory's device and inode and its own name.  Other tests'
    entries (the registry is shared by every launcher of the user) are left
    out."""
    parents = set()
    for d, dirs, _ in os.walk(ws):
        try:
            st = os.stat(d)
        except OSError:
            continue
        parents.add("%x.%x." % (st.st_dev, st.st_ino))
        if d[len(ws):].count(os.sep) >= depth:
            dirs[:] = []
    reg = placeholder_registry()
    try:
        names = os.listdir(reg)
    except OSError:
        return []
    # Held: some launcher has a lock on the entry (/proc/locks, read
    # without taking one: a lock of ours would stop a launcher's removal).
    # An entry nobody holds is stale (a launcher killed outright leaves its
    # own), and it may name a directory whose inode a new one reuses.
    locked = set()
    try:
        with open("/proc/locks") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 5 and fields[1] == "FLOCK":
                    locked.add(fields[5])  # MAJ:MIN:INODE, the first two in hex
    except OSError:
        pass
    held = []
    for n in names:
        if not any(n.startswith(p) for p in parents):
            continue
        try:
            st = os.stat(os.path.join(reg, n))
        except OSError:
            continue
        if "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in locked:
            held.append(n)
    return sorted(held)


def wait_until(pred, timeout=TIMEOUT, interval=0.02):
    """Poll pred until true: for conditions no event announces (a process
    disappearing from /proc); returns the final value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > end:
            return v
        time.sleep(interval)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
