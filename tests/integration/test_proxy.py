#!/usr/bin/env python3
"""The network proxy's engine (src/net/proxy.c) against real clients and real
servers on this machine: curl through HTTP CONNECT (TLS passing through
untouched) and SOCKS5, absolute-form HTTP with keep-alive, chunked bodies,
HEAD, 1xx, 204, 304 and close-delimited responses, git clone over smart
HTTP and HTTPS, refusals (denied hosts, private and special addresses,
malformed and oversized requests, slow clients, too many connections),
200 concurrent tunnels, backpressure both ways, and the connection records.

The engine runs alone in tests/integration/proxydrive, whose decide hook
this file plays (the server's gate is tested with the server).  Host names
that must resolve to a given address are tested as root in a private mount
and network namespace: an /etc/hosts of their own, a DNS stub that prints
every query, and a second namespace behind a veth pair standing in for the
internet (11.22.33.44), so nothing on this machine's real network is
touched.
"""
import hashlib
import json
import os
import queue
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TIMEOUT, Tap, run_tests  # noqa: E402
import proxyservers as ps  # noqa: E402
from netlab import Netns  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVE = os.environ.get("CORRAL_PROXYDRIVE") or os.path.join(HERE, "proxydrive")
SERVERS = os.path.join(HERE, "proxyservers.py")
MiB = 1 << 20

# Clients must use exactly the proxy they are given.
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy")}


class Drive:
    """proxydrive with one HTTP and one SOCKS5 listener per session."""

    def __init__(self, sessions=(1,), args=(), wrap=(), connections=()):
        self.ports = {}
        socks = list(connections)  # (kind, session, socket) accepted here, served there
        argv = [DRIVE] + list(args)
        for kind, s, sock in connections:
            argv += ["--connection", "%s:%d:%d" % (kind, s, sock.fileno())]
        socks = [x[2] for x in socks]
        for s in sessions:
            for kind in ("http", "socks5"):
                ls = socket.socket()
                ls.bind(("127.0.0.1", 0))
                ls.listen(1024)
                self.ports[(s, kind)] = ls.getsockname()[1]
                argv += ["--listen", "%s:%d:%d" % (kind, s, ls.fileno())]
                socks.append(ls)
        env = dict(os.environ)
        if "ASAN_OPTIONS" in env:
            # Freed memory waits in AddressSanitizer's quarantine (256 MiB):
            # a smaller one, so that RSS says what the proxy holds.
            env["ASAN_OPTIONS"] += ":quarantine_size_mb=4"
        self.proc = subprocess.Popen(list(wrap) + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     pass_fds=[x.fileno() for x in socks], text=True, bufsize=1, env=env)
        for x in socks:
            x.close()  # the proxy holds them now
        self.events = []
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.wait(lambda e: e["event"] == "ready")
        self.pings = 0

    def _read(self):
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            with self.cv:
                self.events.append(ev)
                self.cv.notify_all()
        with self.cv:
            self.events.append({"event": "exit"})
            self.cv.notify_all()

    def http(self, session=1):
        return self.ports[(session, "http")]

    def socks(self, session=1):
        return self.ports[(session, "socks5")]

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def wait(self, pred, timeout=TIMEOUT, start=0):
        """The first event from index start on that pred accepts."""
        end = time.monotonic() + timeout
        with self.cv:
            i = start
            while True:
                while i < len(self.events):
                    if pred(self.events[i]):
                        return self.events[i]
                    i += 1
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no such event; events: %s" % json.dumps(self.events[-8:]))
                self.cv.wait(left)

    def mark(self):
        with self.cv:
            return len(self.events)

    def since(self, mark, name=None):
        with self.cv:
            return [e for e in self.events[mark:] if name is None or e["event"] == name]

    def policy(self, host, verdict, reason=None, defer=False):
        m = {"cmd": "policy", "host": host, "verdict": verdict, "defer": defer}
        if reason:
            m["reason"] = reason
        self.send(m)
        self.ping()

    def decide(self, ev_id, verdict, reason=None):
        m = {"cmd": "decide", "id": ev_id, "verdict": verdict}
        if reason:
            m["reason"] = reason
        self.send(m)

    def ping(self):
        """Everything the proxy said before this is in self.events."""
        self.pings += 1
        n = self.pings
        self.send({"cmd": "ping", "id": n})
        return self.wait(lambda e: e["event"] == "pong" and e["id"] == n)

    def open_count(self, session=1):
        return self.ping()["open"].get(str(session), 0)

    def record(self, pred, start=0):
        return self.wait(lambda e: e["event"] == "log" and pred(e["record"]), start=start)["record"]

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        """Shut the proxy down with whatever is still open: 0 on a clean exit."""
        if self.proc.poll() is None:
            try:
                self.send({"cmd": "shutdown"})
            except OSError:
                pass
            try:
                self.proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class Conn:
    """A raw client connection with a read buffer."""

    def __init__(self, port, host="127.0.0.1"):
        self.s = socket.create_connection((host, port), timeout=TIMEOUT)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("the proxy closed the connection")
        self.buf += d

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        out, self.buf = self.buf.split(b"\r\n", 1)
        return out

    def head(self):
        status_line = self.line().decode("latin-1")
        headers = []
        while True:
            line = self.line().decode("latin-1")
            if not line:
                break
            k, _, v = line.partition(":")
            headers.append((k.strip().lower(), v.strip()))
        parts = status_line.split(" ", 2)
        return int(parts[1]), dict(headers), status_line

    def response(self, head_request=False):
        """(status, headers, body, trailers) of the next final response;
        1xx responses before it are skipped."""
        while True:
            status, h, _ = self.head()
            if status >= 200:
                break
        body, trailers = b"", {}
        if head_request or status in (204, 304):
            pass
        elif h.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int(self.line().split(b";")[0], 16)
                if size == 0:
                    while True:
                        t = self.line().decode("latin-1")
                        if not t:
                            break
                        k, _, v = t.partition(":")
                        trailers[k.strip().lower()] = v.strip()
                    break
                body += self.take(size)
                assert self.take(2) == b"\r\n"
        elif "content-length" in h:
            body = self.take(int(h["content-length"]))
        else:
            body = self.rest()
        return status, h, body, trailers

    def rest(self):
        """Everything until the proxy closes."""
        while True:
            try:
                self.fill()
            except EOFError:
                break
        out, self.buf = self.buf, b""
        return out

    def closed(self):
        """True once the proxy closed (reset or EOF) with nothing more said."""
        try:
            self.s.settimeout(TIMEOUT)
            return self.s.recv(1) == b"" and not self.buf
        except (ConnectionResetError, BrokenPipeError):
            return True

    def close(self):
        self.s.close()


