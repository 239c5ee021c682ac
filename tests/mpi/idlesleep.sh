#!/bin/sh
# Measure mode's "polls while busy" (polls.busy_gaps; shim/mpi/tds_progress.c
# busy_gap_long, thread_blocked; the report's advice): tests/mpi/idlesleep.c,
# rank 1 waiting for 100 messages 1 ms apart in an MPI_Iprobe loop.
#  - sleep 50: it sleeps 50 us after each empty probe. A sleep costs its
#    thread CPU time (16-26 us a nanosleep on the 2-core VM: timer exits),
#    so two polls can be more than TDSHIM_SPIN_GAP (20 us) of CPU time
#    apart; but the thread blocked in between: no busy gap, and the advice
#    names TDSHIM_IDLE=probe (before, 464-727 busy gaps and no notion named).
#    At most 2 busy gaps, the advice's own noise floor (tdr_advice.c: a rank
#    polls while busy at 3 or more): two sleeps in a row can still look busy
#    on a loaded VM (a 50 us nanosleep whose timer fired before the thread
#    could block makes no voluntary switch; CI saw 1 in 522 polls once).
#  - burn 100: it uses 100 us of CPU time after each empty probe (a rank that
#    polls while it works): busy gaps counted, the advice says it polls while
#    busy, and names no notion that judges at every empty probe.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/idlesleep"
plan 4
for mode in sleep burn; do
    us=50
    [ $mode = burn ] && us=100
    run_mpi 2 -- "$P" $mode $us >"$TMPD/native" 2>"$TMPD/native.err"
    rc=$?
    [ $rc -eq 0 ] && [ "$(cat "$TMPD/native")" = "idlesleep $mode got=100" ]
    ok $? "$mode $us, native: exit $rc, $(cat "$TMPD/native")"
    dir="$TMPD/rep-$mode"
    mkdir -p "$dir"
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=json,text TDSHIM_REPORT_DIR="$dir" -- "$P" $mode $us \
        >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    res=$("${PYTHON3:-python3}" - "$dir" $mode <<'PY'
import glob, json, sys
d, mode = sys.argv[1], sys.argv[2]
f = glob.glob(d + "/tdshim-report-*/rank-0001.json")
s = glob.glob(d + "/tdshim-report-*/summary.txt")
if len(f) != 1 or len(s) != 1:
    print("wrong: no report"); sys.exit(0)
p = json.load(open(f[0]))["polls"]
adv = open(s[0]).read().split("--- Advice", 1)[-1]
busy = "poll while busy" in adv
probe = "TDSHIM_IDLE=probe: no breach" in adv
if mode == "sleep":
    good = p["busy_gaps"] <= 2 and not busy and probe
else:
    good = p["busy_gaps"] >= 3 and busy and not probe
print("%s: %d empty polls, %d busy gaps (%.4f s); advice: %s, %s" % (
    "ok" if good else "wrong", p["empty"], p["busy_gaps"], p["busy_gap_s"],
    "polls while busy" if busy else "no busy polling", "probe named" if probe else "probe not named"))
PY
)
    [ $rc -eq 0 ] && [ "$(cat "$TMPD/out")" = "idlesleep $mode got=100" ] && case $res in ok:*) true ;; *) false ;; esac
    ok $? "$mode $us, measure mode: exit $rc; $res"
    [ $rc -eq 0 ] || diag "$(tail -n 5 "$TMPD/err")"
done
done_testing
