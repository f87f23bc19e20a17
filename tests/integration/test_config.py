#!/usr/bin/env python3
"""The config file through the real CLI and a real server: every error of
the file in one run (file, line, value, fix), errors only in what a verb
does not read never stop it, and a running server reads the file again on
`corral reload` and on SIGHUP, keeping its settings when the file has
errors in what it reads."""
import os
import signal

from harness import Tap, World, run_tests

TYPOS = ("[ui]\nsidebar-widht = 30\n"
         "[limits]\nexec-lifetime = 5x\n"
         "[sandbx]\nwrite = /var/tmp\nread = /var/tmp\n"
         "[approvals]\ntimeout = soon\n")


def greeting(w):
    """What the server's [env] set gives a command it runs."""
    r = w.corral("exec", "--raw", "-C", w.ws, "--", "sh", "-c", 'echo "g=$GREETING"')
    return r.stdout.strip()


def test_all_errors_in_one_run(t):
    w = World(config=TYPOS)
    try:
        path = os.path.join(w.config, "corral", "config")
        r = w.corral("server")
        t.eq(r.returncode, 1, "a config with errors in what the server reads: the server does not start")
        err = r.stderr
        for line, what in [(4, "limits.exec-lifetime: '5x' is not a duration (e.g. "),
                           (6, "unknown section [sandbx] (known: "),
                           (9, "approvals.timeout: 'soon' is not a duration (e.g. ")]:
            t.ok("%s:%d: %s" % (path, line, what) in err, "the one run names %s:%d" % (path, line), err)
        t.eq(err.count("unknown section"), 1, "an unknown section is named once, not once per key", err)
        r = w.corral("sandbox", "--", "true")
        t.ok(r.returncode != 0 and "%s:6: unknown section [sandbx]" % path in r.stderr
             and "%s:2: unknown key 'sidebar-widht'" % path in r.stderr,
             "corral sandbox lists every error and refuses a misspelt sandbox section", r.stderr)
    finally:
        w.cleanup()


def test_screen_only_errors_do_not_stop_verbs(t):
    w = World(config="[ui]\nsidebar-widht = 30\n[keys]\nfrobnicate = F\n[env]\nset = GREETING=hello\n")
    try:
        path = os.path.join(w.config, "corral", "config")
        w.start_server()
        t.eq(greeting(w), "g=hello", "the server starts with the rest of a file whose errors are the screen's")
        r = w.corral("sandbox", "--", "true")
        t.eq(r.returncode, 0, "corral sandbox runs: it does not read [ui] or [keys]", r.stderr)
        t.ok("%s:2: unknown key 'sidebar-widht' in [ui]" % path in r.stderr
             and "%s:4: unknown action 'frobnicate' in [keys]" % path in r.stderr
             and "does not read those settings" in r.stderr,
             "but says every error, and that it goes on", r.stderr)
    finally:
        w.cleanup()


def test_reload_and_sighup(t):
    w = World(config="[env]\nset = GREETING=one\n")
    try:
        path = os.path.join(w.config, "corral", "config")
        w.start_server()
        t.eq(greeting(w), "g=one", "the server runs with the file's settings")
        w.write_config("[env]\nset = GREETING=two\n")
        t.eq(greeting(w), "g=one", "an edit alone changes nothing in a running server")
        r = w.corral("reload")
        t.eq((r.returncode, r.stdout.strip()), (0, "corral: the server reloaded %s" % path),
             "corral reload says which file it read", r.stderr)
        t.eq(greeting(w), "g=two", "and the server runs with it")

        watcher = w.connect("watcher")
        watcher.call({"cmd": "subscribe"})
        w.write_config("[env]\nset = GREETING=three\n")
        w.server.send_signal(signal.SIGHUP)
        ev = watcher.next_event(lambda e: e.get("event") == "config")
        t.ok("GREETING=three" in ev["config"].get("text", ""), "SIGHUP reads the file again; screens hear of it", ev)
        t.ok(w.server.poll() is None, "and the server keeps running")
        t.eq(greeting(w), "g=three", "the server runs with the file SIGHUP read")

        w.write_config("[env]\nset = GREETING=four\n" + TYPOS)
        r = w.corral("reload")
        t.eq(r.returncode, 1, "a reload of a file with errors fails")
        for line in (4, 6, 8, 11):
            t.ok("%s:%d:" % (path, line) in r.stderr, "and names %s:%d" % (path, line), r.stderr)
        t.ok("keeps the settings it runs with" in r.stderr, "and says the server keeps its settings", r.stderr)
        t.eq(greeting(w), "g=three", "which it does: nothing of the file is half applied")
        ev = watcher.next_event(lambda e: e.get("event") == "config")
        t.ok("approvals.timeout: 'soon'" in ev["config"].get("refused", ""),
             "screens hear why the reload was refused", ev)
        watcher.close()
    finally:
        w.cleanup()


def test_reload_without_server(t):
    w = World(config="[approvals]\ntimeout = soon\n")
    try:
        path = os.path.join(w.config, "corral", "config")
        r = w.corral("reload")
        t.ok(r.returncode == 1 and "%s:2: approvals.timeout: 'soon' is not a duration" % path in r.stderr
             and "no server is running" in r.stderr,
             "corral reload without a server checks the file and says none runs", r.stderr)
        t.ok(not os.path.exists(w.socket_path), "and starts none")
    finally:
        w.cleanup()


if __name__ == "__main__":
    run_tests(Tap(), [test_all_errors_in_one_run, test_screen_only_errors_do_not_stop_verbs,
                      test_reload_and_sighup, test_reload_without_server])
