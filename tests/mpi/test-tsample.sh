#!/bin/sh
# The report's time in tdshim on a short run (shim/mpi/tds_state.h, time
# accounting): the fast paths are timed one call in TDS_TSAMPLE (1024) and
# weighted by it, the first timed call at a uniform place among the first
# 1024 (tds_init.c). When it was always the first call, the coldest, a
# 5 ms work_steal run at 2 ranks (about 730 sends a rank) reported 2-3.5 ms
# of send time on rank 0 in every run (its time in tdshim 23-29 % of its
# wall time), against 50-300 us with every call timed (TDSHIM_CALLSITES;
# 6-8 % now). Five runs; in at
# least four, every rank's time in tdshim must be under 15 % of its wall
# time (a sampled call that the machine preempts may still weigh 20 ms:
# TDS_TSAMPLE_CAP), and the sampled send time over the sends of the four
# runs with the least of it under 1 us a send (every call timed: about 70 ns; the first call
# weighted: 1.4-2.7 us).
TDSHIM_TEST_TIMEOUT=${TDSHIM_TEST_TIMEOUT:-90}
. "$top_srcdir/tests/mpi/test-examples-lib.sh"
plan 2
good=0 sum=0 calls=0
for i in 1 2 3 4 5; do
    dir="$work/rep-$i" out="$work/out"
    mkdir -p "$dir"
    env TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1 TDSHIM_REPORT=json timeout -k 5 60 "$RUN" \
        --algo bcj --notify tag:999 --report-dir "$dir" -np 2 "$EX/work_steal" --done-tag 999 --phases 100 \
        --linger-ms 0 --work-us 0 >"$out" 2>"$out.err"
    rc=$?
    v=$("${PYTHON3:-python3}" - "$dir" <<'PY'
import glob, json, sys
docs = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json")]
if len(docs) != 2:
    print("? 0 0"); sys.exit()
pct = max(d["tdshim_time"]["percent_of_wall"] for d in docs)
send = sum(d["tdshim_time"]["categories"]["send"]["seconds"] for d in docs)
n = sum(d["tdshim_time"]["categories"]["send"]["calls"] for d in docs)
print("%.1f %d %d" % (pct, round(send * 1e6), n))
PY
)
    set -- $v
    diag "run $i: exit $rc, the greater rank's time in tdshim $1 % of its wall time, sampled send time $2 us for $3 sends"
    case $1 in '?') continue ;; esac
    [ $rc -eq 0 ] && grep -q ' early=0 .* ok$' "$out" && [ "${1%.*}" -lt 15 ] && good=$((good + 1))
    echo "$2 $3" >>"$work/sends"
done
# the sends of the four runs with the least time a send: one sampled call
# the machine preempts weighs up to 20 ms (TDS_TSAMPLE_CAP), 2.8 us a send
# over five runs (CI, 2026-12-01, beside make -j2 check's other tests), so
# the worst run is left out as point 1 leaves one out; the first call
# weighted gave 1.4-2.7 us a send in every run
set -- $("${PYTHON3:-python3}" - "$work/sends" <<'PY'
import sys
runs = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
runs = sorted(runs, key=lambda r: r[0] / r[1] if r[1] else float("inf"))[:4]
print(sum(r[0] for r in runs), sum(r[1] for r in runs))
PY
)
sum=${1:-0} calls=${2:-0}
[ $good -ge 4 ]
ok $? "work_steal --work-us 0, 2 ranks, 5 runs: $good with every rank's time in tdshim under 15 % of its wall time"
[ $calls -gt 1000 ] && [ $((sum * 1000 / calls)) -lt 1000 ]
ok $? "sampled send time $sum us over $calls sends of the 4 best runs: $([ $calls -gt 0 ] && echo $((sum * 1000 / calls)) || echo '?') ns a send (under 1,000)"
done_testing
