#!/usr/bin/env python3
"""corral -H ssh://... and CORRAL_HOST (issue 20, phase 1): the CLI's verbs
and corral mcp against another machine's server, over OpenSSH.

The other machine is this one: Debian's sshd on 127.0.0.1 (a free port, a
host key and a user key made here, in a scratch directory), whose
authorized_keys forces `corral serve-stdio` with runtime, state and config
directories of their own, so the "remote" corral server is not the local
one.  The client's ssh reads a config of its own (CORRAL_SSH_COMMAND="ssh
-F scratch/ssh_config").  Through that: serve-stdio's relay, exec (the
session is the remote server's, not the local one's), send and poll,
kill, an escalation raised there and answered with approvals/approve and
deny, a network host asked there (its proxy) and answered the same way,
diff and revert of a remote command, corral mcp with CORRAL_HOST
driving a remote exec, a host that cannot be reached (ssh's own message,
then one line saying what corral ran), hostile hosts refused before any
ssh runs, CORRAL_HOST, [hosts] names and [hosts] ssh-command, and the
verbs refused there.  As root, then (sshd run by that user on a port of
its own) as a temporary unprivileged user.  When sshd is missing or does
not start, the tests report SKIP with the reason."""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import CORRAL, TIMEOUT, Tap, World, pids_whose_argv, run_tests, wait_until
from sshlab import ME, SshLab, free_port

t = Tap()

RULES = 'prefix_rule(pattern=["echo", "deploy"], decision="prompt", justification="deploys to production")\n'

local = World()
local.start_server()
remote = World()  # the other machine's corral: directories of its own
os.makedirs(os.path.join(remote.config, "corral", "rules"), exist_ok=True)
with open(os.path.join(remote.config, "corral", "rules", "user.rules"), "w") as f:
    f.write(RULES)

lab = SshLab()
lab.add("box", remote)
scratch = lab.scratch
why_not = None  # the reason the remote tests skip


def start_sshd():
    """sshd on 127.0.0.1 for the remote corral; sets why_not when it cannot."""
    global why_not, PORT, HOST, ENV, SSH_CONFIG
    lab.start()
    why_not = lab.why_not
    if why_not:
        return
    PORT = lab.port
    HOST = lab.url()
    ENV = lab.env
    SSH_CONFIG = lab.config


def stop_all():
    lab.stop()
    remote.cleanup()
    local.cleanup()


def corral_h(*args, env=None, input=None, host=None):
    """corral -H HOST ARGS... from the local world."""
    e = dict(ENV)
    e.update(env or {})
    return local.corral("-H", host or HOST, *args, env=e, input=input)


def remote_sessions():
    c = remote.connect("test")
    r = c.call({"cmd": "ls"})
    c.close()
    return r["sessions"]


def local_sessions():
    c = local.connect("test")
    r = c.call({"cmd": "ls"})
    c.close()
    return r["sessions"]


def newest_remote():
    return max(remote_sessions(), key=lambda s: s["use"])


def ssh_children():
    """Processes running this test's ssh config: a verb that has returned
    leaves none."""
    return pids_whose_argv(lambda argv: os.path.basename(argv[0]) in (b"ssh", b"sh") and
                           SSH_CONFIG.encode() in b" ".join(argv))


def needs_sshd(fn):
    def wrapped(tap):
        if why_not:
            tap.skip(fn.__name__, why_not)
            return
        fn(tap)
    wrapped.__name__ = fn.__name__
    return wrapped


# ---- serve-stdio, no ssh ----------------------------------------------------------------


