#!/usr/bin/env python3
# id: F09
# tries: rewrite agent instructions at the workspace root: write .codex/config.toml, add to .agents, rename or remove .codex and .agents
# expect: EROFS for writes, EBUSY for rename/rmdir; host .codex and .agents unchanged
# neighbour: files corral does not protect (.envrc, .vscode/settings.json) can be written (flagged by policy, not blocked)
# needs: agent-dirs
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F09_agent_dirs.py [INFO.json]
import errno
import os

from attacklib import attempt, main


def attack():
    attempt("write .codex/config.toml", lambda: open(".codex/config.toml", "w").write('model = "evil"\n'),
            errno.EROFS)
    attempt("create .agents/evil.md", lambda: open(".agents/evil.md", "w").close(), errno.EROFS)
    attempt("rename .codex", lambda: os.rename(".codex", ".codex.aside"), errno.EBUSY)
    attempt("rename .agents", lambda: os.rename(".agents", ".agents.aside"), errno.EBUSY)
    attempt("unlink .codex/config.toml", lambda: os.unlink(".codex/config.toml"), errno.EROFS)


def neighbour():
    open(".envrc", "w").write("export A=1\n")
    os.mkdir(".vscode")
    open(".vscode/settings.json", "w").write("{}\n")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
