"""Private network namespaces for the network tests (root only): A, where
the proxy (or the whole corral server) runs, with an /etc/hosts and a
resolv.conf of its own, and B, standing in for the internet behind a veth
pair (11.22.33.44; A is 11.22.33.1).  Nothing on this machine's real network
is touched.  Servers from proxyservers.py run in either namespace.
"""
import os
import queue
import subprocess
import sys
import threading

SERVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxyservers.py")
ADDR_A, ADDR_B = "11.22.33.1", "11.22.33.44"

HOSTS = """127.0.0.1 localhost
11.22.33.44 pub.corral.test
127.0.0.1 loop.corral.test
10.0.0.1 ten.corral.test
169.254.169.254 meta.corral.test
::ffff:127.0.0.1 mapped.corral.test
64:ff9b::a00:1 nat64.corral.test
127.0.0.1 both.corral.test
11.22.33.44 both.corral.test
11.22.33.1 own.corral.test
"""


class Netns:
    """Two namespaces: A (the proxy's: its own /etc/hosts and resolv.conf,
    lo, and veth 11.22.33.1) and B (the internet: veth 11.22.33.44)."""

    def __init__(self, d, nameserver="127.0.0.1"):
        self.procs = []
        with open(os.path.join(d, "hosts"), "w") as f:
            f.write(HOSTS)
        with open(os.path.join(d, "resolv.conf"), "w") as f:
            f.write("nameserver %s\noptions attempts:1 timeout:2\n" % nameserver)
        try:
            self.a = self._holder(["unshare", "-m", "-n", "--propagation", "private", "sh", "-c",
                                   "mount --bind %s/hosts /etc/hosts && mount --bind %s/resolv.conf /etc/resolv.conf && "
                                   "ip link set lo up && echo ready && exec sleep 100000" % (d, d)])
            self.b = self._holder(["unshare", "-n", "sh", "-c", "ip link set lo up && echo ready && exec sleep 100000"])
            self.run_in(self.a, ["ip", "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", str(self.b)])
            self.run_in(self.a, ["ip", "addr", "add", "%s/24" % ADDR_A, "dev", "va"])
            self.run_in(self.a, ["ip", "link", "set", "va", "up"])
            self.run_in(self.b, ["ip", "addr", "add", "%s/24" % ADDR_B, "dev", "vb"])
            self.run_in(self.b, ["ip", "link", "set", "vb", "up"])
        except BaseException:
            # A caller that goes on without namespaces (a benchmark) must
            # not keep the holder of the one that was made.
            self.close()
            raise

    def _holder(self, argv):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("could not set up a namespace with %s" % argv)
        return p.pid

    def enter(self, pid, mount=False):
        return ["nsenter", "-t", str(pid), "-n"] + (["-m"] if mount else []) + ["--"]

    def run_in(self, pid, argv):
        subprocess.run(self.enter(pid) + argv, check=True, capture_output=True)

    def server(self, pid, kind, bind, port=0, extra=()):
        """A proxyservers.py server in that namespace: (process, port, lines queue)."""
        p = subprocess.Popen(self.enter(pid) + [sys.executable, SERVERS, kind, "--bind", bind, "--port", str(port),
                                                "--name", kind + "@" + bind] + list(extra),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        first = p.stdout.readline().split()
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x.strip()) for x in p.stdout], daemon=True).start()
        return p, int(first[1]), lines

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
            p.wait()
