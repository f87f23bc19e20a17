#!/bin/sh
# build.sh - build corral's libFuzzer targets with clang, AddressSanitizer
# and UBSan.
#
#   tests/fuzz/build.sh [fuzz_NAME ...]     (default: every tests/fuzz/fuzz_*.c)
#
# Configures an instrumented build of the core libraries in build-fuzz/ (or
# $FUZZ_BUILD) with clang and -fsanitize=fuzzer-no-link, then links each
# target, tests/fuzz/fuzz_NAME.c, against them with libFuzzer's main into
# build-fuzz/fuzz_NAME.  Needs clang and libclang-rt-14-dev (Debian 12), which
# make check does not: make check builds the same targets with gcc and
# tests/fuzz/replay_main.c to replay the committed corpora.  Run the targets
# with tests/fuzz/run.sh.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$top/build-fuzz}
CC=${FUZZ_CC:-clang}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
flags="-g -O1 -fno-omit-frame-pointer $san"

command -v "$CC" >/dev/null 2>&1 || {
    echo "build.sh: $CC not found; install clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev)" >&2
    exit 1
}
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null)
mkdir -p "$out"
cd "$out"
if [ ! -f Makefile ]; then
    echo "build.sh: configuring an instrumented build in $out (log: $out/configure.log)"
    "$top/configure" CC="$CC" CFLAGS="$flags -fsanitize=fuzzer-no-link" >configure.log 2>&1 || {
        echo "build.sh: configure failed; see $out/configure.log" >&2
        exit 1
    }
fi
make -s src/libcorral.a sandbox/libsandbox.a

libs="src/libcorral.a sandbox/libsandbox.a $(pkg-config --libs libuv vterm jansson libseccomp libgit2) -lutil -ldl"
if [ $# -eq 0 ]; then
    set -- $(cd "$top/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')
fi
for t in "$@"; do
    t=${t%.c}
    echo "build.sh: $out/$t"
    # shellcheck disable=SC2086 # $flags and $libs are word lists
    "$CC" $flags -fsanitize=fuzzer -I"$out" -I"$top/src" -I"$top/sandbox" \
        $(pkg-config --cflags libuv vterm jansson libseccomp libgit2) \
        "$top/tests/fuzz/$t.c" $libs -o "$t"
done
