#!/bin/sh
# skr_problems (the four benchmark problems of skr-counting-quiescence.txt
# §3, which bench/run's skr section measures) at 2 and 4 ranks under skr and
# bcj, small sizes: each must end by the notification alone with the
# result its seed predicts, exactly one notification per phase on every
# rank (B here: four, one of them for the phase on one rank without messages)
# and clean reports. First problems B and D natively (--native-stop), and
# one bad --problem.
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

plan 19

# small sizes: --depth 7 (A: 508 messages), B at depth 6 with 3 phases after
# the first two, C a chain of 30, D 100 times around the cycle
args() {
    case $1 in
    A) echo --problem A --depth 7 ;;
    B) echo --problem B --depth 6 --phases 3 --local-tasks 20 ;;
    C) echo --problem C --length 30 ;;
    D) echo --problem D --iters 100 ;;
    esac
}
phases() { if [ "$1" = B ]; then echo 4; else echo 1; fi; }

run_native "native skr_problems B np=3" 3 0 skr_problems --native-stop --work-us 10 $(args B)
run_native "native skr_problems D np=3" 3 0 skr_problems --native-stop --work-us 10 $(args D)
timeout -k 5 "$TMO" "$MPIRUN" -np 1 "$EX/skr_problems" --problem E >"$work/out" 2>&1
[ $? -ne 0 ] && grep -q '^skr_problems: --problem: no such problem (A, B, C or D)$' "$work/out"
ok $? "skr_problems rejects --problem E with one clear line and a non-zero exit"

have_shim || diag "$SHIMLIB is missing: build the shim (make) first"
for a in skr bcj; do
    for p in A B C D; do
        for np in 2 4; do
            if have_shim; then
                run_case "$a problem $p np=$np" $np "$(phases $p)" $a skr_problems --work-us 10 $(args $p)
            else
                ok 1 "$a problem $p np=$np: libtdshim.so not built"
            fi
        done
    done
done
done_testing
