#!/usr/bin/env python3
"""The layering of corral's sources, checked from their #include lines.

Each folder of src/ is one part of the architecture (docs/ARCHITECTURE.md,
"The folders"); sandbox/ and ui/ sit at the top of the tree.  A folder may
include headers of its own and of the folders LAYERS lists for it, and
those lists form a directed acyclic graph: base/ at the bottom, cli/ (the
program's verbs and main) at the top.  Besides:

  * sandbox/ includes nothing outside itself (it runs in the sandboxed
    child and is built without src/ on its include path);
  * ui/ reaches the server only through the protocol (never server/,
    gate/, snap/ or net/);
  * a header named *_int.h is a folder's private header: only its own
    folder includes it;
  * in src/, every include names its folder ("base/util.h"), so that each
    include line shows the layering; every quoted include resolves to a
    file of the tree;
  * every header's first comment says who includes it ("Included by
    src/server/, src/gate/ and src/cli/." or "Included only in src/vt/."),
    and no file of a folder it does not name includes it: the comment and
    the code agree;
  * every source file is named in Makefile.am (or an .am file it
    includes), so that the build compiles it and `make dist` ships it.

There are no exceptions: an include that breaks the layering fails the
check (the last ones, the server's private state shared with its gate and
snapshot modules, went when server.h became what modules see).

Usage: layering.py [TOP]   (TOP defaults to the tree this script is in).
Prints TAP; exits 1 when a check fails, naming the file and line.
"""
import os
import re
import sys

# Which folders each folder may include (besides itself).
LAYERS = {
    "base": [],
    "sandbox": [],
    "config": ["base", "sandbox"],
    "protocol": ["base"],
    "vt": ["base"],
    "policy": ["base", "sandbox"],
    "record": ["base", "protocol", "vt"],
    "net": ["base", "policy"],
    "server": ["base", "config", "protocol", "vt", "policy", "record", "net", "sandbox"],
    "snap": ["base", "config", "protocol", "record", "sandbox", "server"],
    "gate": ["base", "config", "protocol", "policy", "record", "net", "sandbox", "server", "snap"],
    "mcp": ["base", "protocol", "policy"],
    "ui": ["base", "config", "protocol", "vt", "record"],
    "cli": ["base", "config", "protocol", "vt", "policy", "record", "net", "server", "snap", "gate",
            "mcp", "ui", "sandbox"],
}


