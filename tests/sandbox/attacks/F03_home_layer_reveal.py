#!/usr/bin/env python3
# id: F03
# tries: see the denied files behind the home layer: open, list, stat, link and rename the hidden ~/.netrc, ~/.viminfo, ~/.bash_history, ~/.git-credentials; create one and remove it again (would the real one show through?); set overlayfs's own xattrs in the home (an opaque or redirect marker); look for the layer's directory in mountinfo; read ~/.ssh (masked)
# expect: every hidden file is absent (ENOENT), also after a create-and-remove; no secret byte anywhere; overlayfs's xattrs are refused (EOPNOTSUPP), or on Linux 6.7 and newer kept as plain attributes; mountinfo names no host path of the layer; ~/.ssh EACCES
# neighbour: a tool may write a denied file afresh in the layer (a new ~/.viminfo) and read it back
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 F03_home_layer_reveal.py [INFO.json]
import errno
import os

from attacklib import INFO, attempt, attempt_read, blocked, escaped, home_layer, main

HOME = os.environ["HOME"]
HIDDEN = (".netrc", ".viminfo", ".bash_history", ".git-credentials")


def attack():
    if not home_layer():
        blocked.append("no home layer here: nothing to look behind")
        return
    names = os.listdir(HOME)
    for rel in HIDDEN:
        path = os.path.join(HOME, rel)
        (escaped if rel in names else blocked).append("ls ~: %s %s" % (rel, "listed" if rel in names else "absent"))
        attempt_read("read ~/%s" % rel, path)
        attempt("stat ~/%s" % rel, lambda: os.lstat(path), errno.ENOENT, errno.EACCES)
        attempt("link ~/%s" % rel, lambda: os.link(path, path + ".copy"), errno.ENOENT, errno.EACCES, errno.EROFS)
        attempt("rename ~/%s" % rel, lambda: os.rename(path, path + ".moved"), errno.ENOENT, errno.EACCES,
                errno.EROFS, errno.EBUSY)
        try:
            with open(path, "w") as f:
                f.write("mine\n")
            os.unlink(path)
        except OSError:
            pass
        attempt_read("read ~/%s after a create and remove" % rel, path)
    for name in ("user.overlay.opaque", "user.overlay.redirect", "trusted.overlay.opaque"):
        target = os.path.join(HOME, ".config")
        try:
            os.setxattr(target, name, b"y")
        except OSError as e:
            (blocked if e.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.EACCES) else escaped).append(
                "setxattr ~/.config %s: %s" % (name, errno.errorcode[e.errno]))
            continue
        # Linux 6.7 and newer store it escaped, as a plain attribute of the
        # file (read back as set) that overlayfs never takes for its own.
        try:
            back = os.getxattr(target, name)
        except OSError:
            back = None
        (blocked if back == b"y" else escaped).append("setxattr ~/.config %s: %s" % (
            name, "kept as a plain attribute (escaped)" if back == b"y" else "taken by overlayfs"))
    info = open("/proc/self/mountinfo").read()
    (escaped if "home-layers" in info else blocked).append(
        "mountinfo: %s" % ("names the layer" if "home-layers" in info else "no path of the layer"))
    attempt_read("read ~/.ssh/id_test", os.path.join(HOME, ".ssh/id_test"))
    secret = INFO.get("secret")
    if secret:
        for rel in HIDDEN:
            for suffix in ("", ".copy", ".moved"):
                try:
                    with open(os.path.join(HOME, rel + suffix), errors="replace") as f:
                        if secret in f.read():
                            escaped.append("~/%s%s holds the secret" % (rel, suffix))
                except OSError:
                    pass


def neighbour():
    path = os.path.join(HOME, ".viminfo")
    with open(path, "w") as f:
        f.write("# a viminfo of the sandbox's own\n")
    with open(path) as f:
        return None if f.read().startswith("# a viminfo") else "a new ~/.viminfo reads back wrong"


if __name__ == "__main__":
    main(attack, neighbour)
