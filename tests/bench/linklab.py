#!/usr/bin/env python3
"""A slow link for tests/bench/bench_hosts.py: between the clients (the
screen, ssh for tmux) and the sshd that stands for the other machines
(tests/integration/sshlab.py), DELAY_MS each way, its round trip measured
in the same run.

As root, sshd runs in a network namespace of its own and the clients in
another, joined by a veth pair (tests/integration/netlab.py: B is sshd's,
A the clients'), and `tc qdisc add dev VETH root netem delay 25ms` on each
end delays every packet, TCP's handshake and acks included.  The bytes
over the link are the veth's (/proc/PID/net/dev of A: whole frames, TCP/IP
headers and acks included, both ways).

Where netem cannot be had (not root, no tc, a kernel without sch_netem)
the benchmark still measures over a delayed link, and says why netem was
not used: a TCP relay in front of sshd (this file run as `linklab.py
relay`, in A when the namespaces could be made) holds every chunk it reads
DELAY_MS before writing it on, each way.  That delays what ssh writes, not
packets (TCP's own acks are not delayed, a chunk is held whole), close
enough for what the benchmark asks: how many round trips a key, a frame or
an attach costs.  Without namespaces the bytes are the relay's count of
the ssh stream (no headers).

The round trip is measured as one byte sent from the clients' side to an
echo on the far side and back: an echo beside sshd in its namespace under
netem, else behind a second listener of the relay.
"""
import collections
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

DELAY_MS = 25  # each way: a round trip of 50 ms