TOP_FOLDERS = ("sandbox", "ui")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(rel):
    """'src/base/util.c' -> 'base'; 'ui/tui.c' -> 'ui'; None outside."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) == 3:
        return parts[1]
    if parts[0] in TOP_FOLDERS and len(parts) == 2:
        return parts[0]
    return None


def sources(top):
    out = []
    for base in ("src", "sandbox", "ui"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(top, base)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, name), top))
    return out


def resolve(top, rel, name):
    """The tree path an include names, or None."""
    here = os.path.dirname(rel)
    candidates = [os.path.join(here, name)]
    if "/" in name:
        first = name.split("/")[0]
        candidates.append(name if first in TOP_FOLDERS else os.path.join("src", name))
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(top, c)):
            return c
    return None


def dag_order(layers):
    """A bottom-up order of the folders, or the folders on a cycle."""
    order, done, onpath = [], set(), []

    def visit(f):
        if f in done:
            return None
        if f in onpath:
            return onpath[onpath.index(f):] + [f]
        onpath.append(f)
        for g in layers.get(f, []):
            cyc = visit(g)
            if cyc:
                return cyc
        onpath.pop()
        done.add(f)
        order.append(f)
        return None

    for f in sorted(layers):
        cyc = visit(f)
        if cyc:
            return None, cyc
    return order, None


FOLDER_NAME = re.compile(r"(?<![\w/])(?:src/)?(%s)/" % "|".join(sorted(LAYERS)))


def named_includers(top, header):
    """The folders a header's first comment says include it (None: it says
    nothing of it)."""
    with open(os.path.join(top, header), encoding="utf-8", errors="replace") as f:
        text = f.read()
    end = text.find("*/")
    head = text[:end] if text.startswith("/*") and end > 0 else ""
    at = head.find("Included")
    if at < 0:
        return None
    return set(FOLDER_NAME.findall(" ".join(head[at:].split())))


def check(top):
    problems = {"placement": [], "resolve": [], "layer": [], "private": [], "comment": []}
    named = {}
    for rel in sources(top):
        if rel in ("src/shell_scripts.c",):
            continue  # generated by make from src/shell/
        src_folder = folder_of(rel)
        if src_folder is None or src_folder not in LAYERS:
            problems["placement"].append("%s: not in a folder of the layering (LAYERS in %s)" % (rel, __file__))
            continue
        with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for n, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == "config.h":
                continue
            name = m.group(1)
            where = "%s:%d: #include \"%s\"" % (rel, n, name)
            target = resolve(top, rel, name)
            if target is None:
                problems["resolve"].append("%s: no such file in the tree" % where)
                continue
            if rel.startswith("src/") and "/" not in name:
                problems["resolve"].append("%s: name the folder (\"%s\")" % (where, target[len("src/"):]))
            to_folder = folder_of(target)
            if target.endswith(".h") and to_folder != src_folder:
                if target not in named:
                    named[target] = named_includers(top, target)
                if named[target] is not None and src_folder not in named[target]:
                    problems["comment"].append("%s: %s's comment does not name %s/ among the folders that include it"
                                               % (where, target, src_folder))
            if os.path.basename(target).endswith("_int.h") and to_folder != src_folder:
                problems["private"].append("%s: %s is private to %s/" % (where, target, to_folder))
            if to_folder == src_folder:
                continue
            if to_folder in LAYERS.get(src_folder, []):
                continue
            allowed = ", ".join(LAYERS.get(src_folder, [])) or "nothing outside itself"
            problems["layer"].append("%s: %s/ may not include %s/ (it may include %s)" %
                                     (where, src_folder, to_folder, allowed))
    for rel in sources(top):
        if rel.endswith(".h") and named_includers(top, rel) is None:
            problems["comment"].append("%s: its first comment does not say who includes it "
                                       "(\"Included by ...\" or \"Included only in ...\")" % rel)
    if os.path.isfile(os.path.join(top, "Makefile.am")):
        ams = ["Makefile.am"]
        fuzz = os.path.join(top, "tests", "fuzz")
        if os.path.isdir(fuzz):
            ams += sorted(os.path.join("tests", "fuzz", n) for n in os.listdir(fuzz) if n.endswith(".am"))
        listed = set()
        for am in ams:
            with open(os.path.join(top, am), encoding="utf-8") as f:
                listed.update(re.findall(r"[\w./-]+", f.read()))
        for rel in sources(top):
            if rel not in listed and rel != "src/shell_scripts.c":
                problems["placement"].append("%s: not named in Makefile.am: the build does not see it and make "
                                             "dist would leave it out" % rel)
    return problems


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    results = []
    order, cycle = dag_order(LAYERS)
    results.append((cycle is None, "the folders' layers form a directed acyclic graph",
                    ["cycle: " + " -> ".join(cycle)] if cycle else ["bottom up: " + " ".join(order)]))
    results.append((LAYERS["sandbox"] == [] and all(f not in LAYERS["ui"] for f in ("server", "gate", "snap", "net")),
                    "sandbox/ may include nothing outside itself; ui/ nothing of server/, gate/, snap/, net/", []))
    problems = check(top)
    results.append((not problems["placement"], "every source file lives in a folder of the layering and is in the build",
                    problems["placement"]))
    results.append((not problems["resolve"], "every quoted include resolves, and in src/ names its folder",
                    problems["resolve"]))
    results.append((not problems["private"], "a *_int.h header is included only in its own folder",
                    problems["private"]))
    results.append((not problems["comment"], "every header says who includes it, and only those folders do",
                    problems["comment"]))
    results.append((not problems["layer"], "no include goes against the layering", problems["layer"]))
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, what, lines) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        for line in lines:
            print("# " + line)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
