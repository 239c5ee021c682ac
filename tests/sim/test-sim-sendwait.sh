#!/bin/sh
# The passivity rule of completion calls, in the simulator (README "The
# model"; tdsim --sendwait). A task that sent primaries ends in a completion
# call that still waits for its own sends. With the rule the shim applies
# (exact: the rank stays active there) every algorithm is safe over
# TDSIM_SCHEDULES (default 2000) adversarial schedules on the spawn and
# skrB workloads; with the old rule (received: the core was told passive,
# as when Waitall kept a rank passive after its receive completed) the
# oracle must catch a premature announcement in every wave and credit
# family: the simulator sees the bug the MPI test (tests/mpi/progress.sh)
# sees.
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
N=${TDSIM_SCHEDULES:-2000}
SMALL="--ranks 2-12 --adversarial --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
algos=$("$SIM" --list-algos) || { echo "1..0 # SKIP tdsim-test --list-algos failed"; exit 1; }
CAUGHT="bcj skr fourcounter termdetect cda hcda"
set -- $algos
plan $(($# * 2 + $(echo $CAUGHT | wc -w)))
for a in $algos; do
    for w in spawn skrB; do
        out=$("$SIM" --algo "$a" --workload "$w" $SMALL --sendwait exact --seed 7 --schedules "$N" 2>&1)
        rc=$?
        [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q ' violations=0 '
        st=$?
        ok $st "$a $w --sendwait exact: $N schedules, no violation"
        [ $st -eq 0 ] || diag "$(printf '%s\n' "$out" | tail -n 3)"
    done
done
for a in $CAUGHT; do
    out=$("$SIM" --algo "$a" --workload spawn $SMALL --sendwait received --seed 1 --schedules "$N" 2>&1)
    rc=$?
    [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q '^VIOLATION SAFETY:'
    st=$?
    ok $st "$a --sendwait received (the old rule): the oracle catches the premature announcement"
    diag "$(printf '%s\n' "$out" | grep '^VIOLATION' | head -n 1)"
done
done_testing
