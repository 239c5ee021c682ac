#!/bin/sh
# MPI_THREAD_MULTIPLE (issue 12, README "Threads"): tests/mpi/threads runs
# several threads per rank, each exchanging messages with every kind of
# send, receive, probe and completion call (a generalized request mixed
# into a Waitall too) concurrently with the others, checking every payload
# and status; then every thread polls for the phase's notification.
#  - natively and under tdshim the program is granted MPI_THREAD_MULTIPLE
#    and every message arrives intact;
#  - under every algorithm: exactly one notification per phase on every
#    rank, none before all of the rank's threads were done, no contract
#    violation, and the report counts exactly the messages the threads sent
#    and received;
#  - measure mode, and 8 threads per rank;
#  - a thread that starts each phase 200 ms after the others (LATE_MS): its
#    poll of the previous phase must not count as its idleness once the
#    rank's other threads have worked (no violation, nothing early);
#  - a thread whose first MPI call comes after its rank looked passive
#    (thread-late: the rank's other thread polls empty meanwhile): without
#    TDSHIM_THREADS=2 the report counts a late thread per rank, no contract
#    violation, and advises TDSHIM_THREADS=2; with it, nothing late;
#  - a bad TDSHIM_THREADS is refused with a clear message.
# Under a ThreadSanitizer build (--enable-sanitizers=thread, scripts/check)
# the same runs check the shim for data races.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

T=${THREADS_T:-4} R=${THREADS_ROUNDS:-30} PH=3 NP=4
list=$("$top_builddir/tests/sim/tdsim" --list-algos 2>/dev/null | awk '$1 != "none" {print $1}')
[ -n "$list" ] || list=bcj
n=0
for a in $list; do n=$((n + 1)); done
plan $((n + 8))

out=$(run_mpi 2 -- "$B/threads" 2 5 1 0 2>&1)
if ! printf '%s\n' "$out" | grep -q "provided multiple bad 0"; then
    i=0
    while [ $i -lt $((n + 8)) ]; do skip "the MPI library does not grant MPI_THREAD_MULTIPLE natively ($out)"; i=$((i + 1)); done
    exit 0
fi
ok 0 "natively: MPI_THREAD_MULTIPLE granted, 2 threads x 5 rounds intact"

