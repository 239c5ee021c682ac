#!/bin/sh
# Issue 43's burst (bench/burst) natively, under bcj, cda and hcda of one
# library and under cda and hcda of another (the code before), alternating
# in each round. One line per run: ranks, round, variant, rank 1's seconds,
# control messages and primary messages of the whole job (JSON reports).
# usage: burst-ab.sh NP ROUNDS MODE NEW_LIB OLD_LIB BURST OUTDIR
#   MODE: both (to itself and to another rank), self, or peer (to another
#   rank only: rank 0 at 2 ranks); BURST_N messages each (default 10^5).
#   The median of each variant's seconds and its ratio to bcj's follow
#   the runs (lines "median").
NP=$1 R=$2 MODE=$3 NEW=$4 OLD=$5 BURST=$6 OUT=$7
N=${BURST_N:-100000}
all=$OUT/runs-$NP-$MODE
mkdir -p "$OUT" && : >"$all"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for r in $(seq "$R"); do
    for v in native bcj cda hcda old-cda old-hcda; do
        d=$OUT/$v-$r
        rm -rf "$d" && mkdir -p "$d"
        case $v in
        native) set -- ;;
        old-*) set -- -x LD_PRELOAD="$OLD" -x TDSHIM_ALGO="${v#old-}" -x TDSHIM_REPORT=json -x TDSHIM_REPORT_DIR="$d" ;;
        *) set -- -x LD_PRELOAD="$NEW" -x TDSHIM_ALGO="$v" -x TDSHIM_REPORT=json -x TDSHIM_REPORT_DIR="$d" ;;
        esac
        t=$(timeout 120 mpirun -np "$NP" "$@" "$BURST" "$N" 1000 "$MODE" 2>/dev/null | sed -n 's/.*seconds=//p')
        c=$(python3 -c '
import glob, json, sys
js = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json"))]
print(sum(j["control"]["sent"] for j in js), sum(j["primary"]["sent"] for j in js)) if js else print("- -")' "$d")
        echo "$NP $r $v ${t:-timeout} $c" | tee -a "$all"
    done
done
med() { awk -v v="$1" '$3 == v && $4 != "timeout" { print $4 }' "$all" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2); else print 0 }'; }
b=$(med bcj)
for v in native bcj cda hcda old-cda old-hcda; do
    m=$(med $v)
    awk -v v=$v -v m="$m" -v b="$b" -v np="$NP" -v mode="$MODE" \
        'BEGIN { printf "median %s %s ranks %s: %.4f s, %.3f of bcj\n", mode, np, v, m, (b > 0 ? m / b : 0) }'
done
