"""Small real servers for the network proxy's tests and benchmark.

Each runs in a thread of the test (or, run as a script, in a process the
test starts inside another network namespace):

  EchoServer     TCP echo; counts the connections it accepted
  SourceServer   sends a given number of bytes to each client, counting
  SinkServer     accepts and reads nothing (a stalled upstream)
  WebServer      HTTP/1.1 with keep-alive: fixed-length, chunked, close-
                 delimited, HEAD, 204, 304, an echo of request bodies
                 (Content-Length or chunked), /info describing the request
                 as received, git's smart HTTP under /git/ through
                 `git http-backend` (CGI), files of a directory under
                 /static/ (a package index, say); optionally over TLS
  DnsStub        UDP DNS on a given address: prints every query's name and
                 answers NXDOMAIN
  blast          (as a script only) sends --bytes N to each client, fast

python3 proxyservers.py web|echo|dns|blast --bind ADDR [--port N] [--name NAME] [--bytes N]
                        [--tls CERT:KEY] [--git-root DIR] [--static DIR]
prints "PORT <n>" when listening (and "QUERY <name>" for each DNS query).
"""
import hashlib
import http.server
import json
import os
import socket
import socketserver
import ssl
import subprocess
import sys
import threading


def pattern(n, seed=0):
    """n bytes that differ from one offset to the next (not all zeros)."""
    block = hashlib.sha256(b"corral%d" % seed).digest() * 2048  # 64 KiB
    out = bytearray()
    while len(out) < n:
        out += block[:n - len(out)]
    return bytes(out)


class _Threaded(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(self, addr, handler):
        if ":" in addr[0]:
            self.address_family = socket.AF_INET6
        super().__init__(addr, handler)
        self.accepted = 0
        self.lock = threading.Lock()

    def process_request(self, request, client_address):
        with self.lock:
            self.accepted += 1
        super().process_request(request, client_address)


def _serve(server):
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return server


class _EchoHandler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class EchoServer:
    def __init__(self, host="127.0.0.1", port=0):
        self.server = _serve(_Threaded((host, port), _EchoHandler))
        self.port = self.server.server_address[1]

    @property
    def accepted(self):
        return self.server.accepted

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _SourceHandler(socketserver.BaseRequestHandler):
    def handle(self):
        srv = self.server
        chunk = pattern(256 * 1024)
        left = srv.total
        try:
            if srv.http:  # answer one request with the bytes as its body
                head = b""
                while b"\r\n\r\n" not in head:
                    d = self.request.recv(4096)
                    if not d:
                        return
                    head += d
                self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % left)
            while left > 0:
                n = self.request.send(chunk[:min(left, len(chunk))])
                left -= n
                with srv.lock:
                    srv.sent += n
            self.request.shutdown(socket.SHUT_WR)
            self.request.recv(1)
        except OSError:
            pass


class SourceServer:
    """Sends `total` bytes of pattern() to each client (http: as the body of
    the answer to one request); `sent` counts them."""

    def __init__(self, total, host="127.0.0.1", http=False):
        self.server = _Threaded((host, 0), _SourceHandler)
        self.server.total = total
        self.server.http = http
        self.server.sent = 0
        _serve(self.server)
        self.port = self.server.server_address[1]

    @property
    def sent(self):
        with self.server.lock:
            return self.server.sent

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _SinkHandler(socketserver.BaseRequestHandler):
    def handle(self):
        self.server.release.wait()
        try:
            while self.request.recv(1 << 20):
                pass
        except OSError:
            pass


class SinkServer:
    """Accepts and reads nothing until release is set, then reads all."""

    def __init__(self, host="127.0.0.1"):
        self.server = _Threaded((host, 0), _SinkHandler)
        self.server.release = threading.Event()
        _serve(self.server)
        self.port = self.server.server_address[1]

    def close(self):
        self.server.release.set()
        self.server.shutdown()
        self.server.server_close()


def read_chunked(rfile):
    """The body of a chunked message from rfile (extensions and trailers
    skipped)."""
    body = bytearray()
    while True:
        line = rfile.readline(65537)
        size = int(line.split(b";")[0].strip(), 16)
        if size == 0:
            while rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                pass
            return bytes(body)
        body += rfile.read(size)
        rfile.readline(3)


class WebHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "corral-test"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.on_connection = 0

    def _note(self):
        self.on_connection += 1
        with self.server.lock:
            self.server.requests.append({
                "method": self.command, "path": self.path, "host": self.headers.get("Host"),
                "peer_port": self.client_address[1], "on_connection": self.on_connection})

    def _send(self, status, body=b"", headers=(), length=True):
        self.send_response(status)
        self.send_header("X-Server", self.server.name)
        for k, v in headers:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return read_chunked(self.rfile)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        self._note()
        parts = self.path.split("?")[0].split("/")
        what = parts[1] if len(parts) > 1 else ""
        if what == "git":
            return self._git()
        if what == "static" and self.server.static_root:
            return self._static(self.path.split("?")[0][len("/static/"):])
        if what == "len":
            return self._send(200, pattern(int(parts[2])))
        if what == "chunked":
            return self._chunked(int(parts[2]))
        if what == "close":
            # HTTP/1.1 without a length: the body ends when the connection does.
            self.send_response(200)
            self.send_header("X-Server", self.server.name)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(pattern(int(parts[2])))
            self.close_connection = True
            return
        if what == "204":
            self.send_response(204)
            self.send_header("X-Server", self.server.name)
            self.end_headers()
            return
        if what == "304":
            self.send_response(304)
            self.send_header("X-Server", self.server.name)
            self.send_header("Content-Length", "10")  # of the entity, not of this message
            self.end_headers()
            return
        if what == "info":
            info = {"server": self.server.name, "path": self.path, "headers": list(self.headers.items()),
                    "peer_port": self.client_address[1], "on_connection": self.on_connection}
            return self._send(200, json.dumps(info).encode(), [("Content-Type", "application/json")])
        self._send(404, b"not found\n")

    def _static(self, rel):
        """A file under the static root (a directory's index.html); never
        outside it."""
        root = os.path.realpath(self.server.static_root)
        path = os.path.realpath(os.path.join(root, rel))
        if path != root and not path.startswith(root + os.sep):
            return self._send(404, b"not found\n")
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        try:
            with open(path, "rb") as f:
                body = f.read()
        except OSError:
            return self._send(404, b"not found\n")
        ctype = "text/html" if path.endswith(".html") else "application/octet-stream"
        self._send(200, body, [("Content-Type", ctype)])

    def _chunked(self, n):
        self.send_response(200)
        self.send_header("X-Server", self.server.name)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Trailer", "X-Check")
        self.end_headers()
        if self.command == "HEAD":
            return
        data = pattern(n)
        i, size = 0, 1
        while i < len(data):
            piece = data[i:i + size]
            self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
            i += len(piece)
            size = size * 3 + 1
        self.wfile.write(b"0\r\nX-Check: %s\r\n\r\n" % hashlib.sha256(data).hexdigest().encode())

    def do_POST(self):
        self._note()
        if self.path.startswith("/git/"):
            return self._git()
        body = self._body()
        out = {"len": len(body), "sha256": hashlib.sha256(body).hexdigest(), "server": self.server.name}
        self._send(200, json.dumps(out).encode(), [("Content-Type", "application/json")])

    def _git(self):
        """git's smart HTTP through git http-backend, as a CGI."""
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.git_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path[len("/git"):],
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": self.server.git_root,
        }
        body = self._body() if self.command == "POST" else b""
        if self.command == "POST":
            env["CONTENT_LENGTH"] = str(len(body))
        enc = self.headers.get("Content-Encoding")
        if enc:
            env["HTTP_CONTENT_ENCODING"] = enc
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers.get("Git-Protocol")
        r = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, out = r.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = r.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self._send(status, out, headers)


class WebServer:
    def __init__(self, name, host="127.0.0.1", port=0, tls=None, git_root=None, static_root=None):
        self.server = _Threaded((host, port), WebHandler)
        self.server.name = name
        self.server.requests = []
        self.server.git_root = git_root or "/nonexistent"
        self.server.static_root = static_root
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls[0], tls[1])
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        _serve(self.server)
        self.port = self.server.server_address[1]

    @property
    def requests(self):
        with self.server.lock:
            return list(self.server.requests)

    @property
    def accepted(self):
        return self.server.accepted

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def make_cert(directory, names=("localhost",), ips=("127.0.0.1",)):
    """A self-signed certificate for names and ips; (cert, key) paths."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    san = ",".join(["DNS:" + n for n in names] + ["IP:" + i for i in ips])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=" + names[0], "-addext", "subjectAltName=" + san],
                   check=True, capture_output=True)
    return cert, key


def dns_stub(host, port):
    """Print each query's name and answer NXDOMAIN, forever."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, port))
    print("PORT %d" % s.getsockname()[1], flush=True)
    while True:
        data, peer = s.recvfrom(4096)
        if len(data) < 12:
            continue
        labels, i = [], 12
        while i < len(data) and data[i]:
            labels.append(data[i + 1:i + 1 + data[i]].decode("ascii", "replace"))
            i += 1 + data[i]
        print("QUERY %s" % ".".join(labels), flush=True)
        flags = 0x8183  # a response, recursion desired and available, NXDOMAIN
        reply = data[:2] + flags.to_bytes(2, "big") + data[4:6] + b"\0\0\0\0\0\0" + data[12:i + 5]
        s.sendto(reply, peer)


def blast(host, port, total):
    """Send total bytes to each client, one client at a time, forever."""
    ls = socket.socket()
    ls.bind((host, port))
    ls.listen(16)
    print("PORT %d" % ls.getsockname()[1], flush=True)
    block = memoryview(pattern(1 << 20))
    while True:
        s, _ = ls.accept()
        left = total
        try:
            while left > 0:
                n = min(left, len(block))
                s.sendall(block[:n])
                left -= n
            s.shutdown(socket.SHUT_WR)
            s.recv(1)
        except OSError:
            pass
        s.close()


def main(argv):
    kind = argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    host, port = opts.get("--bind", "127.0.0.1"), int(opts.get("--port", "0"))
    if kind == "dns":
        dns_stub(host, port)
        return
    if kind == "blast":
        blast(host, port, int(opts.get("--bytes", str(1 << 30))))
        return
    if kind == "echo":
        srv = EchoServer(host, port)
    elif kind == "web":
        tls = opts["--tls"].split(":", 1) if "--tls" in opts else None
        srv = WebServer(opts.get("--name", "web"), host, port, tls=tls, git_root=opts.get("--git-root"),
                        static_root=opts.get("--static"))
    else:
        raise SystemExit("proxyservers.py: web, echo or dns, not %s" % kind)
    print("PORT %d" % srv.port, flush=True)
    sys.stdin.read()  # until the test closes our stdin


if __name__ == "__main__":
    main(sys.argv)
