#!/bin/sh
# minbase-check.sh - prove that ./bootstrap && make check pass on a minimal
# Debian 12: the system `debootstrap --variant=minbase bookworm` makes, plus
# git (to get the source), and nothing else.  What bootstrap does not install
# is missing there, so a test that runs a program bootstrap forgot fails.
#
# Usage (as root; needs the network to Debian's mirror and a few minutes):
#   tests/minbase-check.sh DIR [MIRROR]
# DIR holds the minimal system (DIR/root, made by debootstrap on the first
# run and reused after; delete DIR to start from scratch) and the logs
# (DIR/bootstrap.log, DIR/check.log).  MIRROR defaults to
# http://deb.debian.org/debian.  The commit checked is this repository's
# HEAD, cloned afresh into DIR/root/corral: uncommitted changes are not
# part of it.  Exits with make check's status.
#
# Not part of make check: it needs the network, root and minutes.
#
# How it runs: a plain chroot would not do, because the kernel refuses to
# create user namespaces (which corral's sandbox needs) inside one.  So the
# minimal system becomes the root of a private mount namespace (pivot_root),
# with its own /proc in a private PID namespace (the tests' temporary user
# is found and killed through /proc: only this run's processes are seen),
# and the host's /dev and /sys bound in.  Nothing is mounted on the host
# outside the namespace.  The host's battery lock (/tmp/corral-battery.lock,
# see tests/sandbox/README.md) is held while make check runs, as for any
# make check on this machine.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [MIRROR]" >&2
    exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "minbase-check: run as root (debootstrap and the namespaces need it)" >&2
    exit 2
fi
dir=$(realpath -m "$1")
mirror=${2:-http://deb.debian.org/debian}
root="$dir/root"
src=$(cd "$(dirname "$0")/.." && pwd)
rev=$(git -C "$src" rev-parse HEAD)
mkdir -p "$dir"

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "minbase-check: installing debootstrap"
    apt-get install -y -q debootstrap
fi
if [ ! -f "$root/etc/debian_version" ]; then
    echo "minbase-check: debootstrap --variant=minbase --include=git bookworm $root"
    debootstrap --variant=minbase --include=git bookworm "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 || {
        echo "minbase-check: debootstrap failed; see $dir/debootstrap.log" >&2
        exit 1
    }
fi
# Name resolution for apt inside (the host's resolver).
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The loopback names of every installed Debian (its installer or container
# runtime writes /etc/hosts; debootstrap leaves it out): the network tests
# reach their local servers as localhost, and bootstrap warns without it.
if [ ! -f "$root/etc/hosts" ]; then
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
fi

echo "minbase-check: cloning $rev into $root/corral"
rm -rf "$root/corral"
git clone -q --no-hardlinks "$src" "$root/corral"
git -C "$root/corral" checkout -q --detach "$rev"

# Run a shell command as root inside the minimal system, with a clean
# environment (what a login on such a system has).
in_root() {
    unshare --mount --pid --fork --propagation private /bin/sh -eu -c '
        root=$1 cmd=$2
        mount --rbind "$root" "$root"      # pivot_root wants a mount point
        mount -t proc proc "$root/proc"    # this PID namespace only
        mount --rbind /sys "$root/sys"
        mount --rbind /dev "$root/dev"
        mkdir -p "$root/.oldroot"
        cd "$root"
        pivot_root . .oldroot
        umount -l /.oldroot
        rmdir /.oldroot
        exec env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh TERM=xterm \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /bin/sh -c "$cmd"
    ' sh "$root" "$1"
}

echo "minbase-check: ./bootstrap (log: $dir/bootstrap.log)"
if ! in_root 'cd /corral && ./bootstrap' >"$dir/bootstrap.log" 2>&1; then
    tail -n 30 "$dir/bootstrap.log" >&2
    echo "minbase-check: ./bootstrap failed on a minimal Debian 12" >&2
    exit 1
fi

echo "minbase-check: make check (log: $dir/check.log; waits for /tmp/corral-battery.lock)"
status=0
exec 9>/tmp/corral-battery.lock
flock 9
in_root 'cd /corral && make check' >"$dir/check.log" 2>&1 9>&- || status=$?
flock -u 9
grep -E '^(# )?(TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$dir/check.log" | tail -n 8
grep -E '^(FAIL|ERROR|XPASS):' "$dir/check.log" >&2 || true
if [ "$status" -eq 0 ]; then
    echo "minbase-check: ./bootstrap && make check passed on a minimal Debian 12 ($rev)"
else
    echo "minbase-check: make check failed on a minimal Debian 12 (status $status); see $dir/check.log" >&2
fi
exit "$status"
