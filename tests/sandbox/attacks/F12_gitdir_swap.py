#!/usr/bin/env python3
# id: F12
# tries: workspace whose .git is a file pointing to .repo inside the workspace: write .repo/commondir, rename .repo aside and put a copy with a hook in its place
# expect: EROFS/EACCES for commondir, EBUSY for the rename; the host's .repo is the same directory, unchanged
# neighbour: git add and git commit work
# needs: gitfile
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F12_gitdir_swap.py [INFO.json]
import errno
import os
import shutil

from attacklib import attempt, escaped, git_commit_neighbour, judge_errno, main


def attack():
    attempt("write .repo/commondir", lambda: open(".repo/commondir", "w").write("../evil\n"),
            errno.EROFS, errno.EACCES, errno.EPERM)
    if os.path.exists(".repo/commondir") and "evil" in open(".repo/commondir").read():
        os.unlink(".repo/commondir")  # keep the repository usable for the rest
    try:
        os.rename(".repo", ".repo.aside")
    except OSError as e:
        judge_errno("rename .repo", e, errno.EBUSY, errno.EACCES, errno.EPERM, errno.EROFS)
        return
    escaped.append("rename .repo -> .repo.aside: succeeded")
    shutil.copytree(".repo.aside", ".repo", symlinks=True)
    with open(".repo/hooks/pre-commit", "w") as f:
        f.write("#!/bin/sh\necho pwned-by-the-sandbox\n")
    os.chmod(".repo/hooks/pre-commit", 0o755)
    escaped.append("planted .repo/hooks/pre-commit for the host's git")


if __name__ == "__main__":
    main(attack, git_commit_neighbour)