def connect_tunnel(port, target):
    c = Conn(port)
    c.send(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    status, h, _ = c.head()
    return c, status, h


def refusal(c):
    """(status, X-Corral-Error, body) of a refusal, after which the proxy closes."""
    status, h, body, _ = c.response()
    return status, h.get("x-corral-error"), body.decode("utf-8", "replace")


def socks_connect(port, host, dport, atyp=3):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    s.sendall(b"\x05\x01\x00")
    assert recv_exact(s, 2) == b"\x05\x00"
    if atyp == 3:
        addr = bytes([3, len(host)]) + host.encode()
    elif atyp == 1:
        addr = b"\x01" + socket.inet_aton(host)
    else:
        addr = b"\x04" + socket.inet_pton(socket.AF_INET6, host)
    s.sendall(b"\x05\x01\x00" + addr + dport.to_bytes(2, "big"))
    reply = recv_exact(s, 10)
    return s, reply[1]


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        d = s.recv(n - len(out))
        if not d:
            raise EOFError("closed after %d of %d bytes" % (len(out), n))
        out += d
    return out


def echo_roundtrip(s, data):
    """Send data and read it back (through an echo server); the bytes read."""
    got = bytearray()
    sender = threading.Thread(target=s.sendall, args=(data,))
    sender.start()
    while len(got) < len(data):
        d = s.recv(1 << 20)
        if not d:
            break
        got += d
    sender.join()
    return bytes(got)


def curl(*args):
    return subprocess.run(["curl", "-sS", "--max-time", str(TIMEOUT)] + list(args), capture_output=True,
                          env=CLEAN_ENV, timeout=TIMEOUT + 5)


def have(tool):
    return shutil.which(tool) is not None


# Tunnels are moved by splice(2) unless the proxy is told to copy them
# through its reads and writes (or cannot splice): both ways are tested.
TUNNEL_MODES = (("spliced", []), ("copied", ["--copy-tunnels", "1"]))


def both_tunnel_modes(fn):
    """fn(t, args, label) once per way of moving a tunnel's bytes."""
    def make(label, args):
        def run(t):
            fn(t, args, label)
        run.__name__ = "%s (%s tunnels)" % (fn.__name__, label)
        return run
    return [make(label, args) for label, args in TUNNEL_MODES]


# ---- tests ------------------------------------------------------------------------------


def test_connect_and_socks_with_curl(t, args, mode):
    if not have("curl") or not have("openssl"):
        t.skip("curl through CONNECT and SOCKS5 to a local HTTPS server", "curl or openssl is not installed")
        return
    d = tempfile.mkdtemp(prefix="crlpx")
    cert, key = ps.make_cert(d)
    web = ps.WebServer("tls", tls=(cert, key))
    px = Drive(args=args)
    try:
        px.policy("*", "explicit")
        url = "https://localhost:%d/len/300000" % web.port
        want = hashlib.sha256(ps.pattern(300000)).hexdigest()
        for label, proxy, host in (("HTTP CONNECT", "http://127.0.0.1:%d" % px.http(), "localhost"),
                                   ("SOCKS5 with the name (socks5h)", "socks5h://127.0.0.1:%d" % px.socks(),
                                    "localhost"),
                                   ("SOCKS5 with an address (socks5)", "socks5://127.0.0.1:%d" % px.socks(),
                                    "127.0.0.1")):
            m = px.mark()
            r = curl("--cacert", cert, "-x", proxy, url)
            t.eq((r.returncode, hashlib.sha256(r.stdout).hexdigest()), (0, want),
                 "%s tunnels: curl over %s gets the HTTPS body intact, the server's own certificate checked"
                 % (mode, label),
                 r.stderr.decode())
            ev = px.wait(lambda e: e["event"] == "decide", start=m)
            proto = "https" if label == "HTTP CONNECT" else "socks5_tcp"
            t.eq((ev["host"], ev["port"], ev["protocol"], ev["session"]), (host, web.port, proto, 1),
                 "%s: the decision is asked for host, port and protocol" % label)
            rec = px.record(lambda r: r.get("host") == host and r.get("protocol") == proto, start=m)
            t.ok(rec["decision"] == "allow_explicit" and rec["address"] == "127.0.0.1:%d" % web.port and
                 rec["bytes_to_client"] > 300000 and rec["bytes_to_server"] > 0 and "duration_ms" in rec and
                 rec["close"] in ("client_closed", "server_closed"),
                 "%s: the connection's record has the decision, the address dialled, bytes each way and how "
                 "it closed" % label, rec)
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        web.close()
        shutil.rmtree(d, ignore_errors=True)


def test_absolute_form_keep_alive(t):
    a = ps.WebServer("A")
    b = ps.WebServer("B")
    px = Drive()
    try:
        px.policy("*", "explicit")
        c = Conn(px.http())
        ua = "http://127.0.0.1:%d" % a.port
        c.send(b"GET %s/info HTTP/1.1\r\nHost: evil.test\r\nProxy-Connection: keep-alive\r\n"
               b"Proxy-Authorization: Basic eDp5\r\nConnection: X-Hop\r\nX-Hop: 1\r\nX-Keep: 2\r\n\r\n"
               % ua.encode())
        status, h, body, _ = c.response()
        info = json.loads(body)
        names = [k.lower() for k, _ in info["headers"]]
        t.ok(status == 200 and info["server"] == "A" and dict(info["headers"]).get("Host") == "127.0.0.1:%d" % a.port
             and "proxy-connection" not in names and "proxy-authorization" not in names and "x-hop" not in names
             and "x-keep" in names and info["path"] == "/info",
             "the request goes upstream in origin form, Host from the URL, Proxy-* and hop-by-hop headers removed",
             info)

        c.send(b"GET %s/chunked/70000 HTTP/1.1\r\n\r\n" % ua.encode())
        status, h, body, trailers = c.response()
        t.ok(status == 200 and body == ps.pattern(70000) and
             trailers.get("x-check") == hashlib.sha256(body).hexdigest(),
             "a chunked response passes with its extensions and trailers, on the same client connection")

        c.send(b"HEAD %s/len/5000 HTTP/1.1\r\n\r\n" % ua.encode())
        status, h, body, _ = c.response(head_request=True)
        t.ok(status == 200 and h.get("content-length") == "5000", "HEAD: a length but no body")
        c.send(b"GET %s/204 HTTP/1.1\r\n\r\nGET %s/304 HTTP/1.1\r\n\r\n" % (ua.encode(), ua.encode()))
        s1 = c.response()[0]
        s2 = c.response()[0]
        t.eq((s1, s2), (204, 304), "204 and 304 have no body; two pipelined requests answered in order")

        body = os.urandom(200000)
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7777]), body[i:i + 7777])
                          for i in range(0, len(body), 7777))
        c.send(b"POST %s/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n%s0\r\n\r\n" % (ua.encode(), chunks))
        status, h, resp, _ = c.response()
        t.eq(json.loads(resp)["sha256"], hashlib.sha256(body).hexdigest(), "a chunked request body arrives intact")

        c.send(b"POST %s/echo HTTP/1.1\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n" % ua.encode())
        status, _, line = c.head()
        t.eq(status, 100, "Expect: 100-continue: the server's 100 Continue comes through")
        c.send(b"hello world")
        status, h, resp, _ = c.response()
        t.eq(json.loads(resp)["len"], 11, "then the body goes and the final response comes")

        c.send(b"GET http://localhost:%d/info HTTP/1.1\r\n\r\n" % b.port)
        status, h, resp, _ = c.response()
        t.eq(json.loads(resp)["server"], "B", "the next request names another host: it goes to that host")
        c.send(b"GET %s/info HTTP/1.1\r\n\r\n" % ua.encode())
        status, h, resp, _ = c.response()
        t.eq(json.loads(resp)["server"], "A", "and back")

        ra = a.requests
        first = [r["peer_port"] for r in ra[:-1]]
        t.ok(len(set(first)) == 1 and ra[-1]["peer_port"] != first[0] and len(b.requests) == 1,
             "requests to one host share its upstream connection; another host's request never goes down it",
             [(r["path"], r["peer_port"]) for r in ra] + [(r["path"], r["peer_port"]) for r in b.requests])

        px.ping()
        decides = [e for e in px.events if e["event"] == "decide"]
        t.eq([d.get("host") for d in decides], ["127.0.0.1", "localhost", "127.0.0.1"],
             "a request to the target last allowed on the connection is not asked again (an answer of once is for "
             "the connection); another target is, and so is the first one after it", decides)
        t.eq([d.get("port") for d in decides], [a.port, b.port, a.port], "A, then B, then A again were asked")
        recs = [e["record"] for e in px.events if e["event"] == "log"]
        t.ok(len(recs) == len(ra) + len(b.requests) and all(r["close"] == "done" and r["protocol"] == "http" for r in recs) and
             {r["status"] for r in recs} >= {200, 204, 304} and {r["method"] for r in recs} >= {"GET", "HEAD", "POST"},
             "one record per exchange, with its method and status", recs[-3:])

        c.send(b"GET %s/close/3000 HTTP/1.1\r\n\r\n" % ua.encode())
        status, h, body, _ = c.response()
        t.ok(body == ps.pattern(3000) and c.closed(), "a response that ends at the server's close: all of it, "
             "then the client connection closes")
        c.close()

        c = Conn(px.http())
        c.send(b"GET %s/len/10 HTTP/1.0\r\n\r\n" % ua.encode())
        status, h, body, _ = c.response()
        t.ok(status == 200 and body == ps.pattern(10) and c.closed(), "HTTP/1.0: one response, then close")
        c = Conn(px.http())
        c.send(b"GET %s/len/10 HTTP/1.1\r\nConnection: close\r\n\r\n" % ua.encode())
        status, h, body, _ = c.response()
        t.ok(status == 200 and c.closed(), "Connection: close: one response, then close")
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        a.close()
        b.close()


