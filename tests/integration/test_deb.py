#!/usr/bin/env python3
"""The Debian package: `dpkg-buildpackage -us -uc -b` in a copy of the
distributed tree (make distdir) builds a corral .deb with the binary, the
man pages, the themes and the shell completions; lintian finds no error in
it; unpacked into a scratch root, its corral runs and finds its themes.
Needs dpkg-dev, debhelper and lintian (./bootstrap installs them): a
machine without them reports SKIP."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

from harness import CORRAL, Tap, run_tests

BUILD = os.path.dirname(os.path.dirname(os.path.abspath(CORRAL)))
VERSION = subprocess.run([CORRAL, "--version"], capture_output=True, text=True).stdout.split()[-1]
LIMIT = 1800  # a package build on a busy 2-core machine


def clean_env():
    """Without the make variables of the make check that runs this test (its
    job server's descriptors are not ours)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


def test_package(t):
    missing = [p for p in ("dpkg-buildpackage", "dh", "lintian", "dpkg-deb") if not shutil.which(p)]
    if missing:
        t.skip("the Debian package builds", "not installed: %s (./bootstrap installs dpkg-dev, debhelper, lintian)"
               % ", ".join(missing))
        return
    tmp = tempfile.mkdtemp(prefix="crldeb")
    try:
        tree = os.path.join(tmp, "corral-%s" % VERSION)
        r = subprocess.run(["make", "-C", BUILD, "distdir", "distdir=" + tree], env=clean_env(), capture_output=True,
                           text=True, timeout=LIMIT)
        if not t.ok(r.returncode == 0 and os.path.isfile(os.path.join(tree, "debian", "rules")),
                    "make distdir carries the packaging (debian/)", r.stdout[-2000:] + r.stderr[-2000:]):
            return
        env = dict(clean_env(), DEB_BUILD_OPTIONS="parallel=2 nocheck")
        r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, env=env, capture_output=True,
                           text=True, timeout=LIMIT)
        debs = [d for d in glob.glob(os.path.join(tmp, "corral_*.deb"))]
        if not t.ok(r.returncode == 0 and len(debs) == 1, "dpkg-buildpackage -us -uc -b builds corral's .deb",
                    r.stdout[-3000:] + r.stderr[-3000:]):
            return
        deb = debs[0]
        r = subprocess.run(["lintian", "--no-tag-display-limit", deb], capture_output=True, text=True, timeout=600)
        errors = [l for l in r.stdout.splitlines() if l.startswith("E:")]
        t.eq(errors, [], "lintian: no error", r.stdout + r.stderr)
        listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
        for path in ("./usr/bin/corral", "./usr/share/man/man1/corral.1.gz", "./usr/share/man/man5/corral.conf.5.gz",
                     "./usr/share/man/man5/corral.rules.5.gz", "./usr/share/corral/themes/default.theme",
                     "./usr/share/bash-completion/completions/corral", "./usr/share/zsh/vendor-completions/_corral"):
            t.ok(path in listing, "the package holds %s" % path, listing)
        depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True).stdout
        t.ok(all(lib in depends for lib in ("libseccomp2", "libncursesw6", "libgit2-", "zlib1g")),
             "it depends on the libraries the binary links, and on libgit2 and zlib, which it opens when first "
             "needed", depends)
        root = os.path.join(tmp, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True, timeout=120)
        exe = os.path.join(root, "usr", "bin", "corral")
        # libuv, libvterm and jansson are linked in (configure.ac: corral
        # starts twice per command); ncurses is the shared library, as
        # Debian's policy asks (debian/rules).
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]",
                            subprocess.run(["readelf", "--dynamic", exe], capture_output=True, text=True).stdout)
        t.ok("libncursesw.so.6" in needed and not any(n.startswith(("libuv", "libvterm", "libjansson"))
                                                      for n in needed),
             "its binary loads ncurses as the shared library, and not libuv, libvterm or jansson", needed)
        r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
        t.ok(r.returncode == 0 and VERSION in r.stdout, "unpacked into a scratch root, its corral runs", r.stdout +
             r.stderr)
        dyn = subprocess.run(["readelf", "--dynamic", "--dyn-syms", "--wide", exe], capture_output=True, text=True,
                             timeout=60).stdout
        t.ok("BIND_NOW" in dyn, "its symbols are bound at start (each pre-built sandbox's init inherits them bound)",
             [l for l in dyn.splitlines() if "FLAGS" in l])
        t.ok(all(re.search(r"\bFUNC\s+GLOBAL\s+DEFAULT\s+\d+ %s$" % sym, dyn, re.M)
                 for sym in ("libssh2_init", "mbedtls_x509_crt_parse_file")),
             "and it exports its no-ops for libgit2's SSH and TLS set-up (src/snap/snap_git.c)",
             [l for l in dyn.splitlines() if "libssh2" in l or "mbedtls" in l])
        r = subprocess.run([exe, "__complete", "--", "corral", "rep"], capture_output=True, text=True, timeout=60)
        t.eq(r.stdout, "replay\n", "and completes verbs for its shell completions", r.stderr)
        r = subprocess.run(["man", "-l", "-P", "cat", os.path.join(root, "usr/share/man/man1/corral.1.gz")],
                           capture_output=True, text=True, timeout=60, env=dict(os.environ, MANWIDTH="80"))
        t.ok(r.returncode == 0 and "corral" in r.stdout and "VERBS" in r.stdout, "its man page reads", r.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


run_tests(Tap(), [test_package])
