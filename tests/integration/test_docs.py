#!/usr/bin/env python3
"""The documentation describes what is there, where that is cheap to check
against the code itself: every verb `corral --help` lists has its section in
corral(1) (and corral(1) documents no verb that does not exist); every event
kind the server writes to a session's events.jsonl is in docs/formats.md;
every command of the protocol (the core's table and the modules') is in
docs/protocol.md; every man page in docs/ is installed (man_MANS) and named
in the README; the state glyphs corral(1) shows are the ones the sidebar
draws; every config key corral accepts (as its own errors list them) is in
corral.conf(5); the defaults and limits the README and corral.conf(5) state
are those of --help and the code."""
import glob
import os
import re
import subprocess

from harness import CORRAL, Tap, World, run_tests

TESTS = os.environ.get("CORRAL_TESTS_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TOP = os.path.dirname(os.path.abspath(TESTS))


def read(*parts):
    with open(os.path.join(TOP, *parts), encoding="utf-8") as f:
        return f.read()


def man_section(text, name):
    """The lines of the man page section .SH NAME, up to the next .SH."""
    m = re.search(r"^\.SH \"?%s\"?\n(.*?)(?=^\.SH |\Z)" % re.escape(name), text, re.M | re.S)
    return m.group(1) if m else ""


def test_every_verb_has_a_man_section(t):
    r = subprocess.run([CORRAL, "--help"], capture_output=True, text=True)
    verbs = re.findall(r"^  corral ([a-z][a-z-]*)", r.stdout, re.M)
    t.ok(r.returncode == 0 and len(verbs) >= 10, "corral --help lists the verbs", r.stdout + r.stderr)
    verbs_sec = man_section(read("docs", "corral.1"), "VERBS")
    # A hyphen in a man page is written \- (git\-restore).
    documented = re.findall(r"^\.TP\n\.B ([a-z][a-z-]*)", verbs_sec.replace("\\-", "-"), re.M)
    missing = [v for v in verbs if v not in documented]
    t.eq(missing, [], "every verb of corral --help has its section under VERBS in corral(1)")
    t.eq([v for v in documented if v not in verbs], [], "and corral(1) documents no verb corral does not have")
    after_first = verbs_sec.split("\n.TP\n", 1)[-1]
    breaks = [after_first[max(0, m.start() - 120):m.end() + 60] for m in re.finditer(r"^\.PP\n", after_first, re.M)]
    t.eq(breaks, [], "the VERBS list is one list: no paragraph (such as 'Every verb takes --help') breaks it in two")


def event_kinds_written():
    """Event names given as literals to the functions that append to a
    session's events.jsonl (eventlog_write and its wrappers in src/)."""
    kinds = set()
    for path in glob.glob(os.path.join(TOP, "src", "**", "*.c"), recursive=True):
        with open(path, encoding="utf-8") as f:
            code = f.read()
        kinds.update(re.findall(r"\b(?:eventlog_write|log_event|record)\(\s*[\w>.-]+,\s*\"([a-z_]+)\"", code))
    return kinds


def test_every_event_kind_is_in_formats(t):
    kinds = event_kinds_written()
    t.ok({"created", "exited", "approval_requested"} <= kinds, "the event kinds written are found in src/",
         sorted(kinds))
    formats = read("docs", "formats.md")
    section = formats.split("## events.jsonl", 1)[-1]
    documented = set()
    for row in re.findall(r"^\| (`[^|]*`) \|", section, re.M):
        documented.update(re.findall(r"`([a-z_]+)`", row))
    t.eq(sorted(kinds - documented), [], "every event kind the server writes has its row in docs/formats.md")


def protocol_commands():
    """The protocol's commands: the core's table (src/server/dispatch.c) and
    every module's (a server_command table, src/server/module.h)."""
    cmds = []
    for path in sorted(glob.glob(os.path.join(TOP, "src", "**", "*.c"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            code = f.read()
        for table in re.findall(r"\b(?:server_command \w+|commands)\[\] = \{(.*?)\};", code, re.S):
            cmds += re.findall(r"\{\"([a-z_]+)\", \w+\}", table)
    return cmds


def test_every_protocol_command_is_documented(t):
    cmds = protocol_commands()
    t.ok(len(cmds) >= 20 and {"hello", "exec", "approve", "diff", "gc"} <= set(cmds),
         "the protocol's commands are found in the core's table and the modules'", cmds)
    headings = " ".join(re.findall(r"^###.*$", read("docs", "protocol.md"), re.M))
    t.eq([c for c in cmds if "`%s`" % c not in headings], [],
         "every protocol command has its heading in docs/protocol.md")


def test_man_pages_installed_and_named(t):
    pages = sorted(os.path.basename(p) for p in glob.glob(os.path.join(TOP, "docs", "*.[1-8]")))
    m = re.search(r"^man_MANS\s*=\s*((?:.*\\\n)*.*)$", read("Makefile.am"), re.M)
    installed = [os.path.basename(p) for p in m.group(1).replace("\\\n", " ").split()] if m else []
    t.eq(pages, sorted(installed), "make install installs every man page in docs/ (man_MANS)")
    readme = read("README.md")
    for page in pages:
        name, section = page.rsplit(".", 1)
        t.ok("%s(%s)" % (name, section) in readme, "the README names %s(%s)" % (name, section))


ESCAPES = {"bu": "\u2022", "ci": "\u25cb", "OK": "\u2713", "mu": "\u00d7", "->": "\u2192", "*": "*"}


def man_glyphs(text):
    """The characters written as \\[uXXXX] or \\(xx in a piece of roff."""
    out = set(chr(int(h, 16)) for h in re.findall(r"\\\[u([0-9A-Fa-f]{4})\]", text))
    out.update(ESCAPES.get(x, "\\(" + x) for x in re.findall(r"\\\((..)", text))
    return out


def test_glyphs_are_the_screens(t):
    sidebar = read("ui", "sidebar.c")
    # A session's row: its state glyph, and the exit code's mark.
    bodies = "".join(m.group(0) for m in re.finditer(r"^static [^\n(]*\b(?:state_glyph|draw_session_row)\(.*?\n\}\n",
                                                      sidebar, re.S | re.M))
    drawn = set()
    for lit in re.findall(r"\"((?:\\x[0-9a-f]{2})+)\"", bodies):
        drawn.add(bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-f]{2})", lit)).decode())
    t.ok(len(drawn) >= 5, "the sidebar's state glyphs are found in ui/sidebar.c", drawn)
    screen = man_section(read("docs", "corral.1"), "THE SUPERVISOR SCREEN")
    glyph_sentence = re.search(r"state glyph\n?\((.*?)\)", screen, re.S)
    shown = man_glyphs(glyph_sentence.group(1) if glyph_sentence else "")
    t.eq(sorted(shown), sorted(drawn), "corral(1) shows exactly the state glyphs the sidebar draws",
         glyph_sentence.group(0) if glyph_sentence else screen[:400])
    readme = read("README.md")
    t.ok(all(g in readme for g in drawn), "and so does the README", sorted(drawn))


def known_config():
    """{section: [keys]} as corral's own errors name them: an unknown
    section lists the sections, an unknown key a section's keys (read with
    corral reload, which checks the file and starts no server)."""
    w = World()
    try:
        def errors(text):
            w.write_config(text)
            return w.corral("reload").stderr
        m = re.search(r"unknown section \[zzz\] \(known: ([^)]*)\)", errors("[zzz]\nx = 1\n"))
        sections = m.group(1).split(", ") if m else []
        keys = {}
        for s in sections:
            head = '[profile "p"]' if s == "profile" else "[%s]" % s
            m = re.search(r"unknown (?:key|action) 'zzz' in %s \(known: ([^)]*)\)" % re.escape(head),
                          errors(head + "\nzzz = 1\n"))
            keys[s] = m.group(1).split(", ") if m else None
        return keys
    finally:
        w.cleanup()


def test_every_config_key_is_in_corral_conf(t):
    keys = known_config()
    t.ok(len(keys) >= 10 and all(v for v in keys.values()), "corral names its config sections and their keys", keys)
    conf = read("docs", "corral.conf.5").replace("\\-", "-")
    # A key's entry: ".B [sandbox] net", or one of a group,
    # '.BR "[sandbox] write" ", " read ", " deny'.
    documented = set()
    for line in conf.splitlines():
        m = re.match(r'\.BR? "?\[([a-z]+)\] (.*)', line)
        if m:
            documented |= {(m.group(1), w) for w in re.findall(r"[a-z][a-z-]*", m.group(2))}
    missing = ["[%s] %s" % (s, k) for s, ks in keys.items() if s not in ("keys", "profile") for k in (ks or [])
               if (s, k) not in documented]
    t.eq(missing, [], "every key of every section is documented in corral.conf(5)")
    t.ok(".B [keys]" in conf and '[profile "' in conf.replace("\\(dq", '"').replace('\\"', '"'),
         "and so are [keys] and [profile \"NAME\"]")


def test_stated_defaults(t):
    conf = read("docs", "corral.conf.5").replace("\\-", "-")
    helptext = subprocess.run([CORRAL, "exec", "--help"], capture_output=True, text=True).stdout
    t.ok("proxy (workspace-write's default" in helptext, "--help: workspace-write's network is proxy", helptext)
    t.ok("until the asking proxy exists" not in conf and re.search(r"\.B proxy\n\(the default of\n\.BR workspace-write",
                                                                    conf),
         "corral.conf(5) says the same of [sandbox] net")
    readme = read("README.md")
    snap = read("src", "config", "snap_conf.c")
    new_files = re.search(r"max_new_files = (\d+);", snap).group(1)
    t.ok("more than %s new files a command makes" % new_files in readme and "max-new-files" in readme,
         "the README's snapshot limits include the new-file cap, at its default (%s)" % new_files)
    t.ok("first on `PATH`" not in readme, "the README does not promise corral is first on PATH in every session")


run_tests(Tap(), [test_every_verb_has_a_man_section, test_every_event_kind_is_in_formats,
                  test_every_protocol_command_is_documented, test_man_pages_installed_and_named,
                  test_glyphs_are_the_screens, test_every_config_key_is_in_corral_conf, test_stated_defaults])
