#!/bin/sh
# Notification and episodes (TDSHIM_NOTIFY, DESIGN.md §1), finalize and
# measurement:
#  - tag:N: one notification per quiescent point, never two (tdprog keeps
#    polling after the last one), a phase without messages is notified,
#    at 4 and 8 ranks;
#  - exit[:code]: a program that would poll forever is ended with the code;
#  - none (measure mode): a program that ends by itself is unchanged and
#    the report records the detection, the counts and no unreceived message;
#  - messages never received are reported at finalize; contract violations
#    are counted and warned about once per rank;
#  - TDSHIM_IGNORE_TAGS: messages on those tags keep the header (a receiver
#    with MPI_ANY_TAG sees the same layout) but are not primary;
#  - header-free (skr, fourcounter, termdetect): the program's own empty
#    messages to itself on the notification tag (tdprog TDPROG_MARK) are
#    told from the notifications, counted or on an ignored tag, and the
#    same program under bcj (with a header) as the reference;
#  - MPI_THREAD_MULTIPLE is granted as natively;
#  - TDSHIM_CALLSITES names the program's functions in the report.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

plan 21
for n in 4 8; do
    run_mpi $n LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 -- \
        "$B/tdprog" probe 6 999 20 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    good=$(grep -c 'phases 6 notified 6 extra 0 tokens_seen 1 episodes 6$' "$TMPD/out")
    [ $rc -eq 0 ] && [ "$good" -eq $n ]
    ok $? "tag:999 at $n ranks: 6 phases (2 without messages), exactly 6 notifications per rank"
    [ "$good" -eq $n ] || sed 's/^/# /' "$TMPD/out" "$TMPD/err" | head -12
done

t0=$(date +%s)
run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=exit:3 -- \
    "$B/tdprog" probe 1 999 30 >"$TMPD/out" 2>"$TMPD/err"
rc=$? t=$(( $(date +%s) - t0 ))
[ $rc -eq 3 ] && [ $t -lt 25 ] && [ ! -s "$TMPD/out" ]
ok $? "exit:3 ends a polling program at quiescence with status 3 (rc=$rc, ${t}s)"
run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=exit -- \
    "$B/tdprog" blocking 1 999 30 >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$TMPD/out" ]
ok $? "exit ends a program blocked in MPI_Recv with status 0 (rc=$rc)"

# measure mode on a program that ends by its own means. Under MPICH with
# a header, the transparency program's truncated receives arrive without
# one (MPICH writes nothing then) and cannot be counted (README "MPI
# libraries"): there the header-free skr, which counts them, runs instead
malgo=bcj
[ "$MPI_FLAVOUR" = hydra ] && malgo=skr
run_mpi 3 -- "$B/transparency" >"$TMPD/native" 2>/dev/null
mkdir "$TMPD/rep"
run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_ALGO=$malgo TDSHIM_NOTIFY=none TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/rep" -- \
    "$B/transparency" >"$TMPD/shim" 2>"$TMPD/err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/shim"
ok $? "measure mode: output unchanged (rc=$rc)"
json=$(find "$TMPD/rep" -name 'rank-*.json' | sort)
[ "$(echo "$json" | grep -c .)" -eq 3 ]
ok $? "measure mode: one JSON report per rank"
n=0
for f in $json; do grep -q '"episode": 1,' "$f" && n=$((n + 1)); done
[ $n -eq 3 ]
ok $? "measure mode: every rank recorded the detection of episode 1 at finalize"
python3 - "$TMPD/rep" <<'PY'
import glob, json, sys
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*/rank-*.json'))]
sent = sum(r['primary']['sent'] for r in reps)
recv = sum(r['primary']['received'] for r in reps)
unrec = sum(r['primary']['unreceived_at_finalize'] for r in reps)
canc = sum(r['primary']['cancelled_receives'] for r in reps)
# transparency sends per rank: a fixed program, so the totals are known
ok = sent == recv and sent > 40 * len(reps) and unrec == 0 and canc == 2 * len(reps)  # t_errors cancels 2
print('# sent %d received %d unreceived %d cancelled %d' % (sent, recv, unrec, canc))
sys.exit(0 if ok else 1)
PY
ok $? "measure mode: primaries sent = received, none unreceived, two cancelled receives per rank"
# the warning of a violation itself: the one of a premature announcement
# also names "the contract violations" (tds_state.c), and whether measure
# mode's background detection announces while the program still sends, and
# a rank then proves it premature, depends on timing (a fresh-clone CI run
# over TCP at 93bc5e2 counted more than 3 lines)
viol=$(grep -c '^tdshim: rank [0-9]*: a primary message .*: a contract violation' "$TMPD/err")
ranks=$(sed -n 's/^tdshim: rank \([0-9]*\): a primary message .*: a contract violation.*/\1/p' "$TMPD/err" | sort -u | wc -l)
[ "$viol" -eq 3 ] && [ "$ranks" -eq 3 ]
st=$?
[ $st -eq 0 ] || diag "$viol violation warnings from $ranks ranks; stderr:" "$(grep '^tdshim:' "$TMPD/err" | cut -c1-160)"
ok $st "contract violations (sends after an empty poll) are warned once per rank"

