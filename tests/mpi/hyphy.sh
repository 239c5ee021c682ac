#!/bin/sh
# A third-party MPI program under tdshim: HyPhy (Debian's hyphy-mpi, linked
# with Open MPI, installed by scripts/deps), the phylogenetics package, on
# a FEL selection analysis of its own example alignment (p51.nex: HIV
# reverse transcriptase). Its master hands the per-site likelihood fits to
# its workers one at a time and takes their answers from MPI_ANY_SOURCE,
# 363 messages each way at 2 ranks. 3 ranks (a master and two workers;
# the fits depend on how they are spread, and native runs at 3 ranks agree
# with each other): the fitted values and the fits' statistics (the JSON's
# MLE content and fits) must be the native run's exactly, and the reports
# must balance; under bcj and skr header-free (make check-long-thirdparty:
# cda too; tp_cfg). About 15 s a run.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG=${HYPHY_CFG:-$(tp_cfg "bcj skr:none" "bcj cda skr:none")}
NP=3
npoints=$((1 + 2 * $(echo $CFG | wc -w)))
plan $npoints
HY=${HYPHYMPI:-/usr/lib/hyphy/bin/HYPHYMPI}
HYLIB=${HYPHY_LIB:-/usr/share/hyphy}
tp_need_ompi $npoints "$HY" hyphy-mpi
[ -f "$HYLIB/data/p51.nex" ] || tp_skip_all $npoints "no $HYLIB/data/p51.nex (hyphy-common)"

# fel NAME [VAR=value...]: one run in $TMPD/NAME; the analysis's fitted
# values and fit statistics, as canonical JSON, in $TMPD/NAME/facts
fel() {
    d="$TMPD/$1"
    shift
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=300 run_mpi $NP "$@" -- "$HY" LIBPATH="$HYLIB/" \
        "$HYLIB/TemplateBatchFiles/SelectionAnalyses/FEL.bf" --alignment "$HYLIB/data/p51.nex" \
        --output "$d/fel.json" >"$d/out" 2>"$d/err")
    f_rc=$?
    "${PYTHON3:-python3}" -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({"mle": j["MLE"]["content"], "fits": j["fits"]}, sort_keys=True))' "$d/fel.json" >"$d/facts" 2>/dev/null ||
        : >"$d/facts"
    return $f_rc
}
fel native
rc=$?
[ -s "$TMPD/native/facts" ] || rc=1
ok $rc "native, $NP ranks: FEL ends, its fits written ($(grep -a -o 'Found _[0-9]*_ sites under pervasive positive diversifying and _[0-9]*_' "$TMPD/native/out" | tr -d _))"
[ $rc -eq 0 ] || tail -n 5 "$TMPD/native/err" | sed 's/^/# /'
for cfg in $CFG; do
    cfg_parse "$cfg"
    name="$a-$pb"
    fel "$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/$name"
    rc=$?
    tp_points "$a, piggyback $pb" "FEL ends, its fitted values and fit statistics native's exactly" \
        "$TMPD/native" "$TMPD/$name" $rc $NP
done
