#!/usr/bin/env python3
"""The layering check (tests/tools/layering.py) fails where it must: run on a
small tree of its own with one include of each kind it forbids, it names
every offending file and line, and passes the includes it allows; a
header's comment that does not say who includes it, or leaves out a folder
that does, is reported too, and so is a file Makefile.am does not name."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "layering.py")

TREE = {
    "src/base/util.h": "/*\n * util.h - helpers.\n * Included by src/base/ and src/server/.\n */\n",
    "src/base/util.c": '#include "config.h"\n#include "base/util.h"\n',
    "src/base/bad.c": '#include "base/util.h"\n#include "server/server.h"\n',
    "src/server/server.h": '#include "base/util.h"\n',
    "src/server/server_int.h": "",
    "src/server/server.c": '#include "server/server_int.h"\n#include "server.h"\n#include "base/nothere.h"\n',
    "src/gate/gate.c": '#include "server/server_int.h"\n#include "server/server.h"\n',
    "src/attic.c": "",
    "sandbox/plan.h": "",
    "sandbox/plan.c": '#include "plan.h"\n#include "base/util.h"\n',
    "ui/tui.c": '#include "protocol/proto.h"\n#include "server/server.h"\n',
    "Makefile.am": "noinst_LIBRARIES = src/libx.a\nsrc_libx_a_SOURCES = src/base/util.c src/base/util.h src/base/bad.c \\\n"
                   "\tsrc/server/server.h src/server/server_int.h src/server/server.c src/gate/gate.c src/gate/other.c \\\n"
                   "\tsandbox/plan.h sandbox/plan.c ui/tui.c src/protocol/proto.h src/attic.c\n",
    "src/server/forgotten.h": "/*\n * forgotten.h - not in the build.  Included only in src/server/.\n */\n",
    "src/protocol/proto.h": "/*\n * proto.h - frames.  Included only in src/protocol/.\n */\n",
}


def run_on_tree():
    with tempfile.TemporaryDirectory() as top:
        for rel, text in TREE.items():
            path = os.path.join(top, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECK, top], capture_output=True, text=True)
        return p.returncode, p.stdout


def main():
    rc, out = run_on_tree()
    expect = [
        ("src/base/bad.c:2:", "base/ may not include a higher folder (server/)"),
        ("src/gate/gate.c:1:", "only server/ includes its private server_int.h"),
        ("src/server/server.c:2: #include \"server.h\": name the folder", "an include in src/ names its folder"),
        ("src/server/server.c:3: #include \"base/nothere.h\": no such file", "an include that names no file is refused"),
        ("src/attic.c: not in a folder", "a file directly in src/ is outside the layering"),
        ("sandbox/plan.c:2:", "sandbox/ includes nothing outside itself"),
        ("ui/tui.c:2:", "ui/ does not reach server/"),
        ("ui/tui.c:1: #include \"protocol/proto.h\": src/protocol/proto.h's comment does not name ui/",
         "a header included from a folder its comment does not name is reported"),
        ("src/server/server.h: its first comment does not say who includes it",
         "a header that does not say who includes it is reported"),
        ("src/server/forgotten.h: not named in Makefile.am", "a file the build does not name is reported"),
    ]
    allowed = ["src/gate/gate.c:2:", "sandbox/plan.c:1:", "src/base/util.c:", "src/server/server.h:1:",
               "src/base/util.h:"]
    checks = [(rc == 1, "the check fails on a tree that breaks the layering (exit %d)" % rc)]
    for where, what in expect:
        checks.append((any(line.startswith("# " + where) for line in out.splitlines()), what + " (" + where + ")"))
    for where in allowed:
        checks.append((not any(line.startswith("# " + where) for line in out.splitlines()),
                       "an allowed include is not reported (%s)" % where))
    print("1..%d" % len(checks))
    for i, (ok, what) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    if not all(ok for ok, _ in checks):
        print("# the check printed:")
        for line in out.splitlines():
            print("#   " + line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