# a message nobody receives is reported at finalize (tdprog's notification
# is a zero-byte message; here phase 1's tokens are left behind: with
# TDSHIM_IDLE=blocking a probe program is never detected, gives up after
# 1 s and ends with tokens still queued)
# MPI_Finalize does not wait for them: once every rank is in MPI_Finalize the
# counts are final, so the episode closes at once (default
# TDSHIM_FINALIZE_TIMEOUT=10 s) and the run takes less than 1 s more than
# natively; the report names their tag (1, tdprog's work tag).
# (the fastest of three runs each, alternating: this program's run time is
# bimodal, 2.3 or 3.3 s, natively and under tdshim alike)
mkdir "$TMPD/rep2"
tn=1000 ts=1000 fn=1000 fs=1000
for k in 1 2 3; do
    t0=$(date +%s.%N)
    run_mpi 2 -- "$B/tdprog" sleepy 2 999 1 >/dev/null 2>"$TMPD/nerr"
    t1=$(date +%s.%N)
    rm -rf "$TMPD/rep2" && mkdir "$TMPD/rep2"
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE=blocking TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$TMPD/rep2" -- "$B/tdprog" sleepy 2 999 1 >"$TMPD/out" 2>"$TMPD/err"
    t2=$(date +%s.%N)
    tn=$(awk -v a="$t0" -v b="$t1" -v m="$tn" 'BEGIN { d = b - a; print (d < m ? d : m) }')
    fn=$(awk -v m="$fn" '/MPI_Finalize took/ { if ($6 > x) x = $6 } END { print (x < m ? x : m) }' "$TMPD/nerr")
    fs=$(awk -v m="$fs" '/MPI_Finalize took/ { if ($6 > x) x = $6 } END { print (x < m ? x : m) }' "$TMPD/err")
    ts=$(awk -v a="$t1" -v b="$t2" -v m="$ts" 'BEGIN { d = b - a; print (d < m ? d : m) }')
done
python3 - "$TMPD/rep2" <<'PY'
import glob, json, sys
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*/rank-*.json'))]
unrec = sum(r['primary']['unreceived_at_finalize'] for r in reps)
sent = sum(r['primary']['sent'] for r in reps)
recv = sum(r['primary']['received'] for r in reps)
tags = {}
for r in reps:
    for t in r['primary']['unreceived_by_tag']:
        tags[t['tag']] = tags.get(t['tag'], 0) + t['messages']
print('# sent %d received %d unreceived %d, queued by tag %s' % (sent, recv, unrec, tags))
sys.exit(0 if len(reps) == 2 and unrec > 0 and unrec == sent - recv and tags == {1: unrec} else 1)
PY
ok $? "messages sent but never received are counted at finalize, with their tag"
# MPI_Finalize's own duration (tdprog prints it per rank), slowest rank,
# fastest of the three runs each: the whole-run times are printed too but
# not compared (this program's run time is bimodal, 2.3 or 3.3 s, from its
# own per-phase deadline, natively and under tdshim alike)
awk -v n="$tn" -v s="$ts" 'BEGIN { printf "# whole runs: native %.2f s, tdshim %.2f s (fastest of 3 each)\n", n, s }'
awk -v n="$fn" -v s="$fs" 'BEGIN { printf "# MPI_Finalize: native %.3f s, tdshim %.3f s (slowest rank, fastest of 3 runs)\n", n, s; exit !(s - n < 1.0) }'
ok $? "MPI_Finalize does not wait for unreceived messages: less than 1 s more than native"
grep -q 'not proven within\|not detected within' "$TMPD/err"
[ $? -ne 0 ]
ok $? "no timeout line when messages are left unreceived"

