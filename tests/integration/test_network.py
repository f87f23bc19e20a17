#!/usr/bin/env python3
"""Network through corral's proxy, end to end: a real server, real
sandboxed commands (curl, git, pip, python) in network mode proxy, the
approval queue answered with the real CLI, the rules file, a server
restart, and the sessions' connection records.

Run by anyone: the environment the sandbox gets; a host asked about once
per (host, protocol, port), answered with deny, approve --session (not
asked again), deny --persist and approve --persist (rules that survive a
restart); two connections waiting for one host share one question; a host
that resolves to loopback is refused unless a rule names it; the open
connection count; every connection's record; direct connections and DNS
from inside fail.  As root this file runs again as a temporary user.

As root, also with the server in a private network namespace whose
"internet" is a second namespace behind a veth pair (tests/integration/
netlab.py): HTTPS with the server's own certificate, git clone over HTTPS
and pip download through the proxy, a name resolving to a private address
refused after approval, and no DNS query leaving the sandbox.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CORRAL, TIMEOUT, Tap, World, read_jsonl, run_tests, wait_until  # noqa: E402
import proxyservers as ps  # noqa: E402

HTTP_PROXY = "http://127.0.0.1:3128"
SOCKS_PROXY = "socks5h://127.0.0.1:1080"
# A curl inside the sandbox that goes through the proxy even for names
# NO_PROXY keeps direct, and never waits long.
CURL = "curl -sS -D - --max-time %d --noproxy '' " % (TIMEOUT - 5)


def have(tool):
    return shutil.which(tool) is not None


class Net:
    """A world with a monitor subscribed to its events."""

    def __init__(self, wrap=()):
        self.wrap = wrap
        self.w = World()
        self.start()

    def start(self):
        self.w.start_server(wrap=self.wrap)
        self.mon = self.w.connect("monitor")
        self.mon.call({"cmd": "subscribe"})

    def restart(self):
        self.mon.close()
        self.w.stop()
        self.start()

    def run(self, script, timeout=TIMEOUT):
        """script in a sandboxed exec (network mode proxy, the default)."""
        return subprocess.run([CORRAL, "exec", "--raw", "-C", self.w.ws, "--", "sh", "-c", script], env=self.w.env,
                              capture_output=True, text=True, timeout=timeout + 10)

    def start_run(self, script):
        return subprocess.Popen([CORRAL, "exec", "--raw", "-C", self.w.ws, "--", "sh", "-c", script], env=self.w.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def event(self, pred, proc=None):
        """The next event pred accepts; None if proc ends first or none
        comes in TIMEOUT."""
        end = time.monotonic() + TIMEOUT
        while time.monotonic() < end:
            if self.mon.events:
                m = self.mon.events.pop(0)
            else:
                try:
                    m = self.mon.read_msg(timeout=0.5)
                except TimeoutError:
                    if proc is not None and proc.poll() is not None:
                        return None
                    continue
            if pred(m):
                return m
        return None

    def host_request(self, host, proc, protocol=None):
        m = self.event(lambda m: m.get("event") == "approval" and m["approval"].get("kind") == "network"
                       and m["approval"].get("host") == host
                       and (protocol is None or m["approval"].get("protocol") == protocol), proc)
        return m["approval"] if m else None

    def drain(self):
        """Events already sent (a short read: the server sends each event
        before the reply or the output that follows it)."""
        out = list(self.mon.events)
        self.mon.events.clear()
        while True:
            try:
                out.append(self.mon.read_msg(timeout=0.2))
            except TimeoutError:
                return out

    def rules_text(self):
        try:
            with open(os.path.join(self.w.config, "corral", "rules", "default.rules")) as f:
                return f.read()
        except OSError:
            return ""

    def records(self):
        """Every connection record in every session's events.jsonl."""
        out = []
        root = os.path.join(self.w.state, "corral", "sessions")
        for sid in os.listdir(root) if os.path.isdir(root) else ():
            path = os.path.join(root, sid, "events.jsonl")
            if os.path.exists(path):
                out += [e for e in read_jsonl(path) if e.get("type") == "network" or e.get("event") == "network"]
        return out

    def close(self):
        self.w.cleanup()


def header(out, name):
    for line in out.splitlines():
        k, _, v = line.partition(":")
        if k.strip().lower() == name.lower():
            return v.strip()
    return None


