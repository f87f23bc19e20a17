#!/usr/bin/env python3
"""corral sandbox and sandboxed sessions, as a user sees them: exit statuses,
stdio, the launch plan, git working in the workspace while the parts of .git
that run code stay read-only, profiles from the config file, precise errors
when something cannot be enforced, and every session sandboxed by default.
(Attacks on the sandbox are in tests/sandbox/battery.py.)"""
import hashlib
import os
import signal
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

from harness import CORRAL, Tap, World, run_tests

w = World()
homes = []


def scratch_home():
    if not homes:
        homes.append(tempfile.mkdtemp(prefix="corral-home-", dir="/var/tmp"))
    return homes[0]


w.scratch_home = scratch_home


def sandbox(*args, cwd=None, input=None, env=None):
    e = dict(w.env)
    if env:
        e.update(env)
    r = subprocess.run([CORRAL, "sandbox"] + list(args), cwd=cwd or w.ws, input=input, capture_output=True,
                       timeout=60, env=e)
    r.stdout = r.stdout.decode("utf-8", "replace")
    r.stderr = r.stderr.decode("utf-8", "replace")
    return r


def test_status_and_stdio(t):
    r = sandbox("--", "sh", "-c", "exit 3")
    t.eq(r.returncode, 3, "the command's exit status comes back")
    r = sandbox("--", "sh", "-c", "kill -9 $$")
    t.eq(r.returncode, 137, "a command killed by signal 9 exits 128+9")
    r = sandbox("--", "sh", "-c", "kill -TERM $$")
    t.eq(r.returncode, 143, "and by SIGTERM 128+15")
    r = sandbox("--", "cat", input=b"through the sandbox\n")
    t.eq(r.stdout, "through the sandbox\n", "stdin and stdout pass straight through")
    r = sandbox("--", "sh", "-c", "echo oops >&2")
    t.eq(r.stderr, "oops\n", "stderr too")
    r = sandbox("--", "no-such-program-xyz")
    t.eq(r.returncode, 127, "a missing program exits 127")
    r = sandbox("--", "sh", "-c", 'echo "$CORRAL_SANDBOX"; id -u; ls /proc | grep -c "^[0-9]"')
    lines = r.stdout.split()
    t.eq(lines[0] if lines else None, "workspace-write", "the default profile is workspace-write")
    t.eq(lines[1] if len(lines) > 1 else None, str(os.getuid()), "the command keeps the caller's uid")
    t.ok(len(lines) > 2 and int(lines[2]) <= 4, "and sees only its own few processes", r.stdout)
    # Signals the caller ignores (nohup's SIGHUP, a shell's SIGPIPE, a
    # server's SIGXFSZ) are not ignored by the sandboxed command, which
    # starts with every disposition at its default and nothing blocked.
    ign = [signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGUSR2]

    def ignoring():
        for s in ign:
            signal.signal(s, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])

    r = subprocess.run([CORRAL, "sandbox", "--", "sh", "-c", "grep -E '^Sig(Ign|Blk):' /proc/self/status"],
                       cwd=w.ws, env=w.env, capture_output=True, text=True, timeout=60, preexec_fn=ignoring,
                       restore_signals=False)
    seen = dict(line.split(":\t") for line in r.stdout.splitlines() if ":\t" in line)
    t.eq(seen.get("SigIgn"), "0000000000000000", "a signal the caller ignores is not ignored in the sandbox",
         r.stdout + r.stderr)
    t.eq(seen.get("SigBlk"), "0000000000000000", "nor is one the caller blocks blocked there", r.stdout + r.stderr)


def own_pids_cgroup():
    """Where corral makes its sandboxes' cgroups when run from here: this
    process's own cgroup in the v1 pids hierarchy (the v2 directory when
    there is no v1 one), or None."""
    with open("/proc/self/cgroup") as f:
        lines = [line.split(":", 2) for line in f.read().splitlines()]
    for _, controllers, path in lines:
        if "pids" in controllers.split(","):
            return "/sys/fs/cgroup/pids" + (path if path != "/" else "")
    for _, controllers, path in lines:
        if controllers == "":
            root = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
            return root + (path if path != "/" else "")
    return None


def test_stale_cgroups_are_removed(t):
    """A launcher killed mid-command leaves its sandbox's cgroup behind,
    empty.  The next launcher that makes cgroups there removes those
    older than a minute, and only those: a younger one may be another
    launcher's, about to take its init."""
    parent = own_pids_cgroup()
    if not parent or not os.access(parent, os.W_OK):
        t.skip("stale sandbox cgroups are removed", "no writable cgroup hierarchy here")
        return
    old, young = (os.path.join(parent, "corral-%d" % n) for n in (4000001, 4000002))
    try:
        os.mkdir(old)
        os.utime(old, (time.time() - 120, time.time() - 120))
        os.mkdir(young)
        r = sandbox("--", "true")
        t.eq(r.returncode, 0, "a sandbox runs", r.stderr)
        t.ok(not os.path.exists(old), "an empty corral cgroup two minutes old is removed")
        t.ok(os.path.isdir(young), "one made a moment ago is left alone")
    finally:
        for d in (old, young):
            if os.path.isdir(d):
                os.rmdir(d)


