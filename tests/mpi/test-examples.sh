#!/bin/sh
# Every example program under tdshim (default algorithm, bcj) with
# TDSHIM_NOTIFY=tag:999 at 1 (single-rank job), 2, 3, 4, 8 and 16 ranks:
# each must end by the notification alone, with the result the seed
# predicts, exactly one notification per quiescent point on every rank
# (three_phase: three, including the phase that runs on rank 0 only and
# sends nothing), nothing arriving after a notification, no contract
# violation and nothing unreceived in the reports.
# First the same programs natively (--native-stop), so a broken example is
# told apart from a broken shim, and one run that must FAIL, so the
# programs' checks are seen to bite.
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

plan 36

run_native "native token_ring np=4" 4 0 token_ring --native-stop --tokens 3 --p 0.98
run_native "native dnc_tree np=3" 3 0 dnc_tree --native-stop --max-depth 10
run_native "native burst_spawn np=4" 4 0 burst_spawn --native-stop --initial 3
run_native "native five_cycle np=2" 2 0 five_cycle --native-stop --work-us 1000
run_native "native three_phase np=4" 4 0 three_phase --native-stop --work-us 50 --local-tasks 40
run_native "native three_phase np=1 (single rank)" 1 0 three_phase --native-stop --local-tasks 10
run_native "an example FAILs when its notification count is wrong" 2 1 three_phase --native-stop --expect-notify 3
timeout -k 5 "$TMO" "$MPIRUN" -np 1 "$EX/token_ring" --p 2 >"$work/out" 2>&1
[ $? -ne 0 ] && grep -q '^token_ring: --p: out of range \[0, 0.9999\]$' "$work/out"
ok $? "an example rejects a bad option with one clear line and a non-zero exit"

if ! have_shim; then
    diag "$SHIMLIB is missing: build the shim (make) first"
    while [ $tap_n -lt 36 ]; do ok 1 "under tdshim: libtdshim.so not built"; done
    done_testing
fi

A=bcj
for np in 1 2 3 4 8 16; do
    run_case "token_ring np=$np" $np 1 $A token_ring --tokens 3 --p 0.98
    run_case "three_phase np=$np" $np 3 $A three_phase --work-us 50 --local-tasks 40 --fanout 4
done
for np in 1 2 4 8 16; do
    run_case "dnc_tree np=$np" $np 1 $A dnc_tree --max-depth 10
done
for np in 1 3 4 8 16; do
    run_case "burst_spawn np=$np" $np 1 $A burst_spawn --initial 2
done
for np in 1 2 4 16; do
    run_case "five_cycle np=$np" $np 1 $A five_cycle --work-us 2000
done
run_case "three_phase np=4 --blocking" 4 3 $A three_phase --blocking --work-us 20
run_case "token_ring np=4 --nonblocking" 4 1 $A token_ring --nonblocking --tokens 4
done_testing