# ignored tags: transparency's tags 10-19 (blocking section) are ignored
mkdir "$TMPD/rep3"
run_mpi 2 -- "$B/transparency" >"$TMPD/native2" 2>/dev/null
run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_IGNORE_TAGS=10-19 TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/rep3" \
    TDSHIM_CALLSITES=5 -- "$B/transparency" >"$TMPD/shim2" 2>"$TMPD/err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$TMPD/native2" "$TMPD/shim2"
ok $? "TDSHIM_IGNORE_TAGS=10-19: output unchanged (rc=$rc)"
python3 - "$TMPD/rep3" "$TMPD/rep" <<'PY'
import glob, json, sys
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*/rank-*.json'))]
ign = [r['primary']['ignored'] for r in reps]
sent = [r['primary']['sent'] for r in reps]
sites = [s['function'] for r in reps for s in r['callsites']['send']['top']]
print('# ignored %s sent %s send sites %s' % (ign, sent, sites))
# tags 10-19: 5 messages sent and 5 received per rank at 2 ranks (3 modes, Rsend, Sendrecv)
ok = len(reps) == 2 and all(i == 10 for i in ign) and all(s > 0 for s in sent)
ok = ok and any(f.startswith('t_') or f == 'main' for f in sites)
sys.exit(0 if ok else 1)
PY
ok $? "ignored tags are counted as ignored, not primary; call sites name the program's functions"

out=$(run_mpi 2 -- "$B/tdprog" threads 2>/dev/null)
[ "$out" = "provided multiple" ]
ok $? "native Open MPI provides MPI_THREAD_MULTIPLE ($out)"
out=$(run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none -- "$B/tdprog" threads 2>/dev/null)
[ "$out" = "provided multiple" ]
ok $? "under tdshim MPI_THREAD_MULTIPLE is granted as natively ($out; tests/mpi/threads.sh)"
# header-free: the notification's envelope shared with the program's marks
for cfg in skr fourcounter termdetect skr:999 bcj; do
    a=${cfg%:*} ign=
    [ "$a" = "$cfg" ] || ign=${cfg#*:}
    rm -rf "$TMPD/repm" && mkdir -p "$TMPD/repm"
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a ${ign:+TDSHIM_IGNORE_TAGS=$ign} TDSHIM_NOTIFY=tag:999 TDPROG_MARK=1 \
        TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/repm" -- "$B/tdprog" probe 4 999 20 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    good=$(grep -c 'phases 4 notified 4 extra 0 tokens_seen 1 episodes 4$' "$TMPD/out")
    python3 - "$TMPD/repm" "$ign" <<'PY'
import glob, json, sys
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*/rank-*.json'))]
sent = sum(r['primary']['sent'] for r in reps)
recv = sum(r['primary']['received'] for r in reps)
notes = [r['detection']['notifications'] for r in reps]
print('# sent %d received %d notifications %s' % (sent, recv, notes))
# counted marks: 4 per rank among the primaries (ignored: none of them)
sys.exit(0 if len(reps) == 4 and sent == recv and notes == [4] * 4 and (sys.argv[2] or sent >= 16) else 1)
PY
    rep=$?
    [ $rc -eq 0 ] && [ "$good" -eq 4 ] && [ $rep -eq 0 ]
    ok $? "TDSHIM_ALGO=$a${ign:+, tag $ign ignored}: each rank's mark on the notification's envelope is its own, 4 notifications per rank, sent = received"
    [ "$good" -eq 4 ] || sed 's/^/# /' "$TMPD/out" "$TMPD/err" | head -12
done
done_testing