def test_serve_stdio_relays(t):
    lines = (json.dumps({"cmd": "hello", "protocol": 1, "client": "relay", "id": 1}) + "\n" +
             json.dumps({"cmd": "ls", "id": 2}) + "\n")
    p = subprocess.run([CORRAL, "serve-stdio"], input=lines.encode(), capture_output=True, env=remote.env,
                       timeout=TIMEOUT)
    out = [json.loads(x) for x in p.stdout.decode().splitlines() if x.strip()]
    t.eq(p.returncode, 0, "serve-stdio exits 0 when its input ends", p.stderr)
    t.eq([(m.get("id"), m.get("ok")) for m in out], [(1, True), (2, True)],
         "it relays the requests to the server and the replies back, byte for byte", p.stdout)
    t.ok(os.path.exists(remote.socket_path), "it started that machine's server, as verbs do when none answers",
         remote.socket_path)
    long_dir = os.path.join(remote.base, "x" * 120)
    os.makedirs(long_dir, mode=0o700)
    p = subprocess.run([CORRAL, "serve-stdio"], input=b"", capture_output=True, timeout=TIMEOUT,
                       env=dict(remote.env, XDG_RUNTIME_DIR=long_dir))
    err = p.stderr.decode()
    t.ok(p.returncode != 0 and len(err.strip().splitlines()) == 1 and "serve-stdio" in err and "too long" in err,
         "when it cannot reach the server: non-zero, and one line on stderr saying why", (p.returncode, err))
    r = local.corral("-H", "ssh://box", "serve-stdio")
    t.ok(r.returncode == 2 and "this machine only" in r.stderr, "serve-stdio under -H is refused", r.stderr)


# ---- refused before anything runs ----------------------------------------------------------


def test_hostile_hosts_refused(t):
    marker = os.path.join(scratch, "ssh-ran")
    env = {"CORRAL_SSH_COMMAND": "touch %s; ssh" % marker}
    for spec, value in (("ssh://-oProxyCommand=x", "-oProxyCommand=x"), ("ssh://-lroot@box", "-lroot"),
                        ("ssh://me@-p22", "-p22"), ("ssh://bo x", "bo x"), ("ssh://box\tevil", "box\\tevil"),
                        ("ssh://box:99999", "99999")):
        r = local.corral("-H", spec, "ls", env=env)
        t.ok(r.returncode == 2 and ("'%s'" % value) in r.stderr, "-H %r is refused, naming the value" % spec,
             r.stderr)
    r = local.corral("ls", env=dict(env, CORRAL_HOST="ssh://-oProxyCommand=sh"))
    t.ok(r.returncode == 2 and "-oProxyCommand=sh" in r.stderr, "so is CORRAL_HOST's", r.stderr)
    t.ok(not os.path.exists(marker), "and no ssh command ran for any of them")


def test_verbs_refused_there(t):
    for verb, words in (("sandbox", "this machine only"), ("server", "this machine only")):
        r = local.corral("-H", "ssh://box", verb, "1")
        t.ok(r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1,
             "corral -H HOST %s is refused: %s" % (verb, words), r.stderr)
    r = local.corral("sandbox", "--", "true", env={"CORRAL_HOST": "ssh://box"})
    t.ok(r.returncode == 2 and "CORRAL_HOST" in r.stderr, "under CORRAL_HOST too, saying so", r.stderr)
    r = local.corral("-H", "nosuchname", "ls")
    t.ok(r.returncode == 2 and "[hosts]" in r.stderr, "a name that is no URL and not in [hosts] is refused",
         r.stderr)
    r = local.corral("-H", "nosuchname", "attach")
    t.ok(r.returncode == 2 and "[hosts]" in r.stderr, "so is the screen's (before it opens)", r.stderr)
    r = local.corral("-H", "ssh://-oProxyCommand=x", "attach")
    t.ok(r.returncode == 2 and "-oProxyCommand=x" in r.stderr, "and a hostile URL for the screen", r.stderr)
    r = local.corral("-H", "ssh://box", "mcp")
    t.ok(r.returncode == 2 and "-C DIR" in r.stderr, "corral mcp under -H wants -C DIR, a directory there",
         r.stderr)
    r = local.corral("-H", "ssh://box", "exec", "-C", "relative", "--", "true")
    t.ok(r.returncode == 1 and "absolute path" in r.stderr, "exec -C under -H wants that machine's absolute path",
         r.stderr)


