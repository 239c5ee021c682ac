#!/bin/sh
# The oracle works: every deliberately broken variant (tdsim-test
# --list-broken, flagged TD_ALGO_BROKEN) must be caught, i.e. tdsim exits 1
# with a "VIOLATION SAFETY" line, within 10^4 adversarial schedules on at
# least one workload. The replay line it prints must reproduce the violation.
#
# A variant that is only caught with "--barrier passive --leave activity" (a
# rank blocked in a phase barrier counts as passive, then leaves it with
# td_activity) is
# reported as TODO: that mode also breaks the correct wave algorithms (see
# tests/sim/README-sim.md), so it proves nothing about the variant.
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
N=${TDSIM_SCHEDULES:-10000}
SMALL="--ranks 2-16 --adversarial --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
WORKLOADS="spawn tree skrA skrB ring skrC skrD bcj5"
broken=$("$SIM" --list-broken)
set -- $broken
if [ $# -eq 0 ]; then echo "1..0 # SKIP no broken variants in this core"; exit 0; fi
plan $#
for b in $broken; do
    caught=
    for w in $WORKLOADS; do
        out=$("$SIM" --algo "$b" --workload "$w" $SMALL --schedules "$N" 2>&1)
        if [ $? -eq 1 ] && printf '%s\n' "$out" | grep -q '^VIOLATION SAFETY:'; then
            caught=$w
            break
        fi
    done
    if [ -n "$caught" ]; then
        ok 0 "$b caught on $caught"
        diag "$out"
        continue
    fi
    # the barrier's exit as td_activity (--leave activity): in that mode a
    # collective at the root (skr_on_collective) would fail the wave the
    # variant gets wrong
    out=$("$SIM" --algo "$b" --workload skrB $SMALL --barrier passive --leave activity --schedules "$N" 2>&1)
    if [ $? -eq 1 ] && printf '%s\n' "$out" | grep -q '^VIOLATION SAFETY:'; then
        tap_n=$((tap_n + 1))
        echo "not ok $tap_n - $b caught only with --barrier passive # TODO needs td_activity semantics in the core, see README-sim.md"
        diag "$out"
    else
        ok 1 "$b caught on some workload"
    fi
done
done_testing
