#!/bin/sh
# The sampling at scale (`make check-long`, issue 15): SCHEDULES (default
# 10^7) adversarial schedules spread evenly over every detector of
# `tdsim --list-algos` (not the `none` baseline), every workload and both
# confirmation settings, at 2-16 ranks drawn per schedule, all checked by
# tdsim's ground-truth oracle. Cells are cut into chunks of at most CHUNK
# schedules with disjoint seed ranges and run JOBS at a time.
#
#   SCHEDULES=10000000 JOBS=2 tests/sim/schedules-long.sh    (from the build dir)
#
# TAP: one point per (algorithm, confirm) pair, failed by any violation or
# error in any of its schedules; a table of the schedules actually run and
# the wall-clock time goes to the diagnostics (bench/RESULTS.md keeps it).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/tap.sh"
SIM="${top_builddir:-.}/tests/sim/tdsim"
TOTAL=${SCHEDULES:-10000000}
CHUNK=${CHUNK:-50000}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
WORKLOADS="ring tree skrA skrB skrC skrD bcj5 spawn"
ALGOS=$("$SIM" --list-algos | grep -vx none)
[ -n "$ALGOS" ] || { echo "Bail out! $SIM --list-algos gave nothing"; exit 1; }

ncells=0
for a in $ALGOS; do for w in $WORKLOADS; do ncells=$((ncells + 2)); done; done
per=$(( (TOTAL + ncells - 1) / ncells ))

out=$(mktemp -d "${TMPDIR:-/tmp}/tdsim-long.XXXXXX")
trap 'rm -rf "$out"' EXIT
jobs="$out/jobs"
: >"$jobs"
for a in $ALGOS; do
    for c in off on; do
        for w in $WORKLOADS; do
            left=$per seed=1
            while [ "$left" -gt 0 ]; do
                n=$CHUNK; [ "$n" -gt "$left" ] && n=$left
                echo "$a $c $w $seed $n" >>"$jobs"
                seed=$((seed + n)) left=$((left - n))
            done
        done
    done
done

t0=$(date +%s)
# one chunk: its summary line, prefixed with the cell, or an ERROR line
xargs -P "$JOBS" -L 1 sh -c '
    r=$("$0" --algo "$1" --confirm "$2" --workload "$3" --ranks 2-16 --adversarial \
          --seed "$4" --schedules "$5" 2>&1)
    st=$?
    r=$(printf "%s\n" "$r" | tail -n 1)
    printf "%s %s %s %s %s exit=%s %s\n" "$1" "$2" "$3" "$4" "$5" "$st" "$r"
' "$SIM" <"$jobs" >"$out/results"
t1=$(date +%s)

plan $(( $(echo "$ALGOS" | wc -w) * 2 ))
total_run=0
for a in $ALGOS; do
    for c in off on; do
        lines=$(grep "^$a $c " "$out/results")
        n=$(printf '%s\n' "$lines" | awk '$7 ~ /^summary/ && $6 == "exit=0" { n += $5 } END { print n + 0 }')
        v=$(printf '%s\n' "$lines" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^violations=/) { split($i, x, "="); v += x[2] } } END { print v + 0 }')
        bad=$(printf '%s\n' "$lines" | awk '$6 != "exit=0" || $7 !~ /^summary/' | head -n 3)
        total_run=$((total_run + n))
        ok $([ "$v" = 0 ] && [ -z "$bad" ] && [ "$n" -ge $((per * 8)) ]; echo $?) \
            "$a confirm=$c: $n schedules over 8 workloads, $v violations"
        [ -z "$bad" ] || diag "$bad"
    done
done
diag "schedules run: $total_run in $((t1 - t0)) s with $JOBS jobs ($per per algorithm x confirm x workload, ranks 2-16, adversarial)"
done_testing
