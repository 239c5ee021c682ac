#!/bin/sh
# Ranks in MPI_Finalize while the others work on (tdsim --finalized; issue
# 41, the stall at MPI_Finalize; tests/mpi/finlate.sh runs the same under
# MPI): the last 1-3 ranks call td_finalize before the program starts and
# only answer control messages; the others run the multi-phase skrB
# (notification gating on) and spawn. Every algorithm, with and without
# confirmation, must announce every phase over TDSIM_SCHEDULES (default
# 300) adversarial schedules: an announcement a finalized rank learns must
# not shut it out of the next episode (td_announce_local). Before that fix
# every algorithm stopped after episode 1 of skrB ("event queue ran dry").
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim"
N=${TDSIM_SCHEDULES:-300}
SMALL="--ranks 2-12 --adversarial --depth 3 --phases 4 --local-tasks 3 --gens 4 --max-events 20000000"
algos=$("$SIM" --list-algos | grep -vx none) || { echo "1..0 # SKIP tdsim --list-algos failed"; exit 1; }
set -- $algos
plan $(($# * 2))
for a in $algos; do
    for c in off on; do
        bad=
        for k in 1 3; do
            for w in skrB spawn; do
                out=$("$SIM" --algo "$a" --workload "$w" $SMALL --finalized $k --confirm "$c" --seed 7 --schedules "$N" 2>&1)
                rc=$?
                if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q ' violations=0 '; then
                    bad="$w --finalized $k: $(printf '%s\n' "$out" | grep -m 1 VIOLATION)"
                    break 2
                fi
            done
        done
        ok "$([ -z "$bad" ]; echo $?)" "$a --confirm $c --finalized 1 and 3: $N schedules each of skrB and spawn, every phase announced"
        [ -z "$bad" ] || diag "$bad"
    done
done
done_testing