def test_not_the_protocol(t):
    # What a login script prints before serve-stdio (a banner, colours) is
    # no reply to the hello: said as such, made visible, and ssh is reaped.
    r = local.corral("-H", "ssh://box", "ls",
                     env={"CORRAL_SSH_COMMAND": "printf 'Welcome\\033[31m\\n'; cat >/dev/null;"})
    t.ok(r.returncode == 1 and "not corral's protocol" in r.stderr and "corral ran: sh -c" in r.stderr,
         "a link that carries something else fails, saying so and what corral ran", r.stderr)
    t.ok("\x1b" not in r.stderr, "what came is shown made visible, not raw", r.stderr)


# ---- through sshd ---------------------------------------------------------------------------


@needs_sshd
def test_exec_runs_there(t):
    r = corral_h("exec", "-C", remote.ws, "--", "echo", "hi-from-there")
    t.eq(r.returncode, 0, "corral -H HOST exec runs", r.stderr)
    t.ok(r.stdout.rstrip().endswith("hi-from-there") and "Process exited with code 0" in r.stdout,
         "and prints the command's envelope and output", r.stdout)
    there = [s for s in remote_sessions() if s["command"] == ["echo", "hi-from-there"]]
    t.eq(len(there), 1, "the session is the remote server's", remote_sessions())
    here = [s for s in local_sessions() if s["command"] == ["echo", "hi-from-there"]]
    t.eq(here, [], "and not the local one's")
    t.ok(there and there[0]["cwd"] == remote.ws, "it ran in -C's directory there", there)
    ls = corral_h("ls", "--json")
    ids = [s["id"] for s in json.loads(ls.stdout or "{}").get("sessions", [])]
    t.ok(there and there[0]["id"] in ids, "corral -H HOST ls lists it", ls.stdout + ls.stderr)
    t.eq(ssh_children(), [], "no ssh is left running after the verbs")
    r = corral_h("exec", "--", "true")
    t.ok(r.returncode == 1 and "home directory" in r.stderr,
         "without -C the command runs in that machine's home, which a writable sandbox refuses, saying so",
         r.stderr)


@needs_sshd
def test_send_poll_kill(t):
    r = corral_h("exec", "-t", "-y", "300", "-C", remote.ws, "--", "sh", "-c", "read l; echo got:$l; sleep 600")
    m = re.search(r"Process running with session ID (\d+)", r.stdout)
    t.ok(m, "a command still running gives its session id", r.stdout + r.stderr)
    if not m:
        return
    sid = m.group(1)
    r = corral_h("send", "--enter", "-y", "2000", sid, "hello")
    out = r.stdout
    t.eq(r.returncode, 0, "corral -H send writes to it", r.stderr)
    out += corral_h("poll", "-y", "2000", sid).stdout if "got:hello" not in out else ""
    t.ok("got:hello" in out, "and send/poll see its answer", out)
    r = corral_h("kill", sid)
    t.eq(r.returncode, 0, "corral -H kill ends it", r.stderr)
    s = [x for x in remote_sessions() if str(x["id"]) == sid]
    t.ok(s and s[0]["state"] != "running", "the remote session has ended", s)


