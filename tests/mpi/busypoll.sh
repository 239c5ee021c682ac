#!/bin/sh
# A busy rank's polls out of scope (issue 37; tds_progress.h
# tds_unscoped_quick, tds_complete.c rq_scope): work_steal under its
# recipe (TDSHIM_IDLE=test, the steal-request tag and empty "no work"
# replies ignored) tests its standing steal-request receive every 4 nodes
# while it works. At --work-us 0 and 1, under bcj, skr and xulau: the run
# ends right (exact count, no rank notified before the last ran out of
# work: early=0), and the reports count polls out of scope (polls.unscoped
# > 0: the path ran; a run that never reached it fails). No timing is
# asserted: scripts/check's sanitizer step runs it too.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
EX="$top_builddir/examples/work_steal"
plan 6
for algo in bcj skr xulau; do
    for wu in 0 1; do
        dir="$TMPD/rep-$algo-$wu" out="$TMPD/out-$algo-$wu"
        mkdir -p "$dir"
        run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$algo TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 \
            TDSHIM_IGNORE_EMPTY=1 TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
            "$EX" --done-tag 999 --phases 10 --linger-ms 0 --work-us $wu >"$out" 2>"$out.err"
        rc=$?
        u=$("${PYTHON3:-python3}" - "$dir" <<'PY'
import glob, json, sys
docs = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json")]
print(sum(d["polls"]["unscoped"] for d in docs) if len(docs) == 2 else "?")
PY
)
        res=$(sed -n 's/^RESULT .* \(early=[0-9]*\) .* \([a-zA-Z]*\)$/\1 \2/p' "$out")
        [ $rc -eq 0 ] && grep -q ' early=0 .* ok$' "$out" && case $u in '' | *[!0-9]*) false ;; *) [ "$u" -gt 0 ] ;; esac
        ok $? "work_steal --work-us $wu, $algo, test with tag 1 and empty replies ignored: ${res:-no RESULT} (exit $rc), $u polls out of scope"
        [ $rc -eq 0 ] || diag "$(tail -n 3 "$out.err")"
    done
done
done_testing
