"""Other machines for the tests of corral -H and the screen's [hosts]: this
machine, reached through Debian's sshd on 127.0.0.1 (a free port, a host
key and user keys made in a scratch directory).  Each "machine" is a corral
World of its own (runtime, state and config directories): its user key's
line in authorized_keys forces `corral serve-stdio` with those directories,
so its server is not the local one.  The client's ssh reads the lab's own
config (CORRAL_SSH_COMMAND="ssh -F scratch/ssh_config", `env`), where each
machine is a Host alias (`url(alias)`); 127.0.0.1:PORT itself reaches the
first one.  When sshd is missing or does not start, `why_not` says why
(the tests then report SKIP).

The benchmark over a delayed link (tests/bench/bench_hosts.py) runs sshd
elsewhere: on another address (`listen`) under a command that enters a
network namespace (`wrap`), reached through a relay (`reach`), and adds an
account whose key runs a given command on a terminal (`add_command`: tmux,
the reference it is measured against)."""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

from harness import CORRAL, TIMEOUT, wait_until

SSHD = "/usr/sbin/sshd"
ME = pwd.getpwuid(os.geteuid()).pw_name


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def sh(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=TIMEOUT)


class SshLab:
    def __init__(self, listen="127.0.0.1", wrap=()):
        self.scratch = tempfile.mkdtemp(prefix="crlssh")
        os.chmod(self.scratch, 0o755)
        self.machines = []  # (alias, World)
        self.commands = []  # (alias, command line)
        self.listen = listen
        self.wrap = list(wrap)
        self.sshd = None
        self.why_not = None
        self.port = None
        self.config = os.path.join(self.scratch, "ssh_config")

    def add(self, alias, world):
        """A machine reached as ssh://ME@ALIAS (before start)."""
        self.machines.append((alias, world))

    def add_command(self, alias, command):
        """An alias whose key runs command (on a terminal when ssh asks for
        one with -t) instead of corral (before start)."""
        self.commands.append((alias, command))

    @property
    def env(self):
        return {"CORRAL_SSH_COMMAND": "ssh -F %s" % self.config}

    def url(self, alias=None):
        """ssh://ME@ALIAS, or with no alias ssh://ME@127.0.0.1:PORT (the first machine)."""
        return "ssh://%s@%s" % (ME, alias) if alias else "ssh://%s@127.0.0.1:%d" % (ME, self.port)

    def log(self):
        try:
            with open(os.path.join(self.scratch, "sshd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def start(self):
        if not os.access(SSHD, os.X_OK):
            self.why_not = "%s is not installed (bootstrap installs openssh-server)" % SSHD
            return
        if not shutil.which("ssh"):
            self.why_not = "ssh is not installed"
            return
        keys = ["host_key"] + ["user_key_%s" % alias for alias, _ in self.machines + self.commands]
        for key in keys:
            r = sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(self.scratch, key))
            if r.returncode != 0:
                self.why_not = "ssh-keygen failed: " + r.stderr
                return
        if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755)  # sshd's privilege separation directory, as its package makes it
        self.port = free_port()
        with open(os.path.join(self.scratch, "authorized_keys"), "w") as f:
            for alias, world in self.machines:
                forced = "env XDG_RUNTIME_DIR=%s XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s %s serve-stdio" % (
                    world.runtime, world.state, world.config, CORRAL)
                with open(os.path.join(self.scratch, "user_key_%s.pub" % alias)) as k:
                    pub = k.read().strip()
                f.write('command="%s",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding %s\n' %
                        (forced, pub))
            for alias, command in self.commands:
                with open(os.path.join(self.scratch, "user_key_%s.pub" % alias)) as k:
                    pub = k.read().strip()
                f.write('command="%s",no-port-forwarding,no-agent-forwarding,no-X11-forwarding %s\n' % (command, pub))
        with open(os.path.join(self.scratch, "sshd_config"), "w") as f:
            # SHLVL=1: bash, the user's shell that runs each forced command,
            # reads ~/.bashrc when sshd starts it at level 1 (Debian builds it
            # so); what the user's rc file does is not under test, and one
            # that starts a pyenv costs 0.75 s a login.
            f.write("SetEnv SHLVL=1\n")
            f.write("Port %d\nListenAddress %s\nHostKey %s/host_key\nUsePAM no\nStrictModes no\n"
                    "PidFile none\nAuthorizedKeysFile %s/authorized_keys\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nAllowUsers %s\nLogLevel INFO\n"
                    % (self.port, self.listen, self.scratch, self.scratch, ME))
        self.reach(self.listen, self.port)
        log = open(os.path.join(self.scratch, "sshd.log"), "wb")
        self.sshd = subprocess.Popen(self.wrap + [SSHD, "-D", "-e", "-f", os.path.join(self.scratch, "sshd_config")],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        listening = wait_until(lambda: "Server listening" in self.log() or self.sshd.poll() is not None)
        if self.sshd.poll() is not None or not listening:
            self.why_not = "sshd did not start: " + self.log()

    def reach(self, host, port):
        """The clients' config: every alias connects to host:port (sshd's
        own address, or a relay in front of it)."""
        with open(os.path.join(self.scratch, "host_key.pub")) as f:
            host_pub = " ".join(f.read().split()[:2])
        with open(os.path.join(self.scratch, "known_hosts"), "w") as f:
            f.write("[%s]:%d %s\n" % (host, port, host_pub))
        with open(self.config, "w") as f:
            # A machine's own key first: sshd takes the first key it knows,
            # and each key's forced command names its machine.
            for alias, _ in self.machines + self.commands:
                f.write("Host %s\n  HostName %s\n  Port %d\n  IdentityFile %s/user_key_%s\n" %
                        (alias, host, port, self.scratch, alias))
            f.write("Host *\n  IdentityFile %s/user_key_%s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s/known_hosts\n"
                    "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
                    "  ControlMaster no\n  LogLevel ERROR\n" % (self.scratch, self.machines[0][0], self.scratch))

    def stop(self):
        if self.sshd and self.sshd.poll() is None:
            self.sshd.terminate()
            self.sshd.wait(TIMEOUT)
        shutil.rmtree(self.scratch, ignore_errors=True)