@needs_sshd
def test_approvals_there(t):
    watcher = remote.connect("watcher")
    watcher.call({"cmd": "subscribe"})
    e = dict(local.env, **ENV)
    p = subprocess.Popen([CORRAL, "-H", HOST, "exec", "-C", remote.ws, "--", "echo", "deploy"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    a = watcher.next_event(lambda m: m.get("event") == "approval")["approval"]
    t.eq(a["argv"], ["echo", "deploy"], "the escalation is raised on the remote server")
    listed = corral_h("approvals", "--json")
    t.ok(a["id"] in [x["id"] for x in json.loads(listed.stdout or "[]")], "corral -H approvals lists it",
         listed.stdout + listed.stderr)
    r = corral_h("approve", str(a["id"]))
    t.eq(r.returncode, 0, "corral -H approve answers it", r.stderr)
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok(p.returncode == 0 and out.rstrip().endswith("deploy"), "the remote command then runs", out + err)
    t.ok("waiting for a human to approve request %d" % a["id"] in err, "and the exec said it waited, as locally",
         err)
    p = subprocess.Popen([CORRAL, "-H", HOST, "exec", "-C", remote.ws, "--", "echo", "deploy"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    a = watcher.next_event(lambda m: m.get("event") == "approval")["approval"]
    corral_h("deny", "--note", "not today", str(a["id"]))
    out, err = p.communicate(timeout=TIMEOUT)
    t.ok(p.returncode == 1 and "not today" in err, "corral -H deny refuses one, with the note", err)
    watcher.close()


@needs_sshd
def test_network_host_there(t):
    """A sandboxed command on the other machine reaching for a new host
    through its proxy: the question is that machine's, listed and answered
    with corral -H."""
    import proxyservers as ps
    web = ps.WebServer("there")
    try:
        watcher = remote.connect("watcher")
        watcher.call({"cmd": "subscribe"})
        url = "http://localhost:%d/info" % web.port
        curl = "curl -sS -o /dev/null -w '%%{http_code}\\n' --max-time %d --noproxy '' -x http://127.0.0.1:3128 " % (
            TIMEOUT - 5)
        e = dict(local.env, **ENV)
        cmd = [CORRAL, "-H", HOST, "exec", "--raw", "-C", remote.ws, "--", "sh", "-c", curl + url]
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        a = watcher.next_event(lambda m: m.get("event") == "approval" and m["approval"].get("kind") == "network")
        a = a["approval"]
        t.eq((a.get("host"), a.get("port")), ("localhost", web.port), "the host is asked on the other machine")
        listed = corral_h("approvals")
        t.ok("network access to: localhost, port %d" % web.port in listed.stdout,
             "corral -H approvals shows the host request", listed.stdout + listed.stderr)
        corral_h("approve", str(a["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(out.strip().endswith("200") and len(web.requests) == 1, "approved there, the connection goes through",
             out + err)
        p = subprocess.Popen(cmd[:-1] + [curl + url.replace("localhost", "127.0.0.1")], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        a = watcher.next_event(lambda m: m.get("event") == "approval" and m["approval"].get("kind") == "network")
        corral_h("deny", str(a["approval"]["id"]))
        out, err = p.communicate(timeout=TIMEOUT)
        t.ok(out.strip().endswith("403") and len(web.requests) == 1, "denied there, it does not", out + err)
        watcher.close()
    finally:
        web.close()


@needs_sshd
def test_diff_revert_there(t):
    target = os.path.join(remote.ws, "made-there.txt")
    r = corral_h("exec", "-C", remote.ws, "--", "sh", "-c", "echo made-there > made-there.txt")
    t.eq(r.returncode, 0, "a remote command writes a file", r.stderr)
    sid = str(newest_remote()["id"])
    r = corral_h("diff", sid)
    t.ok(r.returncode == 0 and "made-there.txt" in r.stdout and "+made-there" in r.stdout,
         "corral -H diff shows what it changed there", r.stdout + r.stderr)
    r = corral_h("revert", sid, "1")
    t.ok(r.returncode == 0 and not os.path.exists(target), "corral -H revert undoes it there",
         r.stdout + r.stderr)
    r = corral_h("diff", "999999")
    t.ok(r.returncode == 1 and "that machine" in r.stderr, "a session that server does not have is not read "
         "from this machine's files", r.stderr)


def test_records_command(t):
    """The records command hands out only a session's events and recording
    and approvals.jsonl, by name, never through a symlink."""
    c = local.connect("test")
    r = c.call({"cmd": "exec", "argv": ["echo", "recorded"], "workdir": local.ws, "yield_time_ms": 10000})
    sid = str(r.get("session_id") or r.get("session") or "")
    listed = c.call({"cmd": "records"})
    t.ok(sid and any(x["name"] == sid for x in listed.get("sessions", [])),
         "records lists the recorded sessions", (r, listed))
    ev = c.call({"cmd": "records", "session": sid, "file": "events.jsonl"})
    path = os.path.join(local.session_dir(sid), "events.jsonl") if sid else ""
    t.ok(sid and ev.get("size") == os.path.getsize(path) and
         base64.b64decode(ev.get("data_b64", "")) == open(path, "rb").read(),
         "and a session's events.jsonl, whole, with its size", ev)
    for bad, why in (({"session": "../%s" % sid, "file": "events.jsonl"}, "a session name with a path"),
                     ({"session": sid, "file": "../../config"}, "a file outside the three"),
                     ({"file": "events.jsonl"}, "a session's file without a session"),
                     ({"session": sid, "file": "events.jsonl", "offset": -1}, "a negative offset")):
        r = c.call(dict({"cmd": "records"}, **bad))
        t.eq((r.get("error") or {}).get("code"), "bad_request", "refused: " + why, r)
    d = local.session_dir(sid)
    os.rename(os.path.join(d, "output.cast"), os.path.join(d, "output.cast.real"))
    os.symlink("/etc/passwd", os.path.join(d, "output.cast"))
    r = c.call({"cmd": "records", "session": sid, "file": "output.cast"})
    t.ok("error" in r and "root:" not in json.dumps(r), "a record file swapped for a symlink is not followed", r)
    os.unlink(os.path.join(d, "output.cast"))
    os.rename(os.path.join(d, "output.cast.real"), os.path.join(d, "output.cast"))
    # A glance (another machine's E): what the log says, again when it changed.
    live = c.call({"cmd": "new", "argv": ["sh", "-c", "read x"], "cwd": local.ws, "name": "glanced"})["session"]["id"]

    def glanced():
        r = c.call({"cmd": "records", "glance": 100})
        return [x.get("glance") for x in r.get("sessions", []) if x["name"] == str(live)][0]
    g = glanced()
    t.ok(g and (g.get("id"), g.get("name"), g.get("exited")) == (live, "glanced", False),
         "records with glance: a session's id, name and no end yet", g)
    c.call({"cmd": "input", "session": live, "data": "\r"})
    t.ok(wait_until(lambda: (glanced() or {}).get("exited")), "and its end once its log says so", glanced())
    # A log whose end is written within the same tick of the clock keeps
    # its mtime: a glance of a log changed just now is not remembered.
    live = c.call({"cmd": "new", "argv": ["sh", "-c", "read x"], "cwd": local.ws, "name": "glanced-2"})["session"]["id"]
    log = os.path.join(local.session_dir(live), "events.jsonl")
    before = os.stat(log).st_mtime_ns
    g = glanced()
    t.ok(g and not g.get("exited"), "a fresh session's glance: no end yet", g)
    c.call({"cmd": "input", "session": live, "data": "\r"})
    wait_until(lambda: '"exited"' in open(log).read())
    os.utime(log, ns=(os.stat(log).st_atime_ns, before))  # as if in the same tick
    t.ok((glanced() or {}).get("exited"), "its end is glanced though the log's mtime is as it was", glanced())
    c.close()


@needs_sshd
def test_records_there(t):
    """log, replay and export of that machine's sessions, copied into a
    private directory that is gone afterwards."""
    tmp = os.path.join(scratch, "tmp-records")
    os.makedirs(tmp, exist_ok=True)
    env = {"TMPDIR": tmp}
    r = corral_h("exec", "-C", remote.ws, "--", "sh", "-c", "echo recorded-there-$((6*7))")
    t.eq(r.returncode, 0, "a command runs there", r.stderr)
    sid = str(newest_remote()["id"])
    r = corral_h("log", env=env)
    t.ok(r.returncode == 0 and ("the records of " + HOST) in r.stdout and
         any(x.split() and x.split()[0] == sid for x in r.stdout.splitlines()),
         "corral -H HOST log lists that machine's sessions, saying whose", r.stdout + r.stderr)
    r = corral_h("log", sid, env=env)
    t.ok(r.returncode == 0 and "recorded-there-$((6*7))" in r.stdout and "command" in r.stdout,
         "corral -H HOST log SESSION shows its commands", r.stdout + r.stderr)
    r = corral_h("replay", "--speed", "0", sid, env=env)
    t.ok(r.returncode == 0 and "recorded-there-42" in r.stdout, "corral -H HOST replay plays its recording",
         r.stdout + r.stderr)
    r = corral_h("exec", "-C", remote.ws, "--raw", "--", "seq", "1", "150000", env=env)
    big = str(newest_remote()["id"])
    r = corral_h("replay", "--speed", "0", big, env=env)
    cast = os.path.join(remote.session_dir(big), "output.cast")
    t.ok(r.returncode == 0 and "149999\r\n150000" in r.stdout.replace("\n", "\r\n").replace("\r\r", "\r") and
         os.path.getsize(cast) > 3 * 256 * 1024,
         "a recording of several chunks (over 768 KiB) arrives whole",
         (r.stdout[-300:], r.stderr))
    out = os.path.join(scratch, "there.tar.gz")
    r = corral_h("export", "-o", out, sid, env=env)
    names = subprocess.run(["tar", "tzf", out], capture_output=True, text=True).stdout.split() \
        if os.path.exists(out) else []
    t.ok(r.returncode == 0 and "corral-%s/events.jsonl" % sid in names and "corral-%s/output.cast" % sid in names,
         "corral -H HOST export writes its archive here", (r.stdout + r.stderr, names))
    cast = os.path.join(remote.session_dir(sid), "output.cast")
    os.rename(cast, cast + ".away")
    r = corral_h("replay", "--speed", "0", sid, env=env)
    os.rename(cast + ".away", cast)
    t.ok(r.returncode == 1 and "has no recording in the records of " + HOST in r.stderr,
         "a session without a recording there is said to have none", r.stderr)
    r = corral_h("log", "999999", env=env)
    t.ok(r.returncode == 1 and "no session 999999 is recorded on " + HOST in r.stderr,
         "a session that machine has not recorded is said to be missing there", r.stderr)
    r = corral_h("log", "/etc", env=env)
    t.ok(r.returncode == 1 and "not a path" in r.stderr, "a path is refused under -H (it names this machine's "
         "files)", r.stderr)
    t.eq(os.listdir(tmp), [], "the private copies are gone after each verb")
    # One a killed run left (its pid gone) is removed by the next run; one
    # of a live run, or not private, or another's, is not.
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = os.path.join(tmp, "corral-records-%d-abcdef" % gone.pid)
    live = os.path.join(tmp, "corral-records-%d-abcdef" % os.getpid())
    shared = os.path.join(tmp, "corral-records-%d-ghijkl" % gone.pid)
    for d, mode in ((stale, 0o700), (live, 0o700), (shared, 0o755)):
        os.makedirs(os.path.join(d, "corral", "sessions", "7"))
        open(os.path.join(d, "corral", "sessions", "7", "events.jsonl"), "w").close()
        os.chmod(d, mode)
    r = corral_h("log", sid, env=env)
    t.ok(r.returncode == 0 and sorted(os.listdir(tmp)) == sorted([os.path.basename(live), os.path.basename(shared)]),
         "a private copy a killed run left is removed by the next; a live run's and a shared one are left",
         (r.stderr, os.listdir(tmp)))
    shutil.rmtree(live)
    shutil.rmtree(shared)
    t.eq(ssh_children(), [], "and no ssh is left running")


@needs_sshd
def test_mcp_there(t):
    from mcplib import Bridge
    b = Bridge(local, ("-C", remote.ws), env=dict(ENV, CORRAL_HOST=HOST))
    b.initialize()
    r = b.tool("exec_command", {"cmd": "echo via-mcp-$((40+2))"})
    sc = r.get("structuredContent", {})
    t.ok(sc.get("exit_code") == 0 and sc.get("output", "").endswith("via-mcp-42\n"),
         "corral mcp with CORRAL_HOST runs an agent's command on the remote server", r)
    there = [s for s in remote_sessions() if s["client"] == "codex"]
    t.ok(there and there[-1]["cwd"] == remote.ws, "as a session of the remote server, in -C's directory", there)
    t.eq([s for s in local_sessions() if s["client"] == "codex"], [], "not of the local one")
    b.close_stdin()
    b.p.wait(TIMEOUT)
    t.eq(b.p.returncode, 0, "the bridge ends at the end of its input", b.stderr())
    t.eq(ssh_children(), [], "and leaves no ssh running")


@needs_sshd
def test_unreachable_host(t):
    port = free_port()
    r = local.corral("-H", "ssh://%s@127.0.0.1:%d" % (ME, port), "ls", env=ENV)
    lines = r.stderr.strip().splitlines()
    ran = [x for x in lines if "corral ran:" in x]
    t.eq(r.returncode, 1, "a host that cannot be reached fails with the status of a server that cannot", r.stderr)
    t.ok("Connection refused" in r.stderr and lines and "corral ran" not in lines[0],
         "ssh's own message reaches the user first, unchanged", r.stderr)
    t.ok(len(ran) == 1 and ("ssh -F %s" % SSH_CONFIG) in ran[0] and "-p %d" % port in ran[0] and
         "serve-stdio" in ran[0], "then one line with what corral ran", r.stderr)
    t.eq(ssh_children(), [], "and no ssh is left behind")


@needs_sshd
def test_corral_host_and_names(t):
    want = sorted(s["id"] for s in remote_sessions())
    r = local.corral("ls", "--json", env=dict(ENV, CORRAL_HOST=HOST))
    t.eq(sorted(s["id"] for s in json.loads(r.stdout or "{}").get("sessions", [])), want,
         "with CORRAL_HOST, corral ls lists the remote server's sessions", r.stderr)
    local.write_config("[hosts]\nbox = %s\nssh-command = ssh -F %s\n" % (HOST, SSH_CONFIG))
    try:
        r = local.corral("-H", "box", "ls", "--json")
        t.eq(sorted(s["id"] for s in json.loads(r.stdout or "{}").get("sessions", [])), want,
             "-H NAME is [hosts]'s NAME, reached with [hosts] ssh-command", r.stderr)
        r = local.corral("ls", "--json", env={"CORRAL_HOST": "box"})
        t.eq(sorted(s["id"] for s in json.loads(r.stdout or "{}").get("sessions", [])), want,
             "CORRAL_HOST takes a name too", r.stderr)
    finally:
        local.write_config("")


def test_as_an_unprivileged_user(t):
    """The same as the temporary user, with an sshd of its own (root only;
    the user's run skips this)."""
    if os.geteuid() != 0 or os.environ.get("CORRAL_AS_USER"):
        return
    if why_not:
        t.skip("the run as an unprivileged user", why_not)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, ".."))
    from unprivileged import run_script_as_user
    run_script_as_user(t, os.path.abspath(__file__), CORRAL, shell="/bin/sh",
                       helpers=[os.path.join(here, "harness.py"), os.path.join(here, "mcplib.py"),
                                os.path.join(here, "sshlab.py"), os.path.join(here, "proxyservers.py")])


try:
    start_sshd()
    if why_not:
        t.diag("the tests through sshd skip: " + why_not)
    run_tests(t, [test_serve_stdio_relays, test_hostile_hosts_refused, test_verbs_refused_there, test_not_the_protocol,
                  test_records_command, test_exec_runs_there, test_send_poll_kill, test_approvals_there,
                  test_network_host_there, test_diff_revert_there, test_records_there,
                  test_mcp_there, test_unreachable_host, test_corral_host_and_names, test_as_an_unprivileged_user])
finally:
    stop_all()
