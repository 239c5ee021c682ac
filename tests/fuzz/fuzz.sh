#!/bin/sh
# The fuzzers (issue 15, tests/fuzz/README.md): builds fuzz-control,
# fuzz-header, fuzz-config and fuzz-json with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for FUZZ_SECONDS (default 5)
# from its seed corpus in the tree, FUZZ_JOBS at a time (default: the
# cores). `make check` runs this short form, `make fuzz-long` an hour each.
# A crash, a leak, a hang (FUZZ_TIMEOUT s for one input) or a broken
# invariant fails the fuzzer's point and leaves the input that did it in
# $FUZZ_OUT/<name>/ (replay: tests/fuzz/<name> FILE).
# Without clang or libFuzzer every point is skipped.
. "$top_srcdir/tests/tap.sh"
CC_FUZZ=${FUZZ_CC:-clang}
SECONDS_EACH=${FUZZ_SECONDS:-5}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
OUT=${FUZZ_OUT:-$top_builddir/tests/fuzz/runs}
BIN=$top_builddir/tests/fuzz
NAMES="fuzz-control fuzz-header fuzz-config fuzz-json"
plan 8

mkdir -p "$BIN" "$OUT"
probe="$BIN/probe.c"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe" -o "$BIN/probe" >/dev/null 2>&1; then
    for n in $NAMES; do skip "$n: $CC_FUZZ cannot build a libFuzzer target (install clang)"; skip "$n: not built"; done
    exit 0
fi

FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Wall -Wno-unused-function"
INC="-I$top_srcdir/shim/core -I$top_srcdir/shim/mpi -I$top_builddir/shim/mpi -I$top_srcdir/shim/report -I$top_srcdir/tests/fuzz -I$top_builddir"
CORE=$(ls "$top_srcdir"/shim/core/*.c)
build() { # name, extra sources and flags
    n=$1; shift
    log="$BIN/$n.build.log"
    # shellcheck disable=SC2086
    "$CC_FUZZ" $FLAGS $INC "$top_srcdir/tests/fuzz/$n.c" $CORE "$@" -o "$BIN/$n" >"$log" 2>&1
}
run() { # name: FUZZ_SECONDS from a copy of the seeds (the tree stays untouched)
    n=$1
    rm -rf "$OUT/$n" && mkdir -p "$OUT/$n/corpus"
    cp "$top_srcdir/tests/fuzz/corpus/$n"/* "$OUT/$n/corpus/" 2>/dev/null
    (cd "$OUT/$n" && "$BIN/$n" -max_total_time="$SECONDS_EACH" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
        -print_final_stats=1 corpus >log 2>&1; echo $? >rc)
}

for n in fuzz-control fuzz-header; do
    build "$n"
    ok $? "$n builds ($CC_FUZZ with libFuzzer, ASan, UBSan)"
done
build fuzz-json "$top_srcdir/shim/report/tdr_json.c" -lm
ok $? "fuzz-json builds"
MPI_INC=${MPI_CFLAGS:-$(mpicc --showme:compile 2>/dev/null)}
cfg_skip= # why fuzz-config is not built (its run's skip says the same)
if [ ! -f "$top_builddir/shim/mpi/tds_bodies.h" ]; then
    cfg_skip="no libtdshim in this build (its generated header is missing)"
    skip "fuzz-config: $cfg_skip"
elif [ -n "$MPI_INC" ] || echo '#include <mpi.h>' | "$CC_FUZZ" -E - >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    build fuzz-config "$top_srcdir/shim/mpi/tds_config.c" $MPI_INC
    ok $? "fuzz-config builds"
else
    cfg_skip="no mpi.h"
    skip "fuzz-config: $cfg_skip"
fi

t0=$(date +%s)
running=0
for n in $NAMES; do
    [ -x "$BIN/$n" ] || continue
    run "$n" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait; running=0; fi
done
wait
for n in $NAMES; do
    if [ ! -x "$BIN/$n" ]; then
        if [ "$n" = fuzz-config ] && [ -n "$cfg_skip" ]; then skip "$n: $cfg_skip, not run"; else skip "$n: not built"; fi
        continue
    fi
    rc=$(cat "$OUT/$n/rc" 2>/dev/null || echo missing)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$n/log")
    cov=$(grep -o 'cov: [0-9]*' "$OUT/$n/log" | tail -n 1)
    ok $([ "$rc" = 0 ]; echo $?) "$n: ${execs:-?} inputs in ${SECONDS_EACH} s, $cov, no crash, leak or hang (exit $rc)"
    if [ "$rc" != 0 ]; then
        grep -E 'ERROR|fuzz|runtime error|SUMMARY' "$OUT/$n/log" | head -n 8 | sed 's/^/# /'
        for a in "$OUT/$n"/crash-* "$OUT/$n"/leak-* "$OUT/$n"/timeout-* "$OUT/$n"/oom-*; do
            [ -e "$a" ] && diag "input: $a (replay: $BIN/$n $a)"
        done
    fi
done
diag "fuzzers ran $(($(date +%s) - t0)) s wall-clock, $JOBS at a time"
done_testing
