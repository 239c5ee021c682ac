#!/bin/sh
# A real run under the shim: report-prog (3 ranks) counts its own sends,
# receives and bytes; the report must say the same, validate against the
# schema, hold episodes, and summary.txt must have every section.
# TDSHIM_REPORT=none must write nothing.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$SHIMLIB" ] || bail_all 5 "shim/.libs/libtdshim.so not built"
[ -n "$PY" ] || bail_all 5 "python3 with jsonschema (Debian: python3-jsonschema) not found"
plan 7
P=$REPORT_DIR_T/report-prog
mkdir -p "$WORK/r"
$RUN -np 3 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_NOTIFY=none -x TDSHIM_REPORT_DIR="$WORK/r" \
    "$P" 40 2 >"$WORK/prog.out" 2>"$WORK/prog.err"
st=$?
D=$(ls -d "$WORK"/r/tdshim-report-*/ 2>/dev/null)
: "${D:=$WORK/no-report-dir}"
[ $st -eq 0 ] && [ -n "$D" ] && [ "$(ls "$D" | grep -c '^rank-.*\.json$')" -eq 3 ] && [ -f "$D/summary.txt" ]
ok $? "report-prog under the shim writes 3 rank files and summary.txt (exit $st)"
[ $st -eq 0 ] || diag "$(cat "$WORK/prog.err")"
$PY "$top_srcdir/tests/report/check_counts.py" "$SCHEMA" "$D" "$WORK/prog.out" >"$WORK/check.out" 2>&1
st=$?; diag "$(cat "$WORK/check.out")"
ok $st "JSON valid; counts and bytes equal the program's own; totals balance; episodes present"
missing=
for s in "Header" "Overhead per rank" "Across ranks" "Control messages" "Detection episodes and latency" \
    "Call sites" "Unreceived messages"; do
    grep -q "^@--- $s" "$D/summary.txt" || missing="$missing [$s]"
done
[ -z "$missing" ]
ok $? "summary.txt has every section$missing"
grep -q "^tdshim: report in .*tdshim-report-" "$WORK/prog.err"
ok $? "rank 0 printed the short summary on stderr"
# the node: 3 ranks on this machine's online CPUs; the summary line says
# the node was oversubscribed exactly when 3 is more (time in tdshim then
# holds waits for a core: user guide, Reports), and so does summary.txt's
# header, whose node line is there in either case
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)
nodes=$($PY -c 'import json, sys; print(" ".join("%d/%d" % (d["node"]["ranks"], d["node"]["online_cpus"]) for d in (json.load(open("%s/rank-%04d.json" % (sys.argv[1], r))) for r in range(3))))' "$D" 2>&1)
said=0
grep -qF "node oversubscribed (3 ranks on $cpus CPUs: time in tdshim includes waits for a core)" "$WORK/prog.err" && said=1
hdr=$(grep "^@ Node        : 3 of the job's ranks on $cpus online CPUs (rank 0's node)" "$D/summary.txt")
hsaid=0
case $hdr in *"; oversubscribed: time in tdshim includes waits for a core"*) hsaid=1 ;; esac
[ "$nodes" = "3/$cpus 3/$cpus 3/$cpus" ] && [ $said -eq $((3 > cpus)) ] && [ -n "$hdr" ] && [ $hsaid -eq $((3 > cpus)) ]
st=$? hnote=""
[ -n "$hdr" ] || hnote="; no node line in summary.txt"
ok $st "each rank's report has its node: 3 ranks on $cpus online CPUs ($nodes); oversubscribed said: $said, in summary.txt's header: $hsaid$hnote"
mkdir -p "$WORK/none"
$RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT=none -x TDSHIM_REPORT_DIR="$WORK/none" \
    "$P" 10 1 >/dev/null 2>"$WORK/none.err"
[ $? -eq 0 ] && [ -z "$(ls "$WORK/none" 2>/dev/null)" ] && ! grep -q "report in" "$WORK/none.err"
ok $? "TDSHIM_REPORT=none writes and prints no report"
# rank 0 enters MPI_Finalize 300 ms after the others: they wait there for
# it, as MPI_Finalize does natively; that is in their wall time
# (finalize_wait_s), not in their time in tdshim (it was, as the finalize
# category, before 2026-12-04)
mkdir -p "$WORK/late"
$RUN -np 3 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_NOTIFY=none -x TDSHIM_REPORT=json -x TDSHIM_REPORT_DIR="$WORK/late" \
    "$P" 10 1 300 >/dev/null 2>"$WORK/late.err"
st=$?
why=$($PY - "$WORK"/late/tdshim-report-*/ <<'PY'
import json, sys
bad = []
for r in range(3):
    d = json.load(open("%s/rank-%04d.json" % (sys.argv[1], r)))
    w, t, wall = d["finalize_wait_s"], d["tdshim_time"]["total_s"], d["wall_s"]
    print("rank %d: waited %.3f s, tdshim %.3f s, wall %.3f s" % (r, w, t, wall))
    if r and not (w >= 0.15 and t < 0.1 and wall >= w + t):  # 0.3 s less any delay of a loaded machine
        bad.append(r)
    if not r and not w < 0.15:
        bad.append(r)
sys.exit(1 if bad else 0)
PY
)
[ $? -eq 0 ] && [ $st -eq 0 ]
ok $? "a rank 300 ms late to MPI_Finalize: the others' wait there is in their wall time, not tdshim's (exit $st; $(echo $why))"
done_testing
