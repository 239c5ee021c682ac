#!/bin/sh
# tdsim over every algorithm of the test core (tdsim-test --list-algos) and
# every workload (TDSIM_ALGOS: those alone): TDSIM_SCHEDULES (default 3000; make check-long-sim
# samples 10^7) seeded adversarial schedules
# per (algorithm, workload) pair, P drawn in 2..16 per seed, small workloads.
# One TAP line per pair; a failing pair prints the violation and its replay
# command. Pairs run two at a time (the machine has 2 cores).
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
N=${TDSIM_SCHEDULES:-3000}
SMALL="--ranks 2-16 --adversarial --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
WORKLOADS="ring tree skrA skrB skrC skrD bcj5 spawn"
algos=${TDSIM_ALGOS:-$("$SIM" --list-algos)} || { echo "1..0 # SKIP tdsim-test --list-algos failed"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

pairs=
for a in $algos; do for w in $WORKLOADS; do pairs="$pairs $a:$w"; done; done
set -- $pairs
plan $#

run_pair() { # run_pair INDEX ALGO WORKLOAD SEED
    "$SIM" --algo "$2" --workload "$3" $SMALL --seed "$4" --schedules "$N" >"$tmp/$1.out" 2>&1
    echo $? >"$tmp/$1.rc"
}

i=0
start=$(date +%s)
while [ $# -gt 0 ]; do
    # two pairs at a time; every pair gets its own block of seeds
    a1=${1%%:*} w1=${1##*:}; run_pair $i "$a1" "$w1" $((1 + i * N)) & i1=$i; i=$((i + 1)); shift
    i2=
    if [ $# -gt 0 ]; then
        a2=${1%%:*} w2=${1##*:}; run_pair $i "$a2" "$w2" $((1 + i * N)) & i2=$i; i=$((i + 1)); shift
    fi
    wait
    for k in $i1 $i2; do
        rc=$(cat "$tmp/$k.rc")
        name=$(sed -n 's/^summary algo=\([^ ]*\) workload=\([^ ]*\).*/\1 \2/p' "$tmp/$k.out")
        [ -n "$name" ] || name=$(sed -n 's/.*(algo \([^,]*\), workload \([^,]*\),.*/\1 \2/p' "$tmp/$k.out")
        ok "$rc" "$N adversarial schedules, zero violations: $name"
        [ "$rc" -eq 0 ] || diag "$(cat "$tmp/$k.out")"
    done
done
diag "elapsed $(( $(date +%s) - start )) s for $i pairs x $N schedules"
done_testing
