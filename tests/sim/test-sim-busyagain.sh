#!/bin/sh
# Ranks misjudged busy (tdsim --busy-again; TDSHIM_IDLE=spin's td_busy after
# a long gap between polls, e.g. a descheduled poll loop): an idle rank is
# taken for busy and stops polling for a while, up to 4 times per rank, so
# control messages wait for it while the ground truth is quiescent. Every
# algorithm, with and without confirmation, must stay safe and live over
# TDSIM_SCHEDULES (default 1000) adversarial schedules of the multi-phase
# skrB and the spawn workloads (the liveness hop bound is lifted for an
# episode in which a rank stopped polling after quiescence: only eventual
# detection is required then). The last point checks that the runs do
# contain such ranks.
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim"
N=${TDSIM_SCHEDULES:-1000}
SMALL="--ranks 2-12 --adversarial --busy-again 4 --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
algos=$("$SIM" --list-algos | grep -vx none) || { echo "1..0 # SKIP tdsim --list-algos failed"; exit 1; }
set -- $algos
plan $(($# * 2 + 1))
for a in $algos; do
    for c in off on; do
        bad=
        for w in skrB spawn; do
            out=$("$SIM" --algo "$a" --workload "$w" $SMALL --confirm "$c" --seed 5 --schedules "$N" 2>&1)
            rc=$?
            if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q ' violations=0 '; then
                bad="$w: $(printf '%s\n' "$out" | grep -m 1 VIOLATION)"
                break
            fi
        done
        ok "$([ -z "$bad" ]; echo $?)" "$a --confirm $c --busy-again 4: $N schedules each of skrB and spawn, safe and live"
        [ -z "$bad" ] || diag "$bad"
    done
done
k=$("$SIM" --algo bcj --workload skrB --ranks 8 --busy-again 4 --seed 5 --schedules 1 --verbose 2>&1 | grep -c 'busy again')
ok "$([ "$k" -ge 8 ]; echo $?)" "the runs have ranks taken for busy while idle ($k in one 8-rank run)"
done_testing