class Link:
    def __init__(self, scratch, delay_ms=DELAY_MS):
        self.delay_ms = delay_ms
        self.ns = None
        self.netem = False
        self.why_not_netem = None
        self.relay = None
        self.far_echo = None
        self.echo_port = None
        if os.geteuid() != 0:
            self.why_not_netem = "not root (network namespaces and tc need root)"
            return
        missing = [p for p in ("ip", "tc", "unshare", "nsenter") if not shutil.which(p)]
        if missing:
            self.why_not_netem = "%s not installed (iproute2, util-linux)" % ", ".join(missing)
            return
        from netlab import Netns
        try:
            self.ns = Netns(scratch)
        except Exception as e:  # no namespaces here (a container without the right to make them)
            self.why_not_netem = "no network namespace: %s" % e
            return
        for pid, dev in ((self.ns.a, "va"), (self.ns.b, "vb")):
            r = subprocess.run(self.ns.enter(pid) + ["tc", "qdisc", "add", "dev", dev, "root", "netem", "delay",
                                                     "%dms" % delay_ms], capture_output=True, text=True)
            if r.returncode != 0:
                err = (r.stderr or r.stdout).strip()
                self.why_not_netem = "`tc qdisc add dev %s root netem delay %dms` failed: %s%s" % (
                    dev, delay_ms, err, " (this kernel has no sch_netem)" if "unknown" in err.lower() else "")
                # Half a delay would be neither link: none on either end.
                subprocess.run(self.ns.enter(self.ns.a) + ["tc", "qdisc", "del", "dev", "va", "root"],
                               capture_output=True)
                return
        self.netem = True

    # ---- where things run ---------------------------------------------------

    @property
    def client_wrap(self):
        """The argv prefix that runs a client on this side of the link."""
        return self.ns.enter(self.ns.a) if self.ns else []

    @property
    def server_wrap(self):
        """The argv prefix that runs sshd on the far side."""
        return self.ns.enter(self.ns.b) if self.ns else []

    @property
    def server_addr(self):
        """The address sshd listens on."""
        from netlab import ADDR_B
        return ADDR_B if self.ns else "127.0.0.1"

    def front(self, sshd_port):
        """(host, port) the clients connect to for sshd on sshd_port: sshd
        itself under netem, else the relay started here."""
        if self.netem:
            return self.server_addr, sshd_port
        self.relay = subprocess.Popen(self.client_wrap + [sys.executable, os.path.abspath(__file__), "relay",
                                                          self.server_addr, str(sshd_port), str(self.delay_ms)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.relay.stdout.readline().split()
        if len(line) != 3 or line[0] != "ready":
            raise RuntimeError("the relay did not start: %r" % line)
        self.echo_port = int(line[2])
        return "127.0.0.1", int(line[1])

    # ---- what it says, what it measures -------------------------------------

    def describe(self):
        if self.netem:
            return ("sshd in a network namespace of its own, the clients in another, a veth pair between them "
                    "delayed by netem %d ms on each end; bytes: the veth's frames, both ways" % self.delay_ms)
        return ("netem not used: %s; instead this script's TCP relay in front of sshd holds each chunk %d ms "
                "each way (%s); bytes: %s" %
                (self.why_not_netem, self.delay_ms,
                 "sshd in a network namespace of its own, the relay and the clients in another, an undelayed "
                 "veth pair between them" if self.ns else "all on 127.0.0.1",
                 "the veth's frames, both ways" if self.ns else "the ssh stream through the relay, both ways"))

    def counts(self):
        """Bytes over the link so far: (to the far side, from it)."""
        if self.ns:
            with open("/proc/%d/net/dev" % self.ns.a) as f:
                for line in f:
                    name, _, rest = line.partition(":")
                    if name.strip() == "va":
                        v = rest.split()
                        return int(v[8]), int(v[0])  # transmitted, received
            raise RuntimeError("no va in namespace A's /proc/net/dev")
        self.relay.stdin.write("count\n")
        self.relay.stdin.flush()
        up, down = self.relay.stdout.readline().split()
        return int(up), int(down)

    def rtt_ms(self, n):
        """n round trips over the link, in ms."""
        if self.netem:
            self.far_echo = subprocess.Popen(self.server_wrap + [sys.executable, os.path.abspath(__file__), "echo",
                                                                 self.server_addr],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            line = self.far_echo.stdout.readline().split()
            if len(line) != 2 or line[0] != "ready":
                raise RuntimeError("the echo did not start: %r" % line)
            host, port = self.server_addr, int(line[1])
        else:
            host, port = "127.0.0.1", self.echo_port
        r = subprocess.run(self.client_wrap + [sys.executable, os.path.abspath(__file__), "rtt", host, str(port),
                                               str(n)], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("measuring the round trip failed: %s" % r.stderr)
        return [float(x) for x in r.stdout.split()]

    def close(self):
        for p in (self.relay, self.far_echo):
            if p and p.poll() is None:
                p.stdin.close()  # its end
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.ns:
            self.ns.close()  # the namespaces, their veth and qdiscs go with their last process


# ---- the relay (its own process: its threads must not share a GIL with the
# benchmark's timing) -----------------------------------------------------------

def _direction(src, dst, delay, counts, idx, lock, done):
    """src to dst, each chunk written delay s after it was read, in order;
    an end of src is passed on (shutdown) when its turn comes."""
    q = collections.deque()
    cv = threading.Condition()

    def reader():
        while True:
            try:
                data = src.recv(1 << 16)
            except OSError:
                data = b""
            with cv:
                q.append((time.monotonic() + delay, data))
                cv.notify()
            if not data:
                return

    def writer():
        while True:
            with cv:
                while not q:
                    cv.wait()
                due, data = q[0]
                left = due - time.monotonic()
                if left > 0:
                    cv.wait(left)  # the delay itself
                    continue
                q.popleft()
            try:
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    break
                dst.sendall(data)
            except OSError:
                try:
                    src.shutdown(socket.SHUT_RDWR)  # the reader ends too
                except OSError:
                    pass
                break
            with lock:
                counts[idx] += len(data)
        done()

    for fn in (reader, writer):
        threading.Thread(target=fn, daemon=True).start()


def _serve(listener, connect, delay, counts, lock):
    while True:
        client, _ = listener.accept()
        try:
            upstream = connect()
        except OSError:  # sshd gone: the client sees its connection closed
            client.close()
            continue
        for s in (client, upstream):
            if s.family == socket.AF_INET:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no delay but the one we add
        left = [2]

        def done(client=client, upstream=upstream, left=left):
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                client.close()
                upstream.close()

        _direction(client, upstream, delay, counts, 0, lock, done)
        _direction(upstream, client, delay, counts, 1, lock, done)


def _echo(s):
    """Send back whatever s gets, until its end."""
    def run():
        while True:
            data = s.recv(1 << 16)
            if not data:
                s.close()
                return
            s.sendall(data)

    threading.Thread(target=run, daemon=True).start()


def _echo_pair():
    """A socket whose peer sends back whatever it gets: the echo behind the
    relay's second listener."""
    a, b = socket.socketpair()
    _echo(b)
    return a


def _until_stdin_ends():
    for line in sys.stdin:
        pass


def echo_main(host):
    """The echo beside sshd: one port on host, each connection sent back."""
    ls = socket.socket()
    ls.bind((host, 0))
    ls.listen(8)

    def serve():
        while True:
            c, _ = ls.accept()
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _echo(c)

    threading.Thread(target=serve, daemon=True).start()
    print("ready %d" % ls.getsockname()[1], flush=True)
    _until_stdin_ends()  # the end of stdin ends the echo


def relay_main(target_host, target_port, delay_ms):
    delay = delay_ms / 1000.0
    counts = [0, 0]  # to the far side, from it (the ssh link only, not the echo)
    echo_counts = [0, 0]
    lock = threading.Lock()
    ports = []
    for connect, cnt in ((lambda: socket.create_connection((target_host, target_port)), counts),
                         (_echo_pair, echo_counts)):
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen(64)
        ports.append(ls.getsockname()[1])
        threading.Thread(target=_serve, args=(ls, connect, delay, cnt, lock), daemon=True).start()
    print("ready %d %d" % tuple(ports), flush=True)
    for line in sys.stdin:  # "count" asks for the counts; the end of stdin ends the relay
        if line.strip() == "count":
            with lock:
                print("%d %d" % tuple(counts), flush=True)


def rtt_main(host, port, n):
    out = []
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(n):
        t0 = time.monotonic()
        s.sendall(b"x")
        if s.recv(1) != b"x":
            raise SystemExit("the echo did not answer")
        out.append((time.monotonic() - t0) * 1000)
    s.close()
    print(" ".join("%.3f" % x for x in out))


if __name__ == "__main__":
    if sys.argv[1:2] == ["relay"]:
        relay_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1:2] == ["echo"]:
        echo_main(sys.argv[2])
    elif sys.argv[1:2] == ["rtt"]:
        rtt_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: linklab.py relay TARGET_HOST TARGET_PORT DELAY_MS | echo HOST | rtt HOST PORT N")
