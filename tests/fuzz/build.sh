#!/bin/sh
# build.sh - build corral's libFuzzer targets with clang, AddressSanitizer
# and UBSan.
#
#   tests/fuzz/build.sh [fuzz_NAME ...]     (default: every tests/fuzz/fuzz_*.c)
#
# Compiles the core sources (src/*/*.c but main.c, sandbox/*.c) with clang and
# -fsanitize=fuzzer-no-link,address,undefined into build-fuzz/obj/ (or
# $FUZZ_BUILD/obj; a source is recompiled when it, or any header, is newer
# than its object), then links each target, tests/fuzz/fuzz_NAME.c, with
# libFuzzer's main into build-fuzz/fuzz_NAME.  Needs a tree ./bootstrap
# configured (config.h, src/shell_scripts.c) and clang with
# libclang-rt-14-dev (Debian 12), which make check does not: make check
# builds the same targets with gcc and tests/fuzz/replay_main.c to replay
# the committed corpora.  Run the targets with tests/fuzz/run.sh.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$top/build-fuzz}
CC=${FUZZ_CC:-clang}
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
pkgs="libuv vterm jansson libseccomp libgit2"

command -v "$CC" >/dev/null 2>&1 || {
    echo "build.sh: $CC not found; install clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev)" >&2
    exit 1
}
for f in config.h src/shell_scripts.c; do
    [ -f "$top/$f" ] || {
        echo "build.sh: $top/$f is missing; run ./bootstrap first" >&2
        exit 1
    }
done
cflags="$flags -I$top -I$top/src $(pkg-config --cflags $pkgs)"
mkdir -p "$out/obj"

# The newest header: a source older than its object is still rebuilt when a
# header changed since (crude, but a fuzz build is rare and must be right).
newest_h=$(ls -t "$top"/src/*/*.h "$top"/sandbox/*.h "$top/config.h" | head -n 1)
objs=""
for src in "$top"/src/*/*.c "$top"/sandbox/*.c; do
    case $src in */src/cli/main.c) continue ;; esac
    dir=$(basename "$(dirname "$src")")
    obj="$out/obj/${dir}_$(basename "$src" .c).o"
    objs="$objs $obj"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_h" -nt "$obj" ]; then
        echo "build.sh: CC $dir/$(basename "$src")"
        # shellcheck disable=SC2086 # $cflags is a word list
        "$CC" $cflags -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
done
rm -f "$out/libfuzzcore.a"
# shellcheck disable=SC2086 # $objs is a word list
ar rcs "$out/libfuzzcore.a" $objs

if [ $# -eq 0 ]; then
    set -- $(cd "$top/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')
fi
for t in "$@"; do
    t=${t%.c}
    echo "build.sh: $out/$t"
    # shellcheck disable=SC2086 # $cflags is a word list
    "$CC" $cflags -fsanitize=fuzzer "$top/tests/fuzz/$t.c" "$out/libfuzzcore.a" \
        $(pkg-config --libs $pkgs) -lutil -ldl -o "$out/$t"
done
