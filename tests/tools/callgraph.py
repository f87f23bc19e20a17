#!/usr/bin/env python3
"""Which source files call which, and the call cycles between files.

A file A calls a file B when a function of A (or a table at A's top level)
names a function that B defines with external linkage: a call, or a
function pointer handed on (a dispatch table, a callback).  Files that call
each other round a cycle cannot be read, tested or changed one at a time;
the server's core is meant to call down only (docs/ARCHITECTURE.md).

The reading is textual, as a reader of the code would do it: comments,
strings and preprocessor lines are blanked, a function definition is a name
followed by its parameter list and a body at the top level, and a name is a
reference wherever it stands, but after "." or "->" (a member).  A
macro that hides a call, or a name defined twice with external linkage, can
mislead it; both are rare here, and a duplicate is reported.

Usage:
  callgraph.py [--top DIR] [--max-cycle N] [FOLDER...]
      prints the cycles (strongly connected sets of files) among the files
      under the FOLDERs (default: src ui sandbox), largest first, each with
      the names that tie it; with --max-cycle, exits 1 when one is larger
      than N files.
  callgraph.py --edges [FOLDER...]   every file -> file edge with its names.
"""
import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = set("""if for while switch return sizeof do else case default goto break continue
typedef struct union enum static const volatile extern inline register restrict _Alignof
_Static_assert _Generic alignof offsetof""".split())


def blank(text):
    """Comments, string and character literals and preprocessor lines
    replaced by spaces, newlines kept."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a preprocessor line, with its continuations
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + c if j - i >= 2 else c)
            i = j
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return "".join(out)


def definitions(code):
    """(name, is_static, body_start, body_end) of each function defined at
    the top level of blanked code."""
    found = []
    depth, i, n = 0, 0, len(code)
    stmt_start = 0
    while i < n:
        c = code[i]
        if c == "{":
            if depth == 0:
                head = code[stmt_start:i]
                m = re.search(r"([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*$", head)
                if m and "=" not in head and m.group(1) not in KEYWORDS:
                    # find the matching brace
                    d, j = 0, i
                    while j < n:
                        if code[j] == "{":
                            d += 1
                        elif code[j] == "}":
                            d -= 1
                            if d == 0:
                                break
                        j += 1
                    static = re.search(r"\bstatic\b", head[:m.start()]) is not None
                    found.append((m.group(1), static, i, j))
                    i = j + 1
                    stmt_start = i
                    continue
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                stmt_start = i + 1
        elif c == ";" and depth == 0:
            stmt_start = i + 1
        i += 1
    return found


def read_tree(top, folders):
    files = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(top, folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".c"):
                    rel = os.path.relpath(os.path.join(dirpath, name), top)
                    with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
                        files[rel] = blank(f.read())
    return files


def graph(top, folders, scope_folders=None):
    """edges[a][b] = set of names a takes from b."""
    everything = read_tree(top, ["src", "ui", "sandbox"])
    defined, duplicates = {}, []
    for rel, code in everything.items():
        for name, static, _, _ in definitions(code):
            if static or name == "main":
                continue  # file-local, or the entry point nobody calls
            if name in defined and defined[name] != rel:
                duplicates.append((name, defined[name], rel))
            defined[name] = rel
    in_scope = [rel for rel in everything
                if any(rel == f or rel.startswith(f.rstrip("/") + "/") for f in folders)]
    edges = {rel: {} for rel in in_scope}
    for rel in in_scope:
        code = everything[rel]
        for m in IDENT.finditer(code):
            before = code[max(0, m.start() - 2):m.start()].rstrip()
            if before.endswith(".") or before.endswith("->"):
                continue  # a member of a struct, not a function
            target = defined.get(m.group(0))
            if target and target != rel and target in edges:
                edges[rel].setdefault(target, set()).add(m.group(0))
    return edges, duplicates


def cycles(edges):
    """Strongly connected sets of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--max-cycle", type=int)
    ap.add_argument("--edges", action="store_true")
    ap.add_argument("folders", nargs="*")
    args = ap.parse_args()
    top = os.path.abspath(args.top)
    folders = args.folders or ["src", "ui", "sandbox"]
    edges, duplicates = graph(top, folders)
    for name, a, b in duplicates:
        print("# note: %s is defined in both %s and %s" % (name, a, b))
    if args.edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print("%s -> %s: %s" % (a, b, ", ".join(sorted(edges[a][b]))))
        return 0
    found = cycles(edges)
    largest = len(found[0]) if found else 1
    print("files: %d; call cycles: %d; the largest: %d files" % (len(edges), len(found), largest))
    for comp in found:
        print("cycle of %d: %s" % (len(comp), " ".join(comp)))
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print("    %s -> %s: %s" % (a, b, ", ".join(sorted(edges[a][b]))))
    if args.max_cycle is not None and largest > args.max_cycle:
        print("callgraph: a call cycle of %d files, more than %d" % (largest, args.max_cycle), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
