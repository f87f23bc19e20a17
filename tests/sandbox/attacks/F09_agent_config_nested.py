#!/usr/bin/env python3
# id: F09
# tries: one command plants agent configuration below the workspace's top (sub/.codex/config.toml, a/b/.claude/settings.json, pkg/.gemini/settings.json, pkg/.agents/skills, sub/.corral/rules, pkg/.mcp.json, app/.vscode/tasks.json) and a .mcp.json at the top; the next command rewrites them, adds to them, removes them, renames them or the directories holding them aside, and creates .claude and .gemini settings at the top [2 runs]
# expect: EROFS for writes, EBUSY for renames and removals (what a command found is read-only for the next one, the directories holding it pinned; missing .claude and .gemini at the top are read-only placeholders)
# neighbour: the rest of .vscode (settings.json) and files beside the configuration stay writable
# needs: -
# runs: 2
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand, twice:
#   corral sandbox -- /usr/bin/python3 F09_agent_config_nested.py [INFO.json]
import errno
import os

from attacklib import attempt, main
from _gitlib import phases

PLANTED = {
    "sub/.codex/config.toml": 'notify = ["sh", "-c", "id"]\n',
    "a/b/.claude/settings.json": '{"hooks": {}}\n',
    "pkg/.gemini/settings.json": '{"mcpServers": {}}\n',
    "pkg/.agents/skills/s/SKILL.md": "a skill\n",
    "sub/.corral/rules/x.rules": "# rules\n",
    "pkg/.mcp.json": '{"mcpServers": {}}\n',
    ".mcp.json": '{"mcpServers": {}}\n',
    "app/.vscode/tasks.json": '{"tasks": []}\n',
    "app/.vscode/settings.json": "{}\n",
}


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


def prepare():
    for path, text in PLANTED.items():
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write(path, text)


def attack():
    evil = '{"evil": true}\n'
    for path in PLANTED:
        if path != "app/.vscode/settings.json":
            attempt("rewrite %s" % path, lambda p=path: write(p, evil), errno.EROFS)
    for d in ("sub/.codex", "a/b/.claude", "pkg/.gemini", "pkg/.agents", "sub/.corral"):
        attempt("add %s/evil" % d, lambda d=d: write(d + "/evil", evil), errno.EROFS)
        attempt("rename %s aside" % d, lambda d=d: os.rename(d, d + ".aside"), errno.EBUSY)
    attempt("remove .mcp.json", lambda: os.unlink(".mcp.json"), errno.EBUSY)
    attempt("rename pkg/.mcp.json aside", lambda: os.rename("pkg/.mcp.json", "pkg/mcp.aside"), errno.EBUSY)
    attempt("remove app/.vscode/tasks.json", lambda: os.unlink("app/.vscode/tasks.json"), errno.EBUSY)
    # A directory holding a read-only mount can be renamed unless it is a
    # mount point itself: then a new one takes its place.
    for d in ("sub", "a", "a/b", "pkg", "app", "app/.vscode"):
        attempt("rename %s aside" % d, lambda d=d: os.rename(d, d + ".aside"), errno.EBUSY)
    attempt("create .claude/settings.json at the top", lambda: write(".claude/settings.json", evil), errno.EROFS)
    attempt("create .gemini/settings.json at the top", lambda: write(".gemini/settings.json", evil), errno.EROFS)
    attempt("rename .claude aside", lambda: os.rename(".claude", ".claude.aside"), errno.EBUSY)


def neighbour():
    write("app/.vscode/settings.json", '{"editor.tabSize": 4}\n')
    write("sub/notes.txt", "beside the configuration\n")
    return None


if __name__ == "__main__":
    phases(prepare, attack, neighbour)
