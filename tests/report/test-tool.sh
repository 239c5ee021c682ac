#!/bin/sh
# scripts/tdshim-report on real runs (bcj and none on report-prog): tables
# with every section and the run's numbers, --vs, PNG plots (or the text
# fallback, said on stderr, when matplotlib is missing), exit codes.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$SHIMLIB" ] || bail_all 7 "shim/.libs/libtdshim.so not built"
TOOL=$top_srcdir/scripts/tdshim-report
PYT=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then PYT=$p; break; fi
done
[ -n "$PYT" ] || PYT=python3
plan 7
P=$REPORT_DIR_T/report-prog
for a in bcj none; do
    mkdir -p "$WORK/$a"
    $RUN -np 3 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_NOTIFY=none -x TDSHIM_ALGO=$a -x TDSHIM_REPORT_DIR="$WORK/$a" \
        "$P" 30 2 >"$WORK/$a.prog" 2>&1 || diag "run with $a failed: $(cat "$WORK/$a.prog")"
done
$PYT "$TOOL" "$WORK/bcj" --no-plots >"$WORK/t1.out" 2>"$WORK/t1.err"
st=$?
missing=
for s in "Header" "Overhead per rank" "Across ranks" "Control messages" "Detection episodes and latency" \
    "Call sites" "Unreceived messages"; do
    grep -q "^@--- $s" "$WORK/t1.out" || missing="$missing [$s]"
done
[ $st -eq 0 ] && [ -z "$missing" ]
ok $? "tables from a real run: every section (exit $st)$missing"
# the tool's totals are the program's: 3 ranks x 60 messages
sent=$(sed -n 's/^primary messages sent  *\([0-9]*\)  *\([0-9.]*\)  *\([0-9]*\)$/\1 \2 \3/p' "$WORK/t1.out")
want=$(sed -n 's/.* sent \([0-9]*\) sent_bytes.*/\1/p' "$WORK/bcj.prog" | sort -n | awk '{a[NR]=$1} END {print a[1], a[2], a[NR]}')
[ -n "$sent" ] && [ "$sent" = "$want" ]
ok $? "min/median/max of primary messages sent match the program ($sent vs $want)"
$PYT "$TOOL" "$WORK/bcj" --vs "$WORK/none" --plots "$WORK/plots" >"$WORK/vs.out" 2>"$WORK/vs.err"
st=$?
[ $st -eq 0 ] && grep -q "^@--- Comparison: A = bcj" "$WORK/vs.out" && grep -q "B = none" "$WORK/vs.out" &&
    grep -q "^control messages sent (total)" "$WORK/vs.out"
ok $? "--vs compares bcj with none (exit $st)"
if "$PYT" -c 'import matplotlib' 2>/dev/null; then
    good=0
    for f in overhead control timeline overhead-vs control-vs timeline-vs compare; do
        png=$WORK/plots/$f.png
        [ -s "$png" ] && [ "$(head -c 4 "$png" | tail -c 3)" = "PNG" ] && good=$((good + 1))
    done
    [ $good -eq 7 ]
    ok $? "7 non-empty PNG plots written ($good)"
else
    skip "no python3 with matplotlib here (Debian: python3-matplotlib)"
fi
# a matplotlib that fails to import, whatever is installed: the text fallback
mkdir -p "$WORK/nompl/matplotlib"
echo 'raise ImportError("hidden by test-tool.sh")' >"$WORK/nompl/matplotlib/__init__.py"
PYTHONPATH="$WORK/nompl" $PYT "$TOOL" "$WORK/bcj" --plots "$WORK/plots2" >"$WORK/fb.out" 2>"$WORK/fb.err"
st=$?
[ $st -eq 0 ] && grep -q "matplotlib is not available" "$WORK/fb.err" && grep -q "^@--- Header" "$WORK/fb.out" &&
    [ -z "$(ls "$WORK/plots2" 2>/dev/null)" ]
ok $? "without matplotlib: tables, no plots, and a message saying so (exit $st)"
$PYT "$TOOL" --help >/dev/null 2>&1
ok $? "--help exits 0"
$PYT "$TOOL" "$WORK/nonexistent" >/dev/null 2>&1; a=$?
$PYT "$TOOL" --bogus "$WORK/bcj" >/dev/null 2>&1; b=$?
[ $a -eq 1 ] && [ $b -eq 2 ]
ok $? "exit 1 for a directory without a report ($a), 2 for a usage error ($b)"
done_testing