def test_environment(t):
    n = Net()
    try:
        r = n.run("env")
        env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        t.ok(env.get("HTTP_PROXY") == HTTP_PROXY and env.get("https_proxy") == HTTP_PROXY
             and env.get("ALL_PROXY") == SOCKS_PROXY and env.get("NO_PROXY") == "localhost,127.0.0.1,::1"
             and env.get("npm_config_https_proxy") == HTTP_PROXY and env.get("PIP_PROXY") == HTTP_PROXY
             and env.get("CORRAL_NETWORK") == "proxy",
             "a workspace-write sandbox gets the proxy in every variable tools read", r.stdout + r.stderr)
        m = n.event(lambda m: m.get("event") == "session" and m["session"].get("network") == "proxy")
        t.ok(m is not None and "connections" in m["session"], "its session says network proxy and counts connections",
             m)
        r = n.run("ls /proc/net >/dev/null; python3 -c 'import socket; s=socket.socket(); "
                  "s.connect((\"127.0.0.1\", 3128)); print(\"listening\")'")
        t.ok("listening" in r.stdout, "the proxy answers on 127.0.0.1:3128 inside the sandbox", r.stdout + r.stderr)
        r = subprocess.run([CORRAL, "exec", "--raw", "-C", n.w.ws, "--profile", "read-only", "--", "sh", "-c",
                            "echo ${HTTP_PROXY:-none}"], env=n.w.env, capture_output=True, text=True, timeout=TIMEOUT)
        t.eq(r.stdout.strip(), "none", "a read-only sandbox has no network and no proxy")
    finally:
        n.close()