def test_denials(t):
    web = ps.WebServer("A")
    px = Drive()
    try:
        reason = "no rule allows it; allow it with: corral approve, or network_rule(host=\"denied.test\")"
        px.policy("denied.test", "deny", reason)
        px.policy("127.0.0.1", "explicit")
        c, status, h = connect_tunnel(px.http(), "denied.test:443")
        body = c.take(int(h["content-length"])).decode()
        t.ok(status == 403 and h.get("x-corral-error") == "denied" and body.count("\n") == 1 and
             "\"denied.test\"" in body and "443" in body and reason in body and c.closed(),
             "CONNECT to a denied host: 403, X-Corral-Error: denied, one line naming the host and the reason", body)
        if have("curl"):
            r = curl("-x", "http://127.0.0.1:%d" % px.http(), "-w", "%{http_code}", "http://denied.test/x")
            out = r.stdout.decode()
            t.ok(out.startswith("corral: network access to \"denied.test\" (port 80, http) was denied: " + reason)
                 and out.endswith("403"), "curl prints the refusal for an absolute-form request", out)
        s, code = socks_connect(px.socks(), "denied.test", 443)
        t.eq(code, 2, "SOCKS5 CONNECT to a denied host: reply 0x02 (not allowed by ruleset)")
        s.close()

        c = Conn(px.http())
        c.send(b"GET http://127.0.0.1:%d/info HTTP/1.1\r\n\r\n" % web.port)
        t.eq(c.response()[0], 200, "a kept-alive connection: the first request is allowed")
        c.send(b"GET http://denied.test/ HTTP/1.1\r\n\r\n")
        status, code, body = refusal(c)
        t.ok(status == 403 and code == "denied" and c.closed() and len(web.requests) == 1,
             "its next request to a denied host is refused on its own, and nothing reaches the first host", body)
        rec = px.record(lambda r: r.get("host") == "denied.test" and r.get("protocol") == "http")
        t.ok(rec["decision"] == "deny" and rec["reason"] == reason and rec["error"] == "denied" and
             "address" not in rec and rec["bytes_to_server"] == 0, "a denial's record: decision, reason, no address",
             rec)
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        web.close()


