#!/bin/sh
# run.sh - run one libFuzzer target built by tests/fuzz/build.sh.
#
#   tests/fuzz/run.sh fuzz_NAME SECONDS [libFuzzer flags...]
#
# Fuzzes for SECONDS of wall time from the committed corpus
# (tests/fuzz/corpus/NAME, read only) into a scratch corpus,
# build-fuzz/corpus-NAME, writing a crash as build-fuzz/crash-NAME-*.  The
# log, build-fuzz/fuzz_NAME.log, ends with libFuzzer's last status line
# (execs, coverage); the summary line printed here is what the note on a
# run quotes.  Fold new findings into the committed corpus, kept small:
#
#   build-fuzz/fuzz_NAME -merge=1 -use_counters=0 tests/fuzz/corpus/NAME build-fuzz/corpus-NAME
set -eu
[ $# -ge 2 ] || { echo "usage: run.sh fuzz_NAME SECONDS [libFuzzer flags...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$top/build-fuzz}
t=${1%.c}
secs=$2
shift 2
name=${t#fuzz_}
bin="$out/$t"
[ -x "$bin" ] || { echo "run.sh: $bin not built; run tests/fuzz/build.sh $t" >&2; exit 1; }
mkdir -p "$out/corpus-$name"
dict=""
[ -f "$top/tests/fuzz/$name.dict" ] && dict="-dict=$top/tests/fuzz/$name.dict"
log="$out/$t.log"
start=$(date +%s)
rc=0
# shellcheck disable=SC2086 # $dict is empty or one flag
"$bin" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$out/crash-$name-" \
    $dict "$@" "$out/corpus-$name" "$top/tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
end=$(date +%s)
# CPU time the fuzzer used (children's user and system time): a run that
# shared the machine's cores with others had less than its wall time.
# (times runs in this shell, not a command substitution's subshell.)
times >"$out/.times-$name"
cpu=$(tail -n 1 "$out/.times-$name")
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
echo "$t: $((end - start)) s wall (CPU user/sys: $cpu), ${execs:-?} execs, last status: $last (exit $rc, log $log)"
exit $rc