def test_host_questions(t):
    """One host asked, answered each way through the CLI; the rules it
    saves; a restart."""
    web = ps.WebServer("web-a")
    web2 = ps.WebServer("web-b")
    n = Net()
    try:
        url = "http://localhost:%d/info" % web.port
        # deny: this connection only.
        p = n.start_run(CURL + "-x %s %s" % (HTTP_PROXY, url))
        a = n.host_request("localhost", p)
        t.ok(a is not None and a.get("port") == web.port and a.get("protocol") == "http",
             "curl through the HTTP proxy asks about the host, its port and protocol", a)
        if a is None:
            p.kill()
            return
        listing = n.w.corral("approvals").stdout
        t.ok("network access to: localhost, port %d, protocol http" % web.port in listing
             and 'approve --persist saves: network_rule(host="localhost", protocol="http", decision="allow")' in listing
             and 'deny --persist saves: network_rule(host="localhost", protocol="http", decision="deny")' in listing,
             "corral approvals shows the host request and what each answer saves", listing)
        t.ok("address: localhost is this machine (loopback): allowing lets the program reach the services running "
             "on your machine" in listing, "and, before any answer, that allowing it reaches this machine", listing)
        ls = n.w.corral("ls").stdout
        t.ok(("waits for an answer to request %d: session %d" % (a["id"], a["session"])) in ls
             and "asks to reach localhost (http) (corral approve %d, corral deny %d)" % (a["id"], a["id"]) in ls,
             "corral ls says the session waits, for which host, and how to answer (no screen needed)", ls)
        n.w.corral("deny", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(out.startswith("HTTP/1.1 403") and header(out, "X-Corral-Error") == "denied"
             and "localhost" in out and "denied" in out, "denied: a 403 that names the host and says why", out + err)
        t.eq(len(web.requests), 0, "and nothing reached the server")

        # approve --session: localhost is what is dialled, and the person
        # was told it is this machine: the answer reaches it; the same
        # command's next connection is not asked.
        one = CURL + "-x %s %s" % (HTTP_PROXY, url)
        p = n.start_run("%s > 1.out; %s > 2.out; cat 1.out; echo =====; cat 2.out" % (one, one))
        a = n.host_request("localhost", p)
        t.ok(a is not None, "denied once, the next connection asks again")
        if a is None:
            p.kill()
            return
        n.w.corral("approve", "--session", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT * 2)
        first, _, second = out.partition("=====")
        t.ok('"server": "web-a"' in first, "approved, localhost (this machine, as the question said) is reached: an "
             "answer is enough where the host is the address", out + err)
        t.ok('"server": "web-a"' in second, "approved for the session: its next connection is not asked again",
             out + err)

        # SOCKS5: its own question; deny --persist saves a deny rule.
        socks = CURL + "-x %s %s" % (SOCKS_PROXY, url)
        p = n.start_run(socks)
        a = n.host_request("localhost", p, "socks5_tcp")
        t.ok(a is not None, "curl through SOCKS5 asks (protocol socks5_tcp)", a)
        if a is None:
            p.kill()
            return
        r = n.w.corral("deny", "--persist", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(p.returncode != 0 and "HTTP/1.1 200" not in out, "deny --persist: curl is refused", out + err)
        t.ok('network_rule(host="localhost", protocol="socks5_tcp", decision="deny")' in n.rules_text(),
             "and a deny rule is saved in default.rules", n.rules_text())
        r = n.run(socks)
        t.ok(r.returncode != 0 and "HTTP/1.1 200" not in r.stdout, "the next one is refused without asking",
             r.stdout + r.stderr)

        # Two connections of one command to a new (host, protocol, port):
        # one question, one answer for both.
        url2 = "http://localhost:%d/info" % web2.port
        p = n.start_run("%s -x %s %s > a.out & %s -x %s %s > b.out; wait; cat a.out b.out"
                        % (CURL, HTTP_PROXY, url2, CURL, HTTP_PROXY, url2))
        # The question and the count of two may come in either order.
        seen = {}
        n.event(lambda m: seen.update(
            {"a": m["approval"]} if m.get("event") == "approval" and m["approval"].get("host") == "localhost"
            and m["approval"].get("protocol") == "http" else
            {"both": True} if m.get("event") == "session" and m["session"].get("connections") == 2 else {})
            or ("a" in seen and "both" in seen), p)
        a = seen.get("a")
        t.ok(a is not None and "both" in seen, "two connections to a new host wait at once", seen)
        if a is None:
            p.kill()
            return
        waiting = [x for x in json.loads(n.w.corral("approvals", "--json").stdout) if x.get("kind") == "network"]
        t.eq(len(waiting), 1, "and share one question", waiting)
        n.w.corral("approve", "--persist", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.eq(out.count('"server": "web-b"'), 2,
             "approve --persist: one answer lets both through, and a rule naming the host reaches the local service",
             out + err)
        t.ok('network_rule(host="localhost", protocol="http", decision="allow")' in n.rules_text(),
             "the allow rule is saved", n.rules_text())

        # The records.
        recs = n.records()
        denied = [x for x in recs if x.get("decision") == "deny" and x.get("protocol") == "http"]
        allowed = [x for x in recs if x.get("decision") == "allow_explicit" and x.get("port") == web2.port]
        t.ok(denied and "denied" in denied[0].get("reason", ""), "a denied connection's record says so", recs)
        t.ok(allowed and all(k in allowed[0] for k in ("host", "address", "bytes_to_server", "bytes_to_client",
                                                       "duration_ms", "close"))
             and allowed[0]["address"] == "127.0.0.1:%d" % web2.port and allowed[0]["bytes_to_client"] > 0
             and "approved by the user" in allowed[0].get("reason", "") + "".join(x.get("reason", "") for x in allowed),
             "an allowed connection's record: host, address dialled, bytes each way, duration, close, who allowed it",
             allowed)

        # A restart: the saved rules still decide, nobody is asked.
        n.restart()
        r = n.run(CURL + "-x %s %s" % (HTTP_PROXY, url2))
        t.ok('"server": "web-b"' in r.stdout, "after a restart the saved allow rule lets it through unasked",
             r.stdout + r.stderr)
        r = n.run(socks)
        t.ok(r.returncode != 0 and "HTTP/1.1 200" not in r.stdout, "and the saved deny rule still refuses",
             r.stdout + r.stderr)
        t.eq([m for m in n.drain() if m.get("event") == "approval"], [], "nobody was asked after the restart")
    finally:
        n.close()
        web.close()
        web2.close()


def test_running_is_the_foreground_program(t):
    """The question about a host says what connects: in a shell the hook
    does not mark (sh), the program in the terminal's foreground, not the
    shell; as the program names itself, with its control characters made
    visible."""
    web = ps.WebServer("fg")
    n = Net()
    try:
        sid = n.mon.call({"cmd": "new", "argv": ["sh"], "cwd": n.w.ws, "name": "plain-sh"})["session"]["id"]
        # A program that names itself with a control sequence in its name.
        script = os.path.join(n.w.ws, "fetch.sh")
        with open(script, "w") as f:
            f.write("#!/bin/bash\nexec -a \"$(printf 'curl\\033[2J')\" %s-x %s http://localhost:%d/fg\n"
                    % (CURL, HTTP_PROXY, web.port))
        os.chmod(script, 0o755)
        n.mon.call({"cmd": "input", "session": sid, "data": "./fetch.sh\r"})
        a = n.host_request("localhost", None)
        running = (a or {}).get("running", "")
        t.ok("curl" in running and "-x" in running and "\x1b" not in running and "\\x1b" in running,
             "Running: is the program in the foreground, not the session's shell", a)
        listing = n.w.corral("approvals").stdout
        t.ok("\x1b" not in listing and "2J" in listing and "running: " in listing,
             "and what the program calls itself is shown with its control characters made visible", listing)
        if a:
            n.w.corral("deny", str(a["id"]))
    finally:
        n.close()
        web.close()


def test_open_connections_count(t):
    web = ps.WebServer("web-c")
    n = Net()
    try:
        rules = os.path.join(n.w.config, "corral", "rules")
        os.makedirs(rules, exist_ok=True)
        with open(os.path.join(rules, "local.rules"), "w") as f:
            f.write('network_rule(host="127.0.0.1", protocol="http", decision="allow")\n')
        n.restart()
        fifo = os.path.join(n.w.ws, "hold")
        os.mkfifo(fifo)
        os.chmod(n.w.ws, 0o777)
        hold = ("import socket; s = socket.create_connection(('127.0.0.1', 3128)); "
                "s.sendall(b'GET http://127.0.0.1:%d/info HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'); "
                "print(s.recv(65536).split(b'\\r\\n')[0].decode(), flush=True); open('hold').read(); s.close()"
                % web.port)
        p = n.start_run("python3 -c \"%s\"" % hold)
        m = n.event(lambda m: m.get("event") == "session" and m["session"].get("connections") == 1, p)
        t.ok(m is not None, "an open connection through the proxy shows in its session's count", m)
        ls = json.loads(n.w.corral("ls", "--json").stdout or "[]")
        ls = ls.get("sessions", ls) if isinstance(ls, dict) else ls
        t.ok(any(s.get("connections") == 1 for s in ls), "corral ls --json has it too", ls)
        with open(fifo, "w") as f:
            f.write("done\n")
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(out.startswith("HTTP/1.1 200"), "a rule naming 127.0.0.1 reaches the host's local service unasked",
             out + err)
        m = n.event(lambda m: m.get("event") == "session" and m["session"].get("connections") == 0)
        t.ok(m is not None, "closed, the count goes back to 0")
        recs = [x for x in n.records() if x.get("port") == web.port]
        t.ok(recs and "a network_rule allowing 127.0.0.1 (http)" in recs[0].get("reason", "")
             and recs[0].get("decision") == "allow_explicit", "its record says the rule allowed it", recs)
    finally:
        n.close()
        web.close()


def host_address():
    """This machine's address on its default route (not loopback), or None."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("192.0.2.1", 9))
        a = s.getsockname()[0]
        s.close()
        return None if a.startswith("127.") else a
    except OSError:
        return None


def test_no_way_around(t):
    """Nothing but the proxy leaves the sandbox: a direct connection to
    the host's own address, UDP, and DNS all fail."""
    n = Net()
    addr = host_address()
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen(8)
    listener.setblocking(False)
    try:
        script = ("import socket, sys\n"
                  "def tcp(a):\n"
                  "    try:\n"
                  "        socket.create_connection(a, timeout=5); return 'CONNECTED'\n"
                  "    except OSError as e: return 'refused: %s' % e\n"
                  "def udp():\n"
                  "    try:\n"
                  "        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 53)); return 'SENT'\n"
                  "    except OSError as e: return 'refused: %s' % e\n"
                  "def dns():\n"
                  "    try:\n"
                  "        return 'RESOLVED %s' % socket.getaddrinfo('corral-leak.example.com', 80)[0][4][0]\n"
                  "    except OSError as e: return 'refused: %s' % e\n"
                  "print('tcp', tcp((sys.argv[1], int(sys.argv[2]))) if sys.argv[1] != '-' else 'tcp skipped')\n"
                  "print('udp', udp())\n"
                  "print('dns', dns())\n")
        with open(os.path.join(n.w.ws, "probe.py"), "w") as f:
            f.write(script)
        r = n.run("python3 probe.py %s %d" % (addr or "-", listener.getsockname()[1]))
        lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
        if addr:
            t.ok(lines.get("tcp", "").startswith("refused"), "a direct TCP connection to the host's %s fails" % addr,
                 r.stdout + r.stderr)
            try:
                listener.accept()
                t.ok(False, "and the host saw no connection")
            except BlockingIOError:
                t.ok(True, "and the host saw no connection")
        else:
            t.skip("a direct TCP connection to the host's address fails", "this machine has no non-loopback address")
        t.ok(lines.get("udp", "").startswith("refused"), "UDP out of the sandbox fails", r.stdout + r.stderr)
        t.ok(lines.get("dns", "").startswith("refused"), "a DNS lookup inside the sandbox fails", r.stdout + r.stderr)
        t.eq([m for m in n.drain() if m.get("event") == "approval"], [], "and none of it asked anybody")
    finally:
        listener.close()
        n.close()


# ---- as root: a private "internet" ------------------------------------------------------------

def make_wheel(directory, name="corraldemo", version="1.0"):
    """A minimal pure-Python wheel and a PEP 503 simple index for it."""
    dist = "%s-%s" % (name, version)
    wheel = "%s-py3-none-any.whl" % dist
    pkg = os.path.join(directory, "simple", name)
    os.makedirs(pkg)
    with zipfile.ZipFile(os.path.join(pkg, wheel), "w") as z:
        z.writestr("%s/__init__.py" % name, "VALUE = 42\n")
        z.writestr("%s.dist-info/METADATA" % dist, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
        z.writestr("%s.dist-info/WHEEL" % dist, "Wheel-Version: 1.0\nGenerator: corral-test\nRoot-Is-Purelib: true\n"
                   "Tag: py3-none-any\n")
        z.writestr("%s.dist-info/RECORD" % dist, "")
    with open(os.path.join(pkg, "index.html"), "w") as f:
        f.write('<html><body><a href="%s">%s</a></body></html>\n' % (wheel, wheel))
    with open(os.path.join(directory, "simple", "index.html"), "w") as f:
        f.write('<html><body><a href="%s/">%s</a></body></html>\n' % (name, name))
    return wheel


def make_repo(root):
    src = os.path.join(root, "src")
    os.makedirs(src)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=root, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "init", "-q", "-b", "main", src], check=True, env=env)
    with open(os.path.join(src, "file.txt"), "w") as f:
        f.write("through corral's proxy\n")
    subprocess.run(["git", "-C", src, "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", src, "commit", "-qm", "one"], check=True, env=env)
    subprocess.run(["git", "clone", "-q", "--bare", src, os.path.join(root, "repo.git")], check=True, env=env)


def test_private_internet(t):
    what = "the proxy between a sandbox and a private internet"
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        t.skip(what, "needs root (network namespaces with a veth pair, bind mounts)")
        return
    if not all(have(x) for x in ("unshare", "nsenter", "ip", "curl", "git", "openssl")):
        t.skip(what, "unshare, nsenter, ip, curl, git or openssl is not installed")
        return
    from netlab import Netns
    d = tempfile.mkdtemp(prefix="crlnet")
    os.chmod(d, 0o755)
    ns = n = None
    try:
        try:
            ns = Netns(d, nameserver="11.22.33.44")
        except (RuntimeError, subprocess.CalledProcessError) as e:
            t.skip(what, "no network namespaces with veth here: %s" % e)
            return
        cert, key = ps.make_cert(d, names=("pub.corral.test",), ips=())
        make_repo(d)
        make_wheel(d)
        _, tls_port, _ = ns.server(ns.b, "web", "11.22.33.44", extra=["--tls", "%s:%s" % (cert, key),
                                                                        "--git-root", d])
        _, web_port, _ = ns.server(ns.b, "web", "11.22.33.44", extra=["--static", d])
        _, _, queries = ns.server(ns.b, "dns", "11.22.33.44", 53)
        n = Net(wrap=ns.enter(ns.a, mount=True))
        shutil.copy(cert, os.path.join(n.w.ws, "ca.pem"))

        # HTTPS with the server's own certificate: the proxy never looks inside.
        p = n.start_run("curl -sS --max-time 25 --cacert ca.pem https://pub.corral.test:%d/info" % tls_port)
        a = n.host_request("pub.corral.test", p)
        t.ok(a is not None and a.get("protocol") == "https" and a.get("port") == tls_port,
             "curl https:// asks about pub.corral.test (https, its port)", a)
        if a is None:
            p.kill()
            return
        n.w.corral("approve", "--session", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok('"server": "web@11.22.33.44"' in out, "approved, the HTTPS request reaches the server, TLS end to end",
             out + err)

        # git clone over HTTPS, in a session that already has the host.
        p = n.start_run("curl -sS --max-time 25 --cacert ca.pem https://pub.corral.test:%d/info >/dev/null && "
                        "GIT_SSL_CAINFO=ca.pem git clone -q https://pub.corral.test:%d/git/repo.git clone && "
                        "cat clone/file.txt" % (tls_port, tls_port))
        a = n.host_request("pub.corral.test", p)
        if a:
            n.w.corral("approve", "--session", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT * 2)
        t.ok("through corral's proxy" in out, "git clone https:// through the proxy (answered once for the session)",
             out + err)

        # pip download from a package index over HTTP.
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            t.skip("pip download through the proxy", "pip is not installed")
        else:
            p = n.start_run("python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check -q "
                            "-d dl --trusted-host pub.corral.test --index-url http://pub.corral.test:%d/static/simple/ corraldemo && ls dl"
                            % web_port)
            a = n.host_request("pub.corral.test", p, "http")
            if a:
                n.w.corral("approve", "--session", str(a["id"]))
            out, err = p.communicate(timeout=TIMEOUT * 2)
            t.ok("corraldemo-1.0-py3-none-any.whl" in out, "pip download through the proxy (PIP_PROXY, HTTP_PROXY)",
                 out + err)

        # Approved, a name that resolves to a private address is refused.
        p = n.start_run(CURL + "http://ten.corral.test:%d/info" % web_port)
        a = n.host_request("ten.corral.test", p)
        if a:
            n.w.corral("approve", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(header(out, "X-Corral-Error") == "local-address" and "10.0.0.1" in out,
             "approved, ten.corral.test (10.0.0.1) is refused as a private address", out + err)
        t.ok(a is not None and "at public addresses only" in a.get("address", "") and "p saves one" in a["address"],
             "as the question said before the answer: a name reaches a private address only through a rule", a)

        # A name the proxy cannot resolve: the program's own error says so
        # (pip shows a refused tunnel's status line, not its body).
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            p = n.start_run("python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check "
                            "--retries 1 --timeout 20 -d dl2 --index-url https://nowhere.corral.test/simple/ "
                            "corraldemo")
            a = n.host_request("nowhere.corral.test", p)
            if a:
                n.w.corral("approve", str(a["id"]))
            out, err = p.communicate(timeout=TIMEOUT * 2)
            t.ok("corral:" in out + err and '"nowhere.corral.test"' in out + err and "resolve" in out + err,
                 "pip's error names the host and says it did not resolve", out + err)

        # Nothing direct: no route to the "internet", no DNS query leaves.
        r = n.run("curl -sS --max-time 5 --noproxy '*' http://11.22.33.44:%d/info; echo rc=$?; "
                  "getent hosts leak.corral.test; echo dns=$?" % web_port)
        t.ok("rc=0" not in r.stdout and "web@" not in r.stdout, "a direct connection to 11.22.33.44 fails",
             r.stdout + r.stderr)
        t.ok("dns=0" not in r.stdout, "a DNS lookup inside the sandbox fails", r.stdout + r.stderr)
        seen = []
        while not queries.empty():
            seen.append(queries.get())
        t.ok(not any("leak.corral.test" in q for q in seen), "and no query for it reached the DNS server", seen)
    finally:
        if n:
            n.close()
        if ns:
            ns.close()
        shutil.rmtree(d, ignore_errors=True)


def test_as_an_unprivileged_user(t):
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL,
                       helpers=[os.path.join(here, x) for x in ("harness.py", "proxyservers.py", "netlab.py")])


if __name__ == "__main__":
    if not have("curl"):
        t = Tap()
        t.skip("network through the proxy", "curl is not installed (bootstrap installs it)")
        t.done()
    run_tests(Tap(), [test_environment, test_host_questions, test_running_is_the_foreground_program,
                      test_open_connections_count, test_no_way_around,
                      test_private_internet, test_as_an_unprivileged_user])