def test_print_plan(t):
    r = sandbox("--print-plan", "-w", w.config, "--deny", os.path.join(w.ws, "secret"), "--", "true")
    t.eq(r.returncode, 0, "--print-plan exits 0", r.stderr)
    out = r.stdout
    t.ok("bind ro   /  (read root)" in out, "the host is bound read-only first", out[:400])
    t.ok("bind rw   %s  (workspace)" % w.ws in out, "the workspace is writable")
    t.ok("bind rw   %s  (writable root)" % w.config in out, "-w adds a writable root")
    t.ok("tmpfs rw  /tmp  (private tmpfs, 1 GiB)" in out, "with a private 1 GiB /tmp")
    t.ok("net (its own: loopback only" in out and "setgroups denied" in out, "names the namespaces")
    t.ok("seccomp:" in out and "rules" in out and "landlock:" in out, "says what the filter and Landlock do")
    t.ok("RLIMIT_NOFILE 4096" in out and "pids.max 1024" in out, "and the limits, applied or not and why")
    t.ok(not os.path.exists(os.path.join(w.ws, ".corral")), "printing the plan changes nothing on disk")


# A local server and its client inside one sandbox, as a test suite starts
# them: an HTTP server on 127.0.0.1 and on ::1, fetched with urllib; then a
# connection to a server of the host on its 127.0.0.1.
LOOPBACK = r'''
import errno, http.server, socket, sys, threading, urllib.request
for addr in ("127.0.0.1", "::1"):
    class Server(http.server.HTTPServer):
        address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        srv = Server((addr, 0), http.server.SimpleHTTPRequestHandler)
    except OSError as e:
        print("serve", addr, errno.errorcode[e.errno])
        continue
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    host = "[%s]" % addr if ":" in addr else addr
    url = "http://%s:%d/served.txt" % (host, srv.server_address[1])
    print("served", addr, urllib.request.urlopen(url, timeout=20).read().decode().strip())
    srv.shutdown()
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    print("host reached")
except OSError as e:
    print("host", errno.errorcode[e.errno])
'''


def test_loopback_inside_the_sandbox(t):
    with open(os.path.join(w.ws, "served.txt"), "w") as f:
        f.write("from the workspace\n")
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(4)
    host.setblocking(False)
    r = sandbox("--", "python3", "-c", LOOPBACK, str(host.getsockname()[1]))
    out = r.stdout.splitlines()
    t.ok("served 127.0.0.1 from the workspace" in out,
         "with the network off, a server on 127.0.0.1 inside the sandbox answers a client there", r.stdout + r.stderr)
    t.ok("served ::1 from the workspace" in out, "and on ::1", r.stdout + r.stderr)
    t.ok("host ECONNREFUSED" in out, "the host's 127.0.0.1 is not the sandbox's: its server is not reached",
         r.stdout)
    try:
        host.accept()
        t.ok(False, "the host's server saw no connection")
    except BlockingIOError:
        t.ok(True, "the host's server saw no connection")
    host.close()
    r = sandbox("--print-plan", "--", "true")
    t.ok("net (its own: loopback only" in r.stdout and "sockets may be AF_INET (TCP, UDP)" in r.stdout,
         "the plan says loopback works and what sockets may be", r.stdout)


def tree_digest(root):
    """Everything about a directory tree a write could change: names, types,
    modes, sizes, contents, symlink targets, and the inodes (a file
    replaced by a copy is a write too)."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(d, name)
            st = os.lstat(p)
            h.update(("%s %o %d %d\n" % (os.path.relpath(p, root), st.st_mode, st.st_size, st.st_ino)).encode())
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    h.update(f.read())
            elif stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
    return h.hexdigest()


# What ordinary tools do to a home: vim writes its viminfo (with the
# user's real ~/.viminfo denied: it holds what was typed), pyenv's rehash
# takes a lock file in ~/.pyenv/shims and rewrites the shims, a shell
# appends to ~/.bashrc.  Then what the sandbox must not see.
HOME_TOOLS = r"""
if command -v vim >/dev/null; then
    vim -N -u NONE --cmd "set viminfo='100,n$HOME/.viminfo" -es -c 'let g:corral = 1' -c wviminfo -c qa &&
        grep -q 'generated by Vim' "$HOME/.viminfo" && ! grep -q SECRET "$HOME/.viminfo" && echo VIMINFO-OK
else
    echo NO-VIM