def test_special_addresses(t):
    echo = ps.EchoServer()
    px = Drive()
    try:
        px.policy("*", "allow")  # allowed, but not by a rule naming the host
        targets = ["127.0.0.1:%d" % echo.port, "127.1:%d" % echo.port, "0:%d" % echo.port,
                   "[::1]:%d" % echo.port, "[::ffff:127.0.0.1]:%d" % echo.port, "[64:ff9b::7f00:1]:%d" % echo.port,
                   "10.0.0.1:22", "169.254.169.254:80", "[fe80::1]:22", "localhost:%d" % echo.port]
        for target in targets:
            c, status, h = connect_tunnel(px.http(), target)
            body = c.take(int(h.get("content-length", 0))).decode()
            t.ok(status == 403 and h.get("x-corral-error") == "local-address" and "network_rule" in body,
                 "CONNECT %s: refused as a special address without a rule naming the host" % target, body)
            c.close()
        c = Conn(px.http())
        c.send(b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n")
        status, code, body = refusal(c)
        t.ok(status == 403 and code == "local-address" and "cloud metadata" in body,
             "absolute-form to the metadata address: refused", body)
        rec = px.record(lambda r: r.get("host") == "localhost")
        # localhost is 127.0.0.1, or ::1 first where /etc/hosts names both (as Debian's installer writes it).
        msg = rec.get("message", "")
        t.ok(("it resolves to 127.0.0.1" in msg or "it resolves to ::1" in msg) and "loopback" in msg
             and "address" not in rec,
             "a name resolving to loopback: the refusal names the address and its range", rec)
        s, code = socks_connect(px.socks(), "127.0.0.1", echo.port, atyp=1)
        t.eq(code, 2, "SOCKS5 to 127.0.0.1: reply 0x02")
        s.close()
        t.eq(echo.accepted, 0, "nothing was dialled")

        px.policy("localhost", "explicit")
        c, status, h = connect_tunnel(px.http(), "localhost:%d" % echo.port)
        t.ok(status == 200 and echo_roundtrip(c.s, b"ping") == b"ping",
             "a rule naming the host (PROXY_ALLOW_EXPLICIT) reaches the local service")
        c.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_malformed_requests(t):
    echo = ps.EchoServer()
    px = Drive()
    try:
        px.policy("*", "explicit")
        good, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port)
        t.eq(status, 200, "a tunnel is open while malformed requests come")
        bad = [
            (b"CONNECT\r\n\r\n", 400), (b"CONNECT a.test HTTP/1.1\r\n\r\n", 400),
            (b"CONNECT a.test:99999 HTTP/1.1\r\n\r\n", 400), (b"CONNECT a.test:443 HTTP/1.1\nHost: a\n\n", 400),
            (b"CONNECT a.test:443 HTTP/1.1\r\nX: a\x00b\r\n\r\n", 400), (b"CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400),
            (b"CONNECT a.test:443 HTTP/9.9\r\n\r\n", 400), (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            (b"GET https://a.test/ HTTP/1.1\r\n\r\n", 400), (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
            (b"CONNECT a.test:443 HTTP/1.1\r\n" + b"X-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
            (b"GET http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ]
        for req, want in bad:
            c = Conn(px.http())
            try:
                c.send(req)
            except OSError:
                pass
            status, code, body = refusal(c)
            t.ok(status == want and code in ("bad-request", "request-too-large") and c.closed(),
                 "%r...: %d with X-Corral-Error, then closed" % (req[:40], want), body)
        t.ok(echo_roundtrip(good.s, b"still here") == b"still here", "the open tunnel carried on undisturbed")
        good.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_slow_clients(t, args, mode):
    echo = ps.EchoServer()
    px = Drive(args=["--header-timeout", "1500", "--idle-timeout", "2000"] + args)
    try:
        px.policy("*", "explicit")
        slow = Conn(px.http())
        slow.send(b"CONNECT 127.0.0.1:%d HTT" % echo.port)
        silent = Conn(px.http())
        socks_slow = socket.create_connection(("127.0.0.1", px.socks()), timeout=TIMEOUT)
        socks_slow.sendall(b"\x05")
        c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port)
        t.ok(status == 200 and echo_roundtrip(c.s, b"x" * 1000) == b"x" * 1000,
             "slow clients in the middle of their heads do not hold up another connection")
        status, code, body = refusal(slow)
        t.ok(status == 408 and code == "request-timeout" and slow.closed(),
             "a head that does not finish: 408 after the header timeout, then closed", body)
        t.ok(silent.closed(), "a connection that says nothing is closed at the header timeout")
        t.eq(socks_slow.recv(10), b"", "so is a SOCKS5 greeting that does not finish")
        t.ok(echo_roundtrip(c.s, b"y") == b"y", "the working tunnel is still there")
        t.ok(c.closed(), "%s tunnels: a tunnel with no byte either way closes at the idle timeout" % mode)
        rec = px.record(lambda r: r.get("close") == "idle_timeout")
        t.eq(rec["bytes_to_server"], 1001, "its record counts what went through")
        c.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_200_tunnels(t, args, mode):
    echo = ps.EchoServer()
    px = Drive(args=args)
    n, size = 200, 256 * 1024
    try:
        px.policy("*", "explicit")
        barrier = threading.Barrier(n + 1)
        results = [None] * n

        def one(i):
            try:
                c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port)
                barrier.wait(TIMEOUT)  # all open
                barrier.wait(TIMEOUT)  # counted
                data = random.Random(i).randbytes(size)
                got = echo_roundtrip(c.s, data)
                c.s.shutdown(socket.SHUT_WR)
                results[i] = (status, hashlib.sha256(data).hexdigest() == hashlib.sha256(got).hexdigest(),
                              c.s.recv(1) == b"")
                c.close()
            except Exception as e:  # noqa: BLE001 - reported below
                results[i] = repr(e)
                barrier.abort()

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for th in threads:
            th.start()
        barrier.wait(TIMEOUT)
        t.eq(px.open_count(), n, "200 tunnels open at once (the open count says so)")
        barrier.wait(TIMEOUT)
        for th in threads:
            th.join(TIMEOUT * 3)
        bad = [r for r in results if r != (200, True, True)]
        t.eq(bad, [], "200 concurrent %s tunnels: every byte came back, hashes equal, each closed cleanly" % mode)
        px.wait(lambda e: e["event"] == "log" and len([x for x in px.events if x["event"] == "log"]) >= n)
        recs = [e["record"] for e in px.events if e["event"] == "log"]
        t.ok(len(recs) == n and all(r["bytes_to_server"] == size and r["bytes_to_client"] == size for r in recs),
             "200 records, each with bytes in equal to bytes out", recs[:2])
        t.eq(px.open_count(), 0, "all closed")
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_connection_limit(t):
    echo = ps.EchoServer()
    px = Drive(sessions=(1, 2), args=["--max-per-session", "3"])
    try:
        px.policy("*", "explicit")
        held = [connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port) for _ in range(3)]
        t.eq([h[1] for h in held], [200, 200, 200], "three tunnels, the limit")
        c, status, h = connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port)
        body = c.take(int(h["content-length"])).decode()
        t.ok(status == 503 and h.get("x-corral-error") == "too-many-connections" and "3" in body,
             "a fourth: 503 too-many-connections", body)
        s, code = socks_connect(px.socks(), "127.0.0.1", echo.port, atyp=1)
        t.eq(code, 1, "a fourth over SOCKS5: reply 0x01")
        s.close()
        other, status, _ = connect_tunnel(px.http(2), "127.0.0.1:%d" % echo.port)
        t.eq(status, 200, "another session has its own limit")
        other.close()
        m = px.mark()
        held[0][0].close()
        px.wait(lambda e: e["event"] == "open" and e["session"] == 1 and e["open"] == 2, start=m)
        c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % echo.port)
        t.eq(status, 200, "one closed: the next is let in")
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly with tunnels open")
        echo.close()


def wait_stalled(counter, limit, quiet=1.0):
    """Wait until counter() stops growing for `quiet` seconds (nothing
    moves while the peer does not read) or reaches limit; its value."""
    last, since = counter(), time.monotonic()
    end = time.monotonic() + TIMEOUT * 4
    while time.monotonic() < end:
        time.sleep(0.05)
        now = counter()
        if now >= limit:
            return now
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    return counter()


def test_backpressure(t, args, mode):
    total = 100 * MiB
    src = ps.SourceServer(total)
    sink = ps.SinkServer()
    px = Drive(args=["--max-buffered", str(MiB)] + args)
    try:
        px.policy("*", "explicit")
        base = px.rss_kib()
        c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % src.port)
        c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sent = wait_stalled(lambda: src.sent, total)
        grown = px.rss_kib() - base
        t.ok(sent < total and grown < 24 * 1024,
             "%s tunnel: a client that stops reading while the server sends 100 MiB: the server is held back and "
             "the proxy's memory stays bounded" % mode, "sent %d MiB, proxy grew %d KiB" % (sent // MiB, grown))
        want = hashlib.sha256()
        chunk = ps.pattern(256 * 1024)
        for _ in range(total // len(chunk)):
            want.update(chunk)
        got, n = hashlib.sha256(), len(c.buf)
        got.update(c.buf)
        while True:
            d = c.s.recv(1 << 20)
            if not d:
                break
            got.update(d)
            n += len(d)
        t.ok(n == total and got.digest() == want.digest(), "when it reads again, all 100 MiB arrive intact",
             "%d bytes" % n)
        c.close()

        if not args:  # once: absolute-form HTTP always goes through reads and writes
            web = ps.SourceServer(total, http=True)
            try:
                base = px.rss_kib()
                c = Conn(px.http())
                c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
                c.send(b"GET http://127.0.0.1:%d/big HTTP/1.1\r\n\r\n" % web.port)
                sent = wait_stalled(lambda: web.sent, total)
                grown = px.rss_kib() - base
                t.ok(sent < total and grown < 24 * 1024,
                     "absolute-form HTTP: a 100 MiB response to a client that does not read is held back",
                     "sent %d MiB, proxy grew %d KiB" % (sent // MiB, grown))
                status, h, _ = c.head()
                n = len(c.buf)
                while n < total:
                    d = c.s.recv(1 << 20)
                    if not d:
                        break
                    n += len(d)
                t.eq((status, n), (200, total), "then all of it arrives")
                c.close()
            finally:
                web.close()

        base = px.rss_kib()
        c, status, _ = connect_tunnel(px.http(), "127.0.0.1:%d" % sink.port)
        c.s.setblocking(False)
        pushed = [0]
        block = ps.pattern(256 * 1024)

        def push():
            while pushed[0] < total:
                try:
                    pushed[0] += c.s.send(block)
                except BlockingIOError:
                    select.select([], [c.s], [], 0.2)
            return pushed[0]

        pusher = threading.Thread(target=push, daemon=True)
        pusher.start()
        sent = wait_stalled(lambda: pushed[0], total)
        grown = px.rss_kib() - base
        t.ok(sent < total and grown < 24 * 1024,
             "%s tunnel: a client sending 100 MiB to a server that does not read: held back, the proxy's memory "
             "bounded" % mode,
             "pushed %d MiB, proxy grew %d KiB" % (sent // MiB, grown))
        sink.server.release.set()
        pusher.join(TIMEOUT * 4)
        t.eq(pushed[0] >= total, True, "once the server reads, the rest goes through")
        c.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        src.close()
        sink.close()


def test_decisions_wait_and_cancel(t, args, mode):
    echo = ps.EchoServer()
    px = Drive(args=args)
    try:
        c = Conn(px.http())
        c.send(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % echo.port)
        ev = px.wait(lambda e: e["event"] == "decide")
        m = px.mark()
        c.close()
        cancel = px.wait(lambda e: e["event"] == "cancelled", start=m)
        t.eq(cancel["id"], ev["id"], "a client that leaves while its request waits for a decision withdraws it")

        c = Conn(px.http())
        c.send(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % echo.port)
        ev = px.wait(lambda e: e["event"] == "decide" and e["id"] != cancel["id"])
        c.send(b"early bytes")  # sent before the answer: kept for the tunnel
        px.decide(ev["id"], "explicit")
        status, _, _ = c.head()
        got = b""
        while len(got) < len(b"early bytes"):
            got += c.s.recv(100) if not c.buf else c.take(len(c.buf))
        more = os.urandom(3 * MiB)
        t.ok(status == 200 and got == b"early bytes" and echo_roundtrip(c.s, more) == more,
             "%s tunnels: a decision given later opens the tunnel; bytes sent while waiting go through first" % mode)
        c.close()

        px.policy("*", "explicit", defer=True)
        s, code = socks_connect(px.socks(), "127.0.0.1", echo.port, atyp=1)
        t.ok(code == 0 and echo_roundtrip(s, b"late") == b"late", "SOCKS5 with an answer from a later loop turn")
        s.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_socks_refusals(t):
    px = Drive()
    closed_port = socket.socket()
    closed_port.bind(("127.0.0.1", 0))
    dead = closed_port.getsockname()[1]
    closed_port.close()
    try:
        px.policy("*", "explicit")
        for cmd, name in ((2, "BIND"), (3, "UDP ASSOCIATE")):
            s = socket.create_connection(("127.0.0.1", px.socks()), timeout=TIMEOUT)
            s.sendall(b"\x05\x01\x00")
            recv_exact(s, 2)
            s.sendall(bytes([5, cmd, 0, 1, 127, 0, 0, 1, 0, 80]))
            t.eq(recv_exact(s, 10)[1], 7, "SOCKS5 %s: reply 0x07 (command not supported)" % name)
            s.close()
        s = socket.create_connection(("127.0.0.1", px.socks()), timeout=TIMEOUT)
        s.sendall(b"\x05\x01\x02")  # username/password only
        t.eq((recv_exact(s, 2), s.recv(1)), (b"\x05\xff", b""), "no method without authentication offered: 0xFF")
        s.close()
        s = socket.create_connection(("127.0.0.1", px.socks()), timeout=TIMEOUT)
        s.sendall(b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00")
        t.eq(s.recv(10), b"", "SOCKS4: closed")
        s.close()
        s, code = socks_connect(px.socks(), "127.0.0.1", dead, atyp=1)
        t.eq(code, 5, "a port nobody listens on: reply 0x05 (connection refused)")
        s.close()
        rec = px.record(lambda r: r.get("port") == dead)
        t.ok(rec["error"] == "connect-failed" and "refused" in rec["message"].lower(),
             "its record says the connection failed and why", rec)
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")


def test_session_ended(t):
    echo = ps.EchoServer()
    px = Drive(sessions=(1, 2))
    try:
        px.policy("*", "explicit")
        c2, status, _ = connect_tunnel(px.http(2), "127.0.0.1:%d" % echo.port)
        c1, _, _ = connect_tunnel(px.http(1), "127.0.0.1:%d" % echo.port)
        px.send({"cmd": "session_ended", "session": 2})
        t.ok(c2.closed(), "the session's open tunnel closes when it ends")
        px.ping()
        try:
            socket.create_connection(("127.0.0.1", px.http(2)), timeout=TIMEOUT).close()
            refused = False
        except ConnectionRefusedError:
            refused = True
        t.ok(refused, "its listener is closed")
        t.ok(echo_roundtrip(c1.s, b"one") == b"one", "another session's tunnel carries on")
        rec = px.record(lambda r: r["session"] == 2)
        t.eq(rec["close"], "session_ended", "the record says why it closed")
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_connections_passed_in(t):
    """An init that accepts inside the sandbox and passes each connection
    on: proxy_add_connection serves it as if a listener had."""
    echo = ps.EchoServer()
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    clients, served = [], []
    for kind in ("http", "socks5"):
        c = socket.create_connection(ls.getsockname(), timeout=TIMEOUT)
        clients.append(c)
        served.append((kind, 3, ls.accept()[0]))
    ls.close()
    px = Drive(sessions=(), connections=served)
    for _, _, x in served:
        x.close()
    try:
        px.policy("*", "explicit")
        c = clients[0]
        c.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % echo.port)
        head = b""
        while b"\r\n\r\n" not in head:
            head += c.recv(1)
        t.ok(head.startswith(b"HTTP/1.1 200") and echo_roundtrip(c, b"passed") == b"passed",
             "an HTTP connection accepted elsewhere and passed in is served")
        s = clients[1]
        s.sendall(b"\x05\x01\x00")
        recv_exact(s, 2)
        s.sendall(b"\x05\x01\x00\x01" + socket.inet_aton("127.0.0.1") + echo.port.to_bytes(2, "big"))
        t.ok(recv_exact(s, 10)[1] == 0 and echo_roundtrip(s, b"socks") == b"socks",
             "so is a SOCKS5 one")
        t.eq(px.open_count(3), 2, "both count against their session")
        for x in clients:
            x.close()
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        echo.close()


def test_git_clone(t):
    if not have("git") or not have("openssl"):
        t.skip("git clone through the proxy", "git or openssl is not installed")
        return
    d = tempfile.mkdtemp(prefix="crlgit")
    env = dict(CLEAN_ENV, HOME=d, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    env.pop("GIT_SSL_CAINFO", None)
    src = os.path.join(d, "src")
    subprocess.run(["git", "init", "-q", "-b", "main", src], check=True, env=env)
    with open(os.path.join(src, "file.txt"), "w") as f:
        f.write("through the proxy\n" * 1000)
    subprocess.run(["git", "-C", src, "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
                   check=True, env=env)
    root = os.path.join(d, "root")
    os.makedirs(root)
    subprocess.run(["git", "clone", "-q", "--bare", src, os.path.join(root, "repo.git")], check=True, env=env)
    cert, key = ps.make_cert(d)
    web = ps.WebServer("git", git_root=root)
    tls = ps.WebServer("git-tls", git_root=root, tls=(cert, key))
    px = Drive()
    try:
        px.policy("*", "explicit")
        for label, url, extra in (
                ("http:// (absolute-form requests)", "http://127.0.0.1:%d/git/repo.git" % web.port, {}),
                ("https:// (CONNECT)", "https://localhost:%d/git/repo.git" % tls.port, {"GIT_SSL_CAINFO": cert})):
            dest = os.path.join(d, "clone%d" % len(os.listdir(d)))
            r = subprocess.run(["git", "-c", "http.proxy=http://127.0.0.1:%d" % px.http(), "clone", "-q", url, dest],
                               capture_output=True, env=dict(env, **extra), timeout=TIMEOUT * 2)
            ok = r.returncode == 0 and open(os.path.join(dest, "file.txt")).read() == "through the proxy\n" * 1000
            t.ok(ok, "git clone over smart HTTP through the proxy: %s" % label, r.stderr.decode())
    finally:
        t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        web.close()
        tls.close()
        shutil.rmtree(d, ignore_errors=True)


# ---- names, in namespaces of their own -----------------------------------------------------

def test_names_in_namespaces(t):
    what = "host names resolved by the proxy in a namespace of its own"
    if os.geteuid() != 0:
        t.skip(what, "needs root (unshare -m -n, a veth pair, bind mounts)")
        return
    if not all(have(x) for x in ("unshare", "nsenter", "ip", "curl")):
        t.skip(what, "unshare, nsenter (util-linux), ip (iproute2) or curl is not installed")
        return
    d = tempfile.mkdtemp(prefix="crlns")
    os.chmod(d, 0o755)
    ns = None
    px = None
    try:
        try:
            ns = Netns(d)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            t.skip(what, "no network namespaces with veth here: %s" % e)
            return
        _, web_port, _ = ns.server(ns.b, "web", "11.22.33.44")
        _, echo_port, _ = ns.server(ns.a, "echo", "127.0.0.1")
        _, _, queries = ns.server(ns.a, "dns", "127.0.0.1", 53)
        px = Drive(wrap=ns.enter(ns.a, mount=True))
        px.policy("*", "allow")
        proxy = "http://127.0.0.1:%d" % px.http()

        r = curl("-x", proxy, "http://pub.corral.test:%d/info" % web_port)
        info = json.loads(r.stdout or b"{}")
        t.eq(info.get("server"), "web@11.22.33.44", "a name resolving to an ordinary address: allowed, connected",
             r.stderr.decode())
        rec = px.record(lambda r: r.get("host") == "pub.corral.test")
        t.eq(rec.get("address"), "11.22.33.44:%d" % web_port, "the record names the address it resolved to")

        for name, addr, why in (("loop", "127.0.0.1", "loopback"), ("ten", "10.0.0.1", "private"),
                                ("meta", "169.254.169.254", "metadata"), ("mapped", "::ffff:127.0.0.1", "IPv4-mapped"),
                                ("nat64", "64:ff9b::a00:1", "NAT64"), ("own", "11.22.33.1", "own address")):
            host = name + ".corral.test"
            c, status, h = connect_tunnel(px.http(), "%s:%d" % (host, echo_port))
            body = c.take(int(h.get("content-length", 0))).decode()
            t.ok(status == 403 and h.get("x-corral-error") == "local-address" and addr in body and why in body,
                 "%s resolves to %s: refused without a rule naming it" % (host, addr), body)
            c.close()
        s, code = socks_connect(px.socks(), "loop.corral.test", echo_port)
        t.eq(code, 2, "the same over SOCKS5 (socks5h): reply 0x02")
        s.close()

        r = curl("-x", proxy, "http://both.corral.test:%d/info" % web_port)
        t.eq(json.loads(r.stdout or b"{}").get("server"), "web@11.22.33.44",
             "a name with a loopback and an ordinary address: only the checked one is dialled", r.stderr.decode())

        px.policy("loop.corral.test", "explicit")
        c, status, _ = connect_tunnel(px.http(), "loop.corral.test:%d" % echo_port)
        t.ok(status == 200 and echo_roundtrip(c.s, b"local") == b"local",
             "with a rule naming it, the name that resolves to 127.0.0.1 reaches the local service")
        c.close()

        px.policy("secret-abcdef.exfil.corral.test", "deny", "denied by the test")
        c, status, _ = connect_tunnel(px.http(), "secret-abcdef.exfil.corral.test:443")
        t.eq(status, 403, "a denied name is refused")
        c.close()
        c, status, h = connect_tunnel(px.http(), "asked.exfil.corral.test:443")
        body = c.take(int(h.get("content-length", 0))).decode()
        t.ok(status == 502 and h.get("x-corral-error") == "resolve-failed" and "asked.exfil.corral.test" in body,
             "an allowed name that does not resolve: 502 resolve-failed", body)
        c.close()
        seen = []
        while True:
            q = queries.get(timeout=TIMEOUT)
            seen.append(q)
            if q == "QUERY asked.exfil.corral.test":
                break
        t.ok(not any("secret" in q for q in seen),
             "the denied name never reached DNS (the allowed one after it did)", seen)
    finally:
        if px:
            t.eq(px.stop(), 0, "the proxy shuts down cleanly")
        if ns:
            ns.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run_tests(Tap(), [
        *both_tunnel_modes(test_connect_and_socks_with_curl),
        test_absolute_form_keep_alive,
        test_denials,
        test_special_addresses,
        test_malformed_requests,
        *both_tunnel_modes(test_slow_clients),
        *both_tunnel_modes(test_200_tunnels),
        test_connection_limit,
        *both_tunnel_modes(test_backpressure),
        *both_tunnel_modes(test_decisions_wait_and_cancel),
        test_socks_refusals,
        test_session_ended,
        test_connections_passed_in,
        test_git_clone,
        test_names_in_namespaces,
    ])
