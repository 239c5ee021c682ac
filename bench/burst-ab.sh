#!/bin/sh
# Issue 43's burst (bench/burst) natively, under bcj, cda and hcda of one
# library and under cda and hcda of another (the code before), alternating
# in each round. One line per run: ranks, round, variant, rank 1's seconds,
# control messages and primary messages of the whole job (JSON reports).
# usage: burst-ab.sh NP ROUNDS MODE NEW_LIB OLD_LIB BURST OUTDIR
#   MODE: both (to itself and to another rank) or self; 10^5 messages each
NP=$1 R=$2 MODE=$3 NEW=$4 OLD=$5 BURST=$6 OUT=$7
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
        t=$(timeout 120 mpirun -np "$NP" "$@" "$BURST" 100000 1000 "$MODE" 2>/dev/null | sed -n 's/.*seconds=//p')
        c=$(python3 -c '
import glob, json, sys
js = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json"))]
print(sum(j["control"]["sent"] for j in js), sum(j["primary"]["sent"] for j in js)) if js else print("- -")' "$d")
        echo "$NP $r $v ${t:-timeout} $c"
    done
done
