#!/bin/sh
# Idle notions (TDSHIM_IDLE, DESIGN.md §1). tests/mpi/tdprog moves work
# tokens between 4 ranks in 3 phases and ends each phase only when tdshim
# delivers the notification (TDSHIM_NOTIFY=tag:999), so a phase is only
# left if the rank's way of waiting made it passive under the chosen
# notion. Each notion is run with the matching program style; then the
# notion must matter: a program that never waits the way the notion
# expects is never detected (tdprog gives up after 2 s and says timeout).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

expect_detected() { # notion style
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE="$1" -- \
        "$B/tdprog" "$2" 3 999 20 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    good=$(grep -c 'phases 3 notified 3 extra 0 tokens_seen 1 episodes 3$' "$TMPD/out")
    [ $rc -eq 0 ] && [ "$good" -eq 4 ]
    ok $? "TDSHIM_IDLE=$1, program waits with $2: 3 phases, 3 notifications on all 4 ranks"
    [ "$good" -eq 4 ] || { sed 's/^/# /' "$TMPD/out"; sed 's/^/# err: /' "$TMPD/err" | head -5; }
}

expect_undetected() { # notion style
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE="$1" -- \
        "$B/tdprog" "$2" 1 999 2 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'notified 0 .* timeout$' "$TMPD/out")" -eq 4 ]
    ok $? "TDSHIM_IDLE=$1, program waits with $2: never passive, never notified (rc=$rc)"
}

# a program that polls while busy (tdprog busyprobe): TDSHIM_IDLE=spin (with
# its confirmation waves) detects every phase with no contract violation;
# under the default notion the same program breaks the contract
# 4 ranks, oversubscribed on a 2-core machine (spin counts the program's
# time between polls, not a poll loop descheduled inside MPI's progress)
NPS=4
expect_reported() { # notion violations-wanted(0|1)
    rm -rf "$TMPD/rep" && mkdir -p "$TMPD/rep"
    run_mpi $NPS LD_PRELOAD="$LIB" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/rep" TDSHIM_NOTIFY=tag:999 \
        TDSHIM_IDLE="$1" -- "$B/tdprog" busyprobe 3 999 20 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    good=$(grep -c 'phases 3 notified 3 extra 0 tokens_seen 1 episodes 3$' "$TMPD/out")
    v=$("${PYTHON3:-python3}" -c '
import glob, json, sys
d = glob.glob(sys.argv[1] + "/tdshim-report-*/")[0]
js = [json.load(open(f)) for f in sorted(glob.glob(d + "rank-*.json"))]
print(sum(j["detection"]["violations"] for j in js), js[0]["detection"]["confirmed"], js[0]["detection"]["refuted"],
      sum(j["detection"]["busy_again"] for j in js))' "$TMPD/rep" 2>&1)
    set -- "$1" "$2" $v
    if [ "$2" = 0 ]; then
        [ $rc -eq 0 ] && [ "$good" -eq $NPS ] && [ "$3" = 0 ] && [ "${4:-0}" -ge 3 ]
        ok $? "TDSHIM_IDLE=$1, program polls while busy ($NPS ranks): 3 phases, 3 notifications, no violation, confirmed ${4:-?} refuted ${5:-?} busy_again ${6:-?}"
    else
        [ "${3:-0}" -gt 0 ] 2>/dev/null
        ok $? "TDSHIM_IDLE=$1, program polls while busy: contract violations reported (${3:-$v})"
    fi
}

plan 18
expect_detected probe probe
expect_detected probe improbe
expect_detected probe:5 probe
expect_detected test test
expect_detected test testany
expect_detected test testsome
expect_detected test testall
# test is probe and more (issue 41: it never detected a program that only probes)
expect_detected test probe
expect_detected test improbe
expect_detected blocking blocking
expect_detected pcontrol pcontrol
expect_detected api api
# blocking calls make a rank passive under the default notion too
expect_detected probe blocking
expect_undetected blocking probe
expect_undetected pcontrol probe
expect_undetected probe test
expect_reported spin 0
expect_reported probe 1
done_testing
