#!/bin/sh
# The examples under every other algorithm the core provides (the list is
# tdsim --list-algos; 'none' never announces, by design), on a smaller
# matrix than test-examples.sh: the three-phase program on a single rank
# and on 4 ranks, bursts on 3 ranks, the token ring on 8 ranks, the BCJ
# cycle program on 2. Same verdicts as test-examples.sh.
TDSHIM_TEST_TIMEOUT=${TDSHIM_TEST_TIMEOUT:-60}
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

list=$(algos | grep -vx bcj)
n=0
for a in $list; do n=$((n + 5)); done
if [ $n -eq 0 ]; then
    echo "1..0 # SKIP no algorithm besides bcj (tdsim --list-algos)"
    exit 0
fi
plan $n
for a in $list; do
    if ! have_shim; then
        for i in 1 2 3 4 5; do ok 1 "$a: libtdshim.so not built"; done
        continue
    fi
    run_case "$a three_phase np=1" 1 3 "$a" three_phase --local-tasks 20 --fanout 2
    run_case "$a three_phase np=4" 4 3 "$a" three_phase --work-us 20 --local-tasks 20 --fanout 4
    run_case "$a burst_spawn np=3" 3 1 "$a" burst_spawn --initial 2
    run_case "$a token_ring np=8" 8 1 "$a" token_ring --tokens 2 --p 0.95
    run_case "$a five_cycle np=2" 2 1 "$a" five_cycle --work-us 1000
done
done_testing
