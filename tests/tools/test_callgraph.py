#!/usr/bin/env python3
"""The call-graph check (tests/tools/callgraph.py): it finds a cycle of
files where there is one and none where calls only go down, and the
sources' call cycles stay within their limits (the largest allowed for each
part of the tree, lowered as cycles are taken apart, never raised: the
server, its gate and its snapshots at most 3 files, as the server core
calls its modules only through the table it is handed; the CLI's files in
no cycle, as cli.c only lists the verbs' entries and the verbs call
down; the screen's files none, as the screen reaches what is open over it
only through the view stack)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "callgraph.py")

# The largest call cycle allowed among the files of each part.
LIMITS = [
    (["src/server", "src/gate", "src/snap"], 3),
    (["ui"], 1),
    (["src/cli"], 1),
    (["src/base", "src/config", "src/protocol", "src/vt", "src/policy", "src/record", "src/net", "src/mcp"], 3),
    (["sandbox"], 2),
]

TREE = {
    "src/server/server.c": "int server_loop(void) { return conn_send(1) + 0; }\n",
    "src/server/conn.c": "/* conn_send(x) */\nint conn_send(int x) { return server_loop() + x; }\n"
                         "static int helper(void) { return 1; }\n",
    "src/gate/gate.c": "struct t { int (*fn)(int); } table[] = {{conn_send}};\n"
                       "int gate_judge(struct s *p) { return p->server_loop + helper(); }\n",
    "src/gate/other.c": "static int helper(void) { return gate_judge(0); }\n",
}


def run(args, top=None):
    cmd = [sys.executable, CHECK] + (["--top", top] if top else []) + args
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    checks = []
    with tempfile.TemporaryDirectory() as top:
        for rel, text in TREE.items():
            os.makedirs(os.path.join(top, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(top, rel), "w") as f:
                f.write(text)
        p = run(["--max-cycle", "1", "src"], top)
        checks.append((p.returncode == 1 and "cycle of 2: src/server/conn.c src/server/server.c" in p.stdout,
                       "two files that call each other are one cycle, over the limit of 1", p.stdout + p.stderr))
        edges = run(["--edges", "src"], top).stdout
        checks.append(("src/gate/gate.c -> src/server/conn.c: conn_send" in edges,
                       "a function named in a table is a reference", edges))
        checks.append(("gate.c -> src/server/server.c" not in edges,
                       "a struct member of the same name is not a call", edges))
        checks.append(("src/gate/other.c -> src/gate/gate.c: gate_judge" in edges and
                       "helper" not in edges,
                       "static functions stay inside their file; comments are not calls", edges))
        p = run(["--max-cycle", "2", "src"], top)
        checks.append((p.returncode == 0, "within the limit, the check passes", p.stdout + p.stderr))
    for folders, limit in LIMITS:
        p = run(["--max-cycle", str(limit)] + folders)
        first = p.stdout.splitlines()[0] if p.stdout else ""
        checks.append((p.returncode == 0, "call cycles among %s: at most %d files (%s)" %
                       (" ".join(folders), limit, first), p.stdout + p.stderr))
    print("1..%d" % len(checks))
    for i, (ok, what, detail) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            for line in detail.splitlines():
                print("#   " + line)
    return 0 if all(ok for ok, _, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
