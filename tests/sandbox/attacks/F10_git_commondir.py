#!/usr/bin/env python3
# id: F10
# tries: write .git/commondir so that git takes its config and hooks from a directory the sandbox controls (a bypass of the read-only .git/config and .git/hooks)
# expect: EROFS/EACCES: commondir must be protected like config; the host gets no .git/commondir
# neighbour: git add and git commit work
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F10_git_commondir.py [INFO.json]
import errno
import os
import shutil
import subprocess

from attacklib import attempt, escaped, git_commit_neighbour, main


def attack():
    # An attacker-controlled common dir: a copy of .git with an fsmonitor
    # and a pre-commit hook of our own.
    shutil.copytree(".git", "evil-common", symlinks=True)
    with open("evil-common/config", "a") as f:
        f.write("[core]\n\tfsmonitor = echo pwned-by-the-sandbox\n")
    with open("evil-common/hooks/pre-commit", "w") as f:
        f.write("#!/bin/sh\necho pwned-by-the-sandbox\n")
    os.chmod("evil-common/hooks/pre-commit", 0o755)
    attempt("write .git/commondir", lambda: open(".git/commondir", "w").write("../evil-common\n"),
            errno.EROFS, errno.EACCES, errno.EPERM)
    # corral may leave a read-only commondir saying "." there: what counts is
    # where git now takes its config and hooks from.
    r = subprocess.run(["git", "rev-parse", "--git-common-dir"], stdout=subprocess.PIPE, text=True)
    common = os.path.realpath(r.stdout.strip())
    if common != os.path.realpath(".git"):
        escaped.append("git now reads config and hooks from %s" % common)
    else:
        # The redirection failed: remove the scaffolding, a bare-repository
        # look-alike with hooks (new repositories are F11's subject).
        shutil.rmtree("evil-common")


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