fi
( set -o noclobber; : > "$HOME/.pyenv/shims/.pyenv-shim" ) &&
    for p in python python3 pip; do printf '#!/bin/sh\nexec pyenv exec "$0" "$@"\n' > "$HOME/.pyenv/shims/$p"; done &&
    chmod +x "$HOME"/.pyenv/shims/* && rm "$HOME/.pyenv/shims/.pyenv-shim" && echo REHASH-OK
echo 'echo planted' >> "$HOME/.bashrc" && echo BASHRC-WRITTEN
cat "$HOME/.ssh/id_test" 2>/dev/null || echo SSH-HIDDEN
"""


def remove_layers(path):
    """Overlay layers hold directories of any mode (overlayfs's work/work
    is mode 000): open them up, then remove."""
    for d, dirs, _ in os.walk(path):
        for name in dirs:
            os.chmod(os.path.join(d, name), 0o700)
    shutil.rmtree(path, ignore_errors=True)


def make_home(name):
    """A home outside /tmp (the sandbox's /tmp is its own)."""
    home = os.path.join(w.scratch_home(), name)
    for rel, text, mode in ((".ssh/id_test", "SECRET ssh key\n", 0o600), (".viminfo", "SECRET typed\n", 0o600),
                            (".bashrc", "# the real bashrc\n", 0o644), (".pyenv/shims/python", "old shim\n", 0o755),
                            ("notes.txt", "the user's notes\n", 0o644)):
        path = os.path.join(home, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
    return home


def test_private_tmp_is_explained(t):
    """What another program left in the host's /tmp is not there inside,
    and corral doctor says why and what to do."""
    left = tempfile.mkdtemp(prefix="crl-left-", dir="/tmp")
    try:
        r = sandbox("--", "sh", "-c", "ls -d %s 2>&1 || echo MISSING" % left)
        t.ok("MISSING" in r.stdout, "a directory another program made in the host's /tmp is not in the sandbox's",
             r.stdout + r.stderr)
        d = subprocess.run([CORRAL, "doctor"], cwd=w.ws, env=w.env, capture_output=True, text=True, timeout=60)
        t.ok("finds /tmp empty" in d.stdout and "-w DIR" in d.stdout, "corral doctor explains the private /tmp and "
             "what to do instead", d.stdout)
    finally:
        os.rmdir(left)


def layer_while_running(env):
    """The names in corral's home-layers directory while a sandbox runs
    (None: no such directory)."""
    e = dict(w.env)
    e.update(env)
    p = subprocess.Popen([CORRAL, "sandbox", "--", "sh", "-c", "echo up; read x"], cwd=w.ws, env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        up = p.stdout.readline()
        layers = os.path.join(w.state, "corral", "home-layers")
        names = sorted(os.listdir(layers)) if os.path.isdir(layers) else None
    finally:
        p.communicate(b"\n", timeout=60)
    return up, names


def check_discarded_layer(t, where, home, env):
    """A throw-away layer (discard, the default), kept where says
    ([sandbox] home-layer-in): memory or disk."""
    layers = os.path.join(w.state, "corral", "home-layers")
    w.write_config("[sandbox]\n  home-layer-in = %s\n" % where)
    before = tree_digest(home)
    r = sandbox("--", "sh", "-c", HOME_TOOLS, env=env)
    out = r.stdout.split()
    if "NO-VIM" in out:
        t.skip("%s: vim writes its viminfo in the sandbox" % where, "vim is not installed")
    else:
        t.ok("VIMINFO-OK" in out, "%s: vim writes its viminfo in the sandbox (no E138), a new one: the real one "
             "stays hidden" % where, r.stdout + r.stderr)
    t.ok("REHASH-OK" in out, "%s: a pyenv-style rehash (lock file, shims) works in ~/.pyenv/shims" % where,
         r.stdout + r.stderr)
    t.ok("BASHRC-WRITTEN" in out, "%s: the home takes writes" % where, r.stdout + r.stderr)
    t.ok("SSH-HIDDEN" in out, "%s: ~/.ssh stays hidden over the layer" % where, r.stdout)
    t.eq(tree_digest(home), before, "%s: the real home is not written (every file, mode and inode the same)" % where)
    t.ok(not os.path.exists(layers), "%s: the layer is gone when the sandbox ends (discard, the default)" % where)
    up, names = layer_while_running(env)
    if where == "memory":
        t.ok(up == b"up\n" and names is None, "memory: nothing of the layer is on disk while its sandbox runs",
             (up, names))
    else:
        t.ok(up == b"up\n" and names is not None and len(names) == 1 and names[0].startswith("s-"),
             "disk: the layer is a directory in corral's state while its sandbox runs", (up, names))
    r = sandbox("--", "sh", "-c", 'grep -F " $HOME " /proc/self/mountinfo', env=env)
    if where == "disk":
        t.ok(" overlay " in r.stdout and "volatile" in r.stdout, "disk: a discarded layer is volatile: its end "
             "never syncs the file system it is on", r.stdout + r.stderr)
    else:
        t.ok(" overlay " in r.stdout, "memory: the home is an overlay", r.stdout + r.stderr)
    r = sandbox("--", "sh", "-c", 'cat "$HOME/.bashrc"; ls "$HOME/.pyenv/shims"', env=env)
    t.eq(r.stdout, "# the real bashrc\npython\n", "%s: a later sandbox of the workspace sees the real home, "
         "nothing planted" % where, r.stderr)
    r = sandbox("--print-plan", "--", "true", env=env)
    says = "in memory, a tmpfs of the sandbox's own" if where == "memory" else "removed when the sandbox ends"
    t.ok(("overlay   %s  (home layer" % home) in r.stdout and says in r.stdout,
         "%s: the plan shows the layer over the home and what becomes of it" % where, r.stdout)
    if where == "memory":
        # Writes to a layer in memory count against tmp-size, as /tmp's do.
        w.write_config("[sandbox]\n  home-layer-in = memory\n  tmp-size = 1M\n")
        r = sandbox("--", "sh", "-c", 'head -c 2000000 /dev/zero > "$HOME/big" && echo WROTE', env=env)
        t.ok("WROTE" not in r.stdout and "No space left on device" in r.stderr,
             "memory: the layer is as big as tmp-size lets /tmp grow, no more", r.stdout + r.stderr)
        t.eq(tree_digest(home), before, "memory: and the real home is still not written")


def test_home_layer(t):
    home = make_home("layer")
    layers = os.path.join(w.state, "corral", "home-layers")
    env = {"HOME": home, "XDG_CACHE_HOME": os.path.join(w.base, "cache")}
    before = tree_digest(home)
    for where in ("memory", "disk"):
        check_discarded_layer(t, where, home, env)

    w.write_config("[sandbox]\n  home-layer = keep\n")
    r = sandbox("--", "sh", "-c", 'echo kept > "$HOME/kept.txt"; echo "echo planted" >> "$HOME/.bashrc"; '
                'mkdir -p "$HOME/.config/fish" && echo "echo planted" > "$HOME/.config/fish/config.fish"; '
                'git config --global core.fsmonitor "echo planted"', env=env)
    r = sandbox("--", "sh", "-c", 'cat "$HOME/kept.txt" "$HOME/.bashrc"; ls "$HOME/.config/fish" 2>&1; '
                'git config --global core.fsmonitor', env=env)
    t.ok(r.stdout.startswith("kept\n# the real bashrc\n") and "planted" not in r.stdout,
         "with keep, a later sandbox of the workspace finds what an earlier one wrote, but not its shell startup "
         "files or git config", r.stdout + r.stderr)
    kept = [n for n in os.listdir(layers)] if os.path.isdir(layers) else []
    t.ok(len(kept) == 1 and kept[0].startswith("w-ws-"), "the kept layer is the workspace's, in corral's state",
         kept)
    r = sandbox("--", "sh", "-c", 'grep -F " $HOME " /proc/self/mountinfo', env=env)
    t.ok(" overlay " in r.stdout and "volatile" not in r.stdout, "a kept layer is not volatile: it must survive a "
         "crash", r.stdout + r.stderr)
    t.eq(tree_digest(home), before, "the real home is still not written")

    w.write_config("[sandbox]\n  home-layer = off\n")
    r = sandbox("--", "sh", "-c", 'echo x > "$HOME/off.txt"', env=env)
    t.ok(r.returncode != 0 and "Read-only file system" in r.stderr, "home-layer = off: a read-only home as before",
         r.stderr)
    r = sandbox("--print-plan", "--", "true", env=env)
    t.ok("home:       read-only ([sandbox] home-layer = off)" in r.stdout, "and the plan says so", r.stdout)
    w.write_config("")
    remove_layers(layers)


def test_host_rehash_lock_is_not_the_sandboxes(t):
    """A pyenv rehash lock in the real home (another shell of the user's
    rehashing, or one killed while it did) is not one the sandbox's own
    rehash waits for: hidden in the layer, left in the real home."""
    home = make_home("rehash-lock")
    lock = os.path.join(home, ".pyenv", "shims", ".pyenv-shim")
    with open(lock, "w") as f:
        f.write("held by the host\n")
    env = {"HOME": home, "XDG_CACHE_HOME": os.path.join(w.base, "cache")}
    r = sandbox("--", "sh", "-c", 'test -e "$HOME/.pyenv/shims/.pyenv-shim" && echo LOCK-SEEN || echo LOCK-HIDDEN; '
                'cat "$HOME/.pyenv/shims/python"', env=env)
    t.ok("LOCK-HIDDEN" in r.stdout and "old shim" in r.stdout, "the host's rehash lock is hidden in the sandbox's "
         "layer, the shims are not", r.stdout + r.stderr)
    t.ok(os.path.exists(lock), "and the real lock is left alone")
    # A denied file a directory down in the home, with short names: hidden
    # in the layer like the rest (its name was once read from freed memory,
    # nothing was hidden, and the mask skipped: the file was readable).
    secret = os.path.join(home, ".a", "t")
    os.makedirs(os.path.dirname(secret))
    with open(secret, "w") as f:
        f.write("SECRET-NESTED\n")
    r = sandbox("--deny", secret, "--", "sh", "-c", 'cat "$HOME/.a/t" 2>&1; echo done', env=env)
    t.ok("SECRET-NESTED" not in r.stdout and "done" in r.stdout, "a denied file one directory down in the home "
         "cannot be read", r.stdout + r.stderr)
    # A kept layer whose shims directory a sandbox made a symlink out of
    # the home: hiding the lock at the next start follows no symlink, and
    # the file it points at stays.
    outside = tempfile.mkdtemp(prefix="crl-shims-", dir="/var/tmp")
    try:
        os.remove(lock)
        w.write_config("[sandbox]\n  home-layer = keep\n")
        sandbox("--", "sh", "-c", 'rm -rf "$HOME/.pyenv/shims" && ln -s %s "$HOME/.pyenv/shims"' % outside, env=env)
        planted = os.path.join(outside, ".pyenv-shim")
        with open(planted, "w") as f:
            f.write("not the layer's\n")
        r = sandbox("--", "sh", "-c", 'readlink "$HOME/.pyenv/shims"; echo ran', env=env)
        t.ok("ran" in r.stdout and os.path.exists(planted), "a kept layer's shims turned into a symlink: the lock "
             "it points at is not touched when the next sandbox starts", r.stdout + r.stderr)
    finally:
        w.write_config("")
        shutil.rmtree(outside, ignore_errors=True)
        remove_layers(os.path.join(w.state, "corral", "home-layers"))


def test_home_layer_with_state_in_home(t):
    """corral's state in the home itself (~/.local/state/corral, the
    default): the layer lives inside the home it covers, and no sandbox may
    see it, its own or another's."""
    home = make_home("state-in-home")
    env = {"HOME": home, "XDG_CACHE_HOME": os.path.join(w.base, "cache"), "XDG_STATE_HOME": ""}
    r = sandbox("--", "sh", "-c", 'echo x > "$HOME/new.txt" && cat "$HOME/new.txt"; '
                'ls "$HOME/.local/state/corral/" 2>&1 || echo STATE-HIDDEN', env=env)
    t.ok(r.stdout.startswith("x\n") and "STATE-HIDDEN" in r.stdout, "the layer works with corral's state in the home, "
         "and the state (the layers with it) stays hidden", r.stdout + r.stderr)
    t.ok(not os.path.exists(os.path.join(home, "new.txt")) and
         not os.path.exists(os.path.join(home, ".local", "state", "corral", "home-layers")),
         "nothing of it is left in the real home")


def test_home_layer_unavailable(t):
    """Where overlayfs cannot make the layer (here: corral's state on an
    overlay, which overlayfs refuses as an upper layer), sandboxes still
    run, with the read-only home of before, and the plan and doctor say
    so; the home never becomes writable instead."""
    if not shutil.which("unshare"):
        t.skip("a sandbox without its layer keeps a read-only home", "unshare is not installed")
        return
    base = os.path.join(w.scratch_home(), "unavailable")
    home = make_home("unavailable-home")
    for d in ("lower", "upper", "work", "state"):
        os.makedirs(os.path.join(base, d))
    before = tree_digest(home)
    w.write_config("[sandbox]\n  home-layer-in = disk\n")  # a layer in memory needs no state to write
    script = ('mount -t overlay overlay -o lowerdir={b}/lower,upperdir={b}/upper,workdir={b}/work,userxattr '
              '{b}/state || exit 99; '
              '"$0" sandbox -- sh -c \'echo x >> "$HOME/.bashrc" || echo HOME-RO; cat "$HOME/.ssh/id_test" '
              '2>/dev/null || echo SSH-HIDDEN\'; '
              '"$0" sandbox --print-plan -- true; "$0" doctor').format(b=base)
    env = dict(w.env, HOME=home, XDG_STATE_HOME=os.path.join(base, "state"),
               XDG_CACHE_HOME=os.path.join(w.base, "cache"))
    r = subprocess.run(["unshare", "-U", "-r", "-m", "sh", "-c", script, CORRAL], cwd=w.ws, capture_output=True,
                       text=True, timeout=120, env=env)
    if r.returncode == 99:
        w.write_config("")
        t.skip("a sandbox without its layer keeps a read-only home", "cannot mount an overlay here: " + r.stderr)
        return
    t.ok("HOME-RO" in r.stdout and "Read-only file system" in r.stderr and "SSH-HIDDEN" in r.stdout,
         "without its layer the sandbox runs, with a read-only home and ~/.ssh hidden", r.stdout + r.stderr)
    t.ok(("home:       %s: read-only: the kernel refuses an overlay" % home) in r.stdout,
         "--print-plan says the home stays read-only, and why", r.stdout)
    t.ok("NO   home layer (overlayfs)" in r.stdout and "a read-only home (overlayfs cannot be used here)" in r.stdout,
         "corral doctor says so too", r.stdout)
    t.eq(tree_digest(home), before, "the real home is not written")
    w.write_config("")


def test_placeholders_shared_whatever_the_environment(t):
    """Two sandboxes in one workspace started from different environments
    (one with $XDG_RUNTIME_DIR, one without, as a desktop shell and an ssh
    session or cron would): the one that made the workspace's placeholders
    ends first, and the other's sandbox still cannot make those names.  (A
    placeholder removed on the host takes the other sandbox's read-only
    mount over it with it.)"""
    ws = tempfile.mkdtemp(prefix="ph-env-", dir=w.scratch_home())
    rt = tempfile.mkdtemp(prefix="rt-", dir=w.scratch_home())
    env_a = dict(w.env, XDG_RUNTIME_DIR=rt)
    env_b = dict(w.env)
    env_b.pop("XDG_RUNTIME_DIR", None)
    a = subprocess.Popen([CORRAL, "sandbox", "--", "sh", "-c", "echo up; read x"], cwd=ws, env=env_a,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    b = None
    try:
        t.eq(a.stdout.readline(), b"up\n", "the first sandbox runs")
        t.ok(os.path.isdir(os.path.join(ws, ".codex")), "and its placeholder .codex is in the workspace")
        b = subprocess.Popen([CORRAL, "sandbox", "--", "sh", "-c",
                              "echo up; read x; mkdir -p .codex/x 2>/dev/null && echo planted > .codex/x/config.toml "
                              "&& echo PLANTED; echo done"], cwd=ws, env=env_b,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t.eq(b.stdout.readline(), b"up\n", "a second one, without $XDG_RUNTIME_DIR, runs beside it")
        out_a, err_a = a.communicate(b"\n", timeout=60)
        t.eq(a.returncode, 0, "the first ends (its launcher lets go of the placeholder)", err_a)
        t.ok(os.path.isdir(os.path.join(ws, ".codex")), "the placeholder stays: the second sandbox holds it")
        out_b, err_b = b.communicate(b"\n", timeout=60)
        t.ok(b"PLANTED" not in out_b and b"done" in out_b, "the second sandbox still cannot make .codex/x",
             out_b + err_b)
        t.ok(not os.path.exists(os.path.join(ws, ".codex", "x")), "nothing was planted on the host")
        t.ok(not os.path.exists(os.path.join(ws, ".codex")), "the last sandbox to end removes the placeholder")
    finally:
        for p in (a, b):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def test_a_process_left_behind_never_sees_the_placeholders_go(t):
    """`corral sandbox` lets go of its placeholders as soon as the init
    reports the command's status, while the kernel still tears the sandbox
    down: the init reports only once every other process of the sandbox is
    killed and reaped.  A process the command leaves behind, trying all the
    while to make .codex/x (possible only once the placeholder is gone from
    under its read-only mount), never gets there."""
    ws = tempfile.mkdtemp(prefix="ph-left-", dir=w.scratch_home())
    script = ("(setsid sh -c 'while :; do mkdir -p .codex/x 2>/dev/null && echo planted > .codex/x/config.toml "
              "&& exit 0; done' &); echo started")
    for _ in range(5):
        r = subprocess.run([CORRAL, "sandbox", "--", "sh", "-c", script], cwd=ws, env=w.env, capture_output=True,
                           timeout=60)
        if r.returncode != 0 or b"started" not in r.stdout or os.path.exists(os.path.join(ws, ".codex")):
            break
    t.ok(r.returncode == 0 and b"started" in r.stdout, "the command leaves a process trying to plant behind",
         r.stdout + r.stderr)
    t.ok(not os.path.exists(os.path.join(ws, ".codex")), "it never plants: the placeholder goes after it (5 runs)",
         os.listdir(ws))


def git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_git_in_the_workspace(t):
    if not shutil.which("git"):
        t.skip("git works in the workspace", "git is not installed")
        return
    repo = os.path.join(w.base, "repo")
    os.makedirs(repo)
    git("init", "-q", cwd=repo)
    with open(os.path.join(repo, "a.txt"), "w") as f:
        f.write("one\n")
    script = ("git -c user.name=t -c user.email=t@example.com add a.txt && "
              "git -c user.name=t -c user.email=t@example.com commit -qm first && "
              "git checkout -qb feature && echo two >> a.txt && "
              "git -c user.name=t -c user.email=t@example.com commit -qam second && echo GIT-OK; "
              "echo 'touch /tmp/pwned' > .git/hooks/pre-commit 2>/dev/null || echo HOOKS-RO; "
              "echo '[core] fsmonitor = x' >> .git/config 2>/dev/null || echo CONFIG-RO; "
              "mkdir .corral/rules 2>/dev/null || echo CORRAL-RO")
    r = sandbox("--", "sh", "-c", script, cwd=repo)
    out = r.stdout.split()
    t.ok("GIT-OK" in out, "git add, commit and checkout -b work inside the workspace", r.stdout + r.stderr)
    t.ok("HOOKS-RO" in out and not os.path.exists(os.path.join(repo, ".git/hooks/pre-commit")),
         ".git/hooks stays read-only and the host has no new hook")
    t.ok("CONFIG-RO" in out and "fsmonitor" not in open(os.path.join(repo, ".git/config")).read(),
         ".git/config stays read-only")
    t.ok("CORRAL-RO" in out, ".corral at the workspace root is read-only")
    log = git("log", "--oneline", "feature", cwd=repo).stdout.splitlines()
    t.eq(len(log), 2, "the commits are in the host repository")
    t.ok(not os.path.exists(os.path.join(repo, ".corral")) and not os.path.exists(os.path.join(repo, ".codex")),
         "the empty mount points made for .corral/.codex/.agents are gone afterwards")


def test_profiles_from_config(t):
    secret = os.path.join(w.base, "secret-dir")
    os.makedirs(secret, exist_ok=True)
    with open(os.path.join(secret, "key"), "w") as f:
        f.write("k")
    w.write_config('[profile "tight"]\n  base = read-only\n  deny = %s\n[env]\n  keep = MY_SETTING\n' % secret)
    r = sandbox("--profile", "tight", "--", "sh", "-c",
                'echo "$CORRAL_SANDBOX $MY_SETTING"; touch x 2>/dev/null || echo WS-RO; '
                'cat %s/key 2>/dev/null || echo DENIED' % secret, env={"MY_SETTING": "kept"})
    out = r.stdout.split()
    t.eq(out[:2], ["tight", "kept"], "a [profile] of the config runs, and [env] keep passes a variable")
    t.ok("WS-RO" in out, "its base read-only makes the workspace read-only")
    t.ok("DENIED" in out, "its deny entry hides a directory")
    r = sandbox("--profile", "nosuch", "--", "true")
    t.eq(r.returncode, 125, "an unknown profile is corral's error (125)")
    t.ok("unknown sandbox profile 'nosuch'" in r.stderr, "naming the profile", r.stderr)
    w.write_config('[sandbox]\n  wrte = /tmp\n')
    r = sandbox("--", "true")
    path = os.path.join(w.config, "corral", "config")
    t.ok(r.returncode == 125 and ("%s:2: unknown key 'wrte' in [sandbox]" % path) in r.stderr,
         "a bad [sandbox] key is reported with file:line", r.stderr)
    w.write_config("")


def test_errors_name_the_fix(t):
    missing = os.path.join(w.base, "does-not-exist")
    r = sandbox("-w", missing, "--", "true")
    t.ok(r.returncode == 125 and missing in r.stderr and "create it first" in r.stderr,
         "a missing write root is named with the fix", r.stderr)
    link = os.path.join(w.ws, "outside")
    os.symlink(w.config, link)
    r = sandbox("--deny", os.path.join(link, "x"), "--", "true")
    t.ok(r.returncode == 125 and "crosses writable symlink %s" % link in r.stderr,
         "a deny path through a writable symlink fails closed, naming both paths", r.stderr)
    os.unlink(link)
    if not shutil.which("unshare"):
        t.skip("a kernel without user namespaces is named", "unshare is not installed")
        return
    # Inside a user namespace of our own, allow no nested ones: corral must
    # refuse to run (never unsandboxed) and name the setting and the fix.
    r = subprocess.run(["unshare", "-U", "-r", "sh", "-c",
                        "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" sandbox -- true", CORRAL],
                       cwd=w.ws, capture_output=True, text=True, timeout=60, env=w.env)
    t.eq(r.returncode, 125, "without user namespaces the command does not run")
    t.ok("user.max_user_namespaces" in r.stderr and "sysctl -w" in r.stderr,
         "and the error names the setting and the fix", r.stderr)


def test_sessions_are_sandboxed(t):
    w.start_server()
    c = w.connect()
    # Neither /tmp (the sandbox's is a private tmpfs) nor the home (its
    # writes land in the home layer): writes there land harmlessly, so test
    # against the host's read-only view.
    outside = os.path.join("/var/tmp", ".corral-test-outside-%d" % os.getpid())
    r = c.call({"cmd": "exec", "command": 'echo "$CORRAL_SANDBOX"; echo x > %s || echo BLOCKED; echo ok > in.txt'
                % outside, "shell": "/bin/sh", "workdir": w.ws})
    t.eq(r.get("output", "").split("\n")[0], "workspace-write", "an agent's exec runs in workspace-write")
    t.ok("BLOCKED" in r.get("output", "") and not os.path.exists(outside), "and cannot write outside it")
    t.ok(os.path.exists(os.path.join(w.ws, "in.txt")), "but writes its workspace")
    r = c.call({"cmd": "exec", "argv": ["sh", "-c", 'echo "$CORRAL_SANDBOX"'], "workdir": w.ws, "profile": "full"})
    t.eq(r.get("output"), "full\n", "full must be asked for, and then applies")
    ls = c.call({"cmd": "ls"})
    t.eq(sorted({s["profile"] for s in ls["sessions"]}), ["full", "workspace-write"], "ls shows each profile")
    r = c.call({"cmd": "exec", "argv": ["true"], "workdir": w.ws, "profile": "nosuch"})
    t.eq(r.get("error", {}).get("code"), "spawn_failed", "an unknown profile is refused")
    c.close()
    w.stop()


PREBUILT_RUN = r"""
me=$(mktemp -d ./run.XXXXXX) || exit 9
tag=$(basename "$me")
echo secret > "/tmp/mine-$tag"
echo secret > "/dev/shm/mine-$tag"
echo secret > "$HOME/mine-$tag"
sleep 1000 &
bg=$!
# Both runs are alive, each with its sleep, before either looks.
n=0
while [ "$(ls -d run.* | wc -l)" -lt 2 ]; do
    n=$((n + 1)); [ $n -gt 600 ] && exit 8
    sleep 0.05
done
ls -A /tmp > "$me/tmp"
ls -A /dev/shm > "$me/shm"
for f in /proc/[0-9]*/cmdline; do
    [ "$(tr '\0' ' ' < "$f" 2>/dev/null)" = "sleep 1000 " ] && echo "$f"
