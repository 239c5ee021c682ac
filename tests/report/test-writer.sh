#!/bin/sh
# The report writer without the shim (test-writer.c fills known values):
# the JSON files validate against shim/report/schema.json and hold exactly
# those values; aligned times, Idle2End and the global latency in
# summary.txt follow from them; the text summary has its sections; a
# second run with the same TDSHIM_REPORT_DIR gets a new directory and
# leaves the first report untouched; the default parent is "."; a run of
# a million episodes keeps the first 1,024 and the last 4,096 per rank, and
# its summary lists 48 of them and the UNSAFE ones (Debian's Ray assembler
# made 644,418 in 52 s: the files then took 378 MB and the summary's
# grouping, quadratic, held rank 0 in MPI_Finalize for more than 15 minutes).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$PY" ] || bail_all 7 "python3 with jsonschema (Debian: python3-jsonschema) not found"
plan 7
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
over="node oversubscribed (4 ranks on 2 CPUs: time in tdshim includes waits for a core)"
grep -q "tdshim: report in" "$WORK/def1.out" && grep -q "time in tdshim" "$WORK/def1.out" &&
    grep -qF "$over" "$WORK/run1.out" && ! grep -q "oversubscribed" "$WORK/def1.out"
ok $? "rank 0 prints the short summary on stderr, saying when a rank's node was oversubscribed (rank 2 of 3)"
M=1000000
$RUN -np 2 "$W" "$WORK/many" $M >"$WORK/many.out" 2>&1
st=$?
DM=$(ls -d "$WORK"/many/tdshim-report-*/ 2>/dev/null)
[ $st -eq 0 ] && [ "$(echo "$DM" | wc -w)" -eq 1 ] &&
    $PY - "$SCHEMA" "$DM" $M "$WORK/many.out" >"$WORK/many.check" 2>&1 <<'PY'
import json, sys, jsonschema
schema, d, m, out = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), open(sys.argv[4]).read()
for r in (0, 1):
    j = json.load(open("%s/rank-%04d.json" % (d, r)))
    jsonschema.validate(j, schema)
    eps = [e["episode"] for e in j["episodes"]]
    want = list(range(1, 1025)) + list(range(m - 4095, m + 1))
    assert eps == want, "rank %d lists %d episodes: %s ... %s" % (r, len(eps), eps[:3], eps[-3:])
    assert j["episodes_omitted"] == m - 5120, j["episodes_omitted"]
    unsafe = [e["episode"] for e in j["episodes"] if e["unsafe"]]
    assert unsafe == ([7] if r == 0 else [m - 1000]), unsafe
s = open(d + "/summary.txt").read().splitlines()
rows = [l for l in s if l.split()[:1] and l.split()[0].isdigit() and l.rstrip().endswith(("ok", "UNSAFE"))]
assert len(rows) == 16 + 32 + 1, "%d table rows" % len(rows)
assert "%d episodes; the ranks kept the first 1024 and the last 4096, 5120 in all" % m in "\n".join(s)
assert "Episode 7 UNSAFE" in "\n".join(s) and "Episode %d UNSAFE" % (m - 1000) in "\n".join(s)
assert "%d episode(s) at rank 0" % m in out and "2 UNSAFE EPISODES of the 5120 kept" in out, out
print("kept 1..1024 and %d..%d, %d omitted, %d summary lines" % (m - 4095, m, m - 5120, len(s)))
PY
st=$?; diag "$(cat "$WORK/many.check")"
ok $st "$M episodes: each rank keeps the first 1024 and the last 4096 ($(du -sk "$DM" 2>/dev/null | cut -f1) KiB of files), the summary lists 49"
done_testing