# check_run OUT DIR ALGO NOTIFIED: every rank's line and JSON report
check_run() {
    good=$(grep -c "provided multiple bad 0 early 0 notified $4 sent $((T * R * PH))\$" "$1")
    if [ "$good" -ne $NP ]; then
        sed 's/^/# /' "$1" "$1.err" | head -n 12
        return 1
    fi
    "${PYTHON3:-python3}" - "$2" $NP $((T * R * PH)) "$4" <<'PY'
import glob, json, os, sys
d, n, msgs, notes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runs = glob.glob(os.path.join(d, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
for r in range(n):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    p, det = j["primary"], j["detection"]
    got = (j["thread_level"]["provided"], p["sent"], p["received"], det["violations"], det["notifications"],
           det["unsafe"], det["core_error"])
    want = ("multiple", msgs, msgs, 0, notes, 0, None)
    if got != want:
        print("# rank %d: (provided, sent, received, violations, notifications, unsafe, core error) = %s, expected %s"
              % (r, got, want)); sys.exit(1)
PY
}

for a in $list; do
    dir="$TMPD/rep-$a"
    mkdir -p "$dir"
    run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_NOTIFY=tag:999 TDSHIM_THREADS="$T" TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$dir" -- "$B/threads" "$T" "$R" $PH 999 >"$TMPD/out" 2>"$TMPD/out.err"
    rc=$?
    [ $rc -eq 0 ] && check_run "$TMPD/out" "$dir" "$a" $PH
    ok $? "$a: $NP ranks x $T threads, $PH phases: payloads intact, one notification per phase, none early, counts exact, no violation (rc=$rc)"
done

dir="$TMPD/rep-measure"
mkdir -p "$dir"
run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
    "$B/threads" "$T" "$R" $PH 0 >"$TMPD/out" 2>"$TMPD/out.err"
rc=$?
[ $rc -eq 0 ] && check_run "$TMPD/out" "$dir" bcj 0
ok $? "measure mode (TDSHIM_NOTIFY=none): the program is unchanged, counts exact (rc=$rc)"

dir="$TMPD/rep-late"
mkdir -p "$dir"
PH=4
run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_NOTIFY=tag:999 TDSHIM_THREADS="$T" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
    "$B/threads" "$T" "$R" $PH 999 200 >"$TMPD/out" 2>"$TMPD/out.err"
rc=$?
[ $rc -eq 0 ] && check_run "$TMPD/out" "$dir" bcj $PH
ok $? "a thread of rank 0 starts every phase 200 ms late: no violation, no early notification, counts exact (rc=$rc)"
PH=3

dir="$TMPD/rep-8"
mkdir -p "$dir"
T=8 R=10
run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_NOTIFY=tag:999 TDSHIM_THREADS=$T TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
    "$B/threads" $T $R $PH 999 >"$TMPD/out" 2>"$TMPD/out.err"
rc=$?
[ $rc -eq 0 ] && check_run "$TMPD/out" "$dir" bcj $PH
ok $? "8 threads per rank: one notification per phase, counts exact (rc=$rc)"

# late_run FIRST THREADS LATE: thread-late on 3 ranks, measure mode; LATE
# late threads expected per rank
late_run() {
    dir="$TMPD/rep-late-$1-$2"
    mkdir -p "$dir"
    if [ "$2" = - ]; then set -- "$1" "" "$3"; else set -- "$1" "TDSHIM_THREADS=$2" "$3"; fi
    # shellcheck disable=SC2086
    run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" $2 -- \
        "$B/thread-late" 200 "$1" >"$TMPD/out" 2>"$TMPD/out.err"
    rc=$?
    [ $rc -eq 0 ] || { sed 's/^/# /' "$TMPD/out.err" | head -n 12; return 1; }
    [ "$(grep -c "rank \([0-9]\): got \1 from \1$" "$TMPD/out")" -eq 3 ] || { sed 's/^/# /' "$TMPD/out"; return 1; }
    if [ "$3" -gt 0 ]; then
        grep -q "3 LATE THREADS" "$TMPD/out.err" && grep -q "advice: TDSHIM_THREADS=2 " "$TMPD/out.err" ||
            { sed 's/^/# /' "$TMPD/out.err" | head -n 12; return 1; }
    # (only the threads' advice: under ThreadSanitizer the poller's loop can
    # look busy between its polls, and measure mode's idle-notion advice
    # then names spin, which is not what this run is about)
    elif grep -q "LATE THREADS\|advice:.*TDSHIM_THREADS" "$TMPD/out.err"; then
        sed 's/^/# /' "$TMPD/out.err" | head -n 12
        return 1
    fi
    msgs=1
    [ "$1" = irecv ] && msgs=2
    "${PYTHON3:-python3}" - "$dir" "$msgs" "$3" <<'PY'
import glob, json, os, sys
d, msgs, late = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = glob.glob(os.path.join(d, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
for r in range(3):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    t, det = j["thread_level"], j["detection"]
    got = (j["primary"]["sent"], j["primary"]["received"], det["violations"], t["threads_using_mpi"], t["late_threads"])
    want = (msgs, msgs, 0, 2, late)
    if got != want:
        print("# rank %d: (sent, received, violations, threads using MPI, late threads) = %s, expected %s"
              % (r, got, want)); sys.exit(1)
PY
}
late_run send - 1
ok $? "a thread's first call (a send) 200 ms after its rank's other thread polled empty: one late thread per rank, no violation, advice TDSHIM_THREADS=2"
late_run irecv - 1
ok $? "the same when its first call is an MPI_Irecv: the rank turns busy at that call, the sends after it are no violation"
late_run send 2 0
ok $? "TDSHIM_THREADS=2: the rank waits for the second thread, nothing late, no advice on threads"

run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_THREADS=0 TDSHIM_REPORT=none -- "$B/threads" 2 1 1 0 >"$TMPD/out" 2>"$TMPD/out.err"
rc=$?
[ $rc -ne 0 ] && grep -q "TDSHIM_THREADS" "$TMPD/out.err" && ! grep -q "provided" "$TMPD/out"
ok $? "TDSHIM_THREADS=0 is refused with a message naming the variable (rc=$rc)"
done_testing