done | wc -l > "$me/sleeps"
ls /proc/self/fd > "$me/fds"
ls /dev/pts > "$me/pts"
ls -A "$HOME" | grep '^mine-' > "$me/home"
echo > "$me/done"
while [ "$(ls run.*/done | wc -l)" -lt 2 ]; do
    n=$((n + 1)); [ $n -gt 1200 ] && exit 7
    sleep 0.05
done
kill "$bg"
"""


def test_prebuilt_sandbox_keeps_commands_apart(t):
    """Commands started from one pre-built sandbox (corral sandbox --reuse,
    the mechanism the server's one-shot commands use) share the view but
    not /tmp, /dev/shm, devpts, processes or fds: two run at once, each
    leaves a file in /tmp and /dev/shm and a process running, and neither
    sees the other's."""
    ws = tempfile.mkdtemp(prefix="prebuilt-", dir=w.ws)
    r = sandbox("--reuse", "2", "--parallel", "--", "sh", "-c", PREBUILT_RUN, cwd=ws)
    t.eq(r.returncode, 0, "both commands ran from the pre-built sandbox", r.stderr)
    runs = sorted(d for d in os.listdir(ws) if d.startswith("run."))
    t.eq(len(runs), 2, "each made its own directory in the shared workspace")
    for d in runs:
        def read(name):
            with open(os.path.join(ws, d, name)) as f:
                return f.read().split()
        t.eq([x for x in read("tmp") if x.startswith("mine-")], ["mine-" + d],
             "%s sees only its own file in /tmp" % d)
        t.eq(read("shm"), ["mine-" + d], "and in /dev/shm")
        t.eq(read("sleeps"), ["1"], "and only its own background process")
        t.eq(sorted(read("fds")), ["0", "1", "2", "3"], "and no descriptor but its stdio (3 is ls's own)")
        t.eq(read("pts"), ["ptmx"], "and a devpts of its own")
        t.eq(read("home"), ["mine-" + d], "and a home layer of its own")
    # One after the other: nothing of the first is left for the second.
    ws2 = tempfile.mkdtemp(prefix="prebuilt-seq-", dir=w.ws)
    r = sandbox("--reuse", "2", "--", "sh", "-c",
                'if [ -e first ]; then ls -A /tmp /dev ~ > second; '
                'else touch /tmp/left /dev/left ~/left first; fi', cwd=ws2)
    t.eq(r.returncode, 0, "two commands one after the other", r.stderr)
    with open(os.path.join(ws2, "second")) as f:
        t.ok("left" not in f.read().split(), "the second finds nothing the first left in /tmp, /dev or the home")
    t.ok(not os.path.exists(os.path.expanduser("~/left")), "and the real home is not written")
    # As confined as any sandbox.
    r = sandbox("--reuse", "1", "--", "sh", "-c",
                'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; '
                'touch /etc/corral-escape 2>/dev/null && echo wrote-etc; '
                'unshare -U true 2>/dev/null && echo nested-userns; '
                'ls /proc | grep -c "^[0-9]"', cwd=ws2)
    out = r.stdout.split()
    t.ok("wrote-etc" not in out and "nested-userns" not in out, "it cannot write the host or nest namespaces",
         r.stdout)
    t.ok("CapEff:" in out and out[out.index("CapEff:") + 1] == "0000000000000000", "holds no capability", r.stdout)
    t.ok("NoNewPrivs:" in out and out[out.index("NoNewPrivs:") + 1] == "1", "no_new_privs", r.stdout)
    t.ok("Seccomp:" in out and out[out.index("Seccomp:") + 1] == "2", "under the filter", r.stdout)
    t.ok(out and int(out[-1]) <= 4, "and sees only its own processes", r.stdout)


def test_as_an_unprivileged_user(t):
    """The home layer and loopback from an ordinary user's sandbox (root in
    a user namespace is still uid 0 for permission checks; an ordinary user
    takes other paths through the kernel, overlayfs's included): run as
    root, this file runs itself again as a temporary user."""
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, helpers=[os.path.join(here, "harness.py")])


# As the temporary user, the tests of what the sandbox lets an ordinary
# user do; the rest needs nothing of root.
AS_USER = [test_loopback_inside_the_sandbox, test_home_layer, test_home_layer_with_state_in_home,
           test_home_layer_unavailable, test_prebuilt_sandbox_keeps_commands_apart,
           test_placeholders_shared_whatever_the_environment]

try:
    run_tests(Tap(), AS_USER if os.environ.get("CORRAL_AS_USER") else
              [test_status_and_stdio, test_stale_cgroups_are_removed, test_print_plan, test_loopback_inside_the_sandbox, test_private_tmp_is_explained,
               test_home_layer, test_host_rehash_lock_is_not_the_sandboxes,
               test_home_layer_with_state_in_home, test_home_layer_unavailable, test_git_in_the_workspace, test_profiles_from_config,
               test_errors_name_the_fix, test_sessions_are_sandboxed, test_prebuilt_sandbox_keeps_commands_apart,
               test_placeholders_shared_whatever_the_environment,
               test_a_process_left_behind_never_sees_the_placeholders_go, test_as_an_unprivileged_user])
finally:
    for h in homes:
        remove_layers(h)
    w.cleanup()
