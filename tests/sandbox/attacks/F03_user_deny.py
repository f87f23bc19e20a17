#!/usr/bin/env python3
# id: F03
# tries: read paths the user denied with --deny: a file in the home and a directory inside the workspace; write into, rename and remove the denied directory
# expect: EACCES for reads, EROFS/EACCES for writes, EBUSY for rename/rmdir; the host directory is unchanged
# neighbour: other workspace files stay readable and writable
# needs: ws-secrets
# sandbox-args: --deny {home}/private-notes.txt --deny {ws}/secrets
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F03_user_deny.py [INFO.json]
import errno
import os

from attacklib import attempt, attempt_read, main


def attack():
    home = os.environ["HOME"]
    for what, path in (("~/private-notes.txt", home + "/private-notes.txt"), ("secrets/key.pem", "secrets/key.pem")):
        attempt_read("read " + what, path)
    attempt("ls secrets", lambda: os.listdir("secrets"), errno.EACCES)
    attempt("create secrets/new", lambda: open("secrets/new", "w").close(), errno.EROFS, errno.EACCES)
    attempt("unlink secrets/key.pem", lambda: os.unlink("secrets/key.pem"), errno.EROFS, errno.EACCES)
    attempt("rename secrets", lambda: os.rename("secrets", "secrets.aside"), errno.EBUSY)
    attempt("rmdir secrets", lambda: os.rmdir("secrets"), errno.EBUSY)


def neighbour():
    if open("file.txt").read() != "workspace file\n":
        return "file.txt content wrong"
    open("notes.txt", "w").write("ok\n")
    return None


if __name__ == "__main__":
    main(attack, neighbour)
