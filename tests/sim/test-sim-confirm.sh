#!/bin/sh
# Confirmation waves (td_engine.c, tdsim --confirm on; TDSHIM_CONFIRM): with
# every proof confirmed by two count waves, every algorithm stays safe and
# live over TDSIM_SCHEDULES (default 2000) adversarial schedules on the
# spawn and multi-phase skrB workloads, and the confirmation costs the two
# waves: 4 (P - 1) more control messages per announcement at a fixed P.
# (test-confirm.c shows the waves refuting a misjudged rank.)
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
N=${TDSIM_SCHEDULES:-2000}
SMALL="--ranks 2-12 --adversarial --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
algos=$("$SIM" --list-algos) || { echo "1..0 # SKIP tdsim-test --list-algos failed"; exit 1; }
set -- $algos
plan $(($# * 2 + 1))
for a in $algos; do
    for w in spawn skrB; do
        out=$("$SIM" --algo "$a" --workload "$w" $SMALL --confirm on --seed 3 --schedules "$N" 2>&1)
        rc=$?
        [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q ' violations=0 '
        st=$?
        ok $st "$a $w --confirm on: $N schedules, safe and live"
        [ $st -eq 0 ] || diag "$(printf '%s\n' "$out" | tail -n 3)"
    done
done
ctl() { "$SIM" --algo bcj --workload spawn --ranks 8 --seed 5 --schedules 50 --confirm "$1" | sed -n 's/.* ctl=\([0-9.]*\) .*/\1/p'; }
off=$(ctl off) on=$(ctl on)
awk -v a="$off" -v b="$on" 'BEGIN { exit !(b - a == 28) }'
ok $? "bcj P=8: confirmation adds 4(P-1) = 28 control messages per announcement ($off -> $on)"
done_testing
