#!/usr/bin/env python3
"""The CLI's answers to mistyped command lines and settings, through the real
binary (and, where a value reaches it, the real server): an unknown option is
named once, by "corral VERB:", and the usage follows once; an option missing
its text (deny --note) prints the usage; a --yield beyond the range is
clamped as the help and the error message say, not refused; a [profile]
whose base names no profile is an error as soon as the config is read."""
import json
import os

from harness import Tap, World, run_tests

w = World()
w.start_server()


def usage_lines(err):
    return [l for l in err.splitlines() if l.startswith("usage:")]


def test_unknown_option_named_once_with_usage(t):
    for verb, bad, usage in (("ls", "--bogus", "usage: corral ls"), ("ls", "-x", "usage: corral ls"),
                             ("kill", "--bogus", "usage: corral kill"), ("policy", "--bogus", "usage: corral policy")):
        args = (verb, "check", bad) if verb == "policy" else (verb, bad)
        r = w.corral(*args)
        lines = r.stderr.splitlines()
        first = lines[0] if lines else ""
        t.eq(r.returncode, 2, "corral %s: an unknown option is a usage error (exit 2)" % " ".join(args), r.stderr)
        t.ok(first.startswith("corral %s: " % verb) and bad.lstrip("-") in first,
             "corral %s: the first line names the verb as 'corral %s:' and the option" % (" ".join(args), verb),
             r.stderr)
        t.ok(len(usage_lines(r.stderr)) == 1 and usage_lines(r.stderr)[0].startswith(usage),
             "corral %s: the usage is printed once" % " ".join(args), r.stderr)
        t.ok(not any(l.startswith(verb + ":") for l in lines) and
             sum(1 for l in lines if l.startswith("corral")) == 1,
             "corral %s: one message, not getopt's and corral's both" % " ".join(args), r.stderr)


def test_main_unknown_verb_or_option_is_one_line(t):
    for arg, kind in (("--bogus", "option"), ("bogus", "verb")):
        r = w.corral(arg)
        t.ok(r.returncode == 2 and r.stderr.count("\n") == 1 and ("unknown %s '%s'" % (kind, arg)) in r.stderr
             and "corral --help" in r.stderr and r.stdout == "",
             "corral %s: one line naming it and where the list is (exit 2)" % arg, r.stdout + r.stderr)


def test_options_after_operands(t):
    w.corral("exec", "-n", "replayed", "--", "echo", "replay-me")
    sid = [s["id"] for s in json.loads(w.corral("ls", "--json").stdout)["sessions"] if s["name"] == "replayed"][0]
    r = w.corral("replay", str(sid), "--speed", "0")
    t.ok(r.returncode == 0 and "replay-me" in r.stdout, "corral replay ID --speed 0: an option after the operand",
         r.stdout + r.stderr)
    r = w.corral("screen", str(sid), "--history")
    t.ok(r.returncode == 0 and "replay-me" in r.stdout, "corral screen ID --history", r.stdout + r.stderr)
    r = w.corral("ls", "--json")
    t.ok(r.returncode == 0, "and the options of a verb without operands as before", r.stderr)
    r = w.corral("resize", str(sid), "100x30")
    t.ok(r.returncode != 0 and ("session %d has exited" % sid) in r.stderr, "corral resize of a session that has "
         "exited says so, instead of doing nothing", r.stdout + r.stderr)


def test_deny_note_without_text_prints_usage(t):
    for args in (("deny", "--note"), ("deny", "7", "--note")):
        r = w.corral(*args)
        t.eq(r.returncode, 2, "corral %s: a usage error" % " ".join(args), r.stderr)
        t.ok("corral deny:" in r.stderr and "--note" in r.stderr, "which option wants its text is said", r.stderr)
        t.ok(len(usage_lines(r.stderr)) == 1 and usage_lines(r.stderr)[0].startswith("usage: corral deny"),
             "corral %s: the usage follows" % " ".join(args), r.stderr)


def test_huge_yield_is_clamped(t):
    r = w.corral("exec", "--yield", "99999999999", "--", "echo", "clamped-yield-ran")
    t.eq(r.returncode, 0, "exec --yield 99999999999 runs (clamped, as the message says)", r.stderr)
    t.ok("clamped-yield-ran" in r.stdout and "exited with code 0" in r.stdout, "and the command's output comes back",
         r.stdout + r.stderr)
    r = w.corral("exec", "--yield", "-5", "--", "true")
    t.ok(r.returncode == 2 and "--yield wants milliseconds" in r.stderr and "clamped to 250..30000" in r.stderr,
         "a --yield that is not a whole number is still refused, saying the range", r.stderr)
    sid = w.corral("new", "--", "sh", "-c", "read x; echo got-$x").stdout.strip()
    r = w.corral("send", "--enter", "--yield", "99999999999", sid, "it")
    t.ok(r.returncode == 0 and "got-it" in r.stdout, "send --yield 99999999999 is clamped too", r.stdout + r.stderr)
    w.corral("kill", sid)


def test_profile_base_checked_when_config_read(t):
    cw = World(config='[profile "x"]\nbase = nosuch\n')
    conf = os.path.join(cw.config, "corral", "config")
    try:
        r = cw.corral("sandbox", "--", "true")
        t.ok(r.returncode != 0 and conf in r.stderr and 'base = nosuch' in r.stderr and "no such profile" in r.stderr,
             "a base naming no profile is an error when the config is read, naming the file, even for a command "
             "that does not use the profile", r.stderr)
        try:
            cw.start_server()
            t.ok(False, "the server refuses to start with such a config", cw.server_log())
        except RuntimeError as e:
            t.ok("no such profile" in str(e), "the server refuses to start with such a config, saying why", str(e))
    finally:
        cw.cleanup()


run_tests(Tap(), [test_unknown_option_named_once_with_usage, test_main_unknown_verb_or_option_is_one_line,
                  test_options_after_operands, test_deny_note_without_text_prints_usage,
                  test_huge_yield_is_clamped, test_profile_base_checked_when_config_read])
