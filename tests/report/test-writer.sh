#!/bin/sh
# The report writer without the shim (test-writer.c fills known values):
# the JSON files validate against shim/report/schema.json and hold exactly
# those values; aligned times, Idle2End and the global latency in
# summary.txt follow from them; the text summary has its sections; a
# second run with the same TDSHIM_REPORT_DIR gets a new directory and
# leaves the first report untouched; the default parent is ".".
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$PY" ] || bail_all 6 "python3 with jsonschema (Debian: python3-jsonschema) not found"
plan 6
W=$REPORT_DIR_T/test-writer
P=$WORK/parent
$RUN -np 3 "$W" "$P" >"$WORK/run1.out" 2>&1
st=$?
D1=$(ls -d "$P"/tdshim-report-*/ 2>/dev/null)
[ $st -eq 0 ] && [ "$(echo "$D1" | wc -w)" -eq 1 ]
ok $? "3 ranks write one report directory under TDSHIM_REPORT_DIR ($D1)"
$PY "$top_srcdir/tests/report/check_writer.py" "$SCHEMA" "$D1" 3 >"$WORK/check.out" 2>&1
st=$?; diag "$(cat "$WORK/check.out")"
ok $st "JSON valid against the schema; values, aligned times, latency and sections as written"
sum1=$(cat "$D1"/* | cksum)
$RUN -np 3 "$W" "$P" >"$WORK/run2.out" 2>&1
D2=$(ls -d "$P"/tdshim-report-*/ | grep -v "^$D1\$")
[ "$(echo "$D2" | wc -w)" -eq 1 ] && [ "$(cat "$D1"/* | cksum)" = "$sum1" ] && grep -q "report in .*$(basename "$D2")" "$WORK/run2.out"
ok $? "a second run gets its own directory ($(basename "$D2")) and leaves the first untouched"
$PY "$top_srcdir/tests/report/check_writer.py" "$SCHEMA" "$D2" 3 >/dev/null 2>&1
ok $? "the second report is complete and valid"
mkdir -p "$WORK/cwd" && (cd "$WORK/cwd" && $RUN -np 2 "$W" "" >"$WORK/def1.out" 2>&1 && $RUN -np 2 "$W" "" >"$WORK/def2.out" 2>&1)
n=$(ls -d "$WORK"/cwd/tdshim-report-*/ 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && [ "$(ls "$WORK"/cwd/tdshim-report-*/rank-*.json | wc -l)" -eq 4 ]
ok $? "two runs with the default parent (.) make two tdshim-report-* directories ($n)"
grep -q "tdshim: report in" "$WORK/def1.out" && grep -q "time in tdshim" "$WORK/def1.out"
ok $? "rank 0 prints the short summary on stderr"
done_testing
