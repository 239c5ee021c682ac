#!/bin/sh
# An MPI_Testany slot that held a receive in scope, then one out of scope,
# while the rank works (tests/mpi/busymemo.c). An empty MPI_Testany or
# MPI_Testsome asks first about the index where the last one found a
# receive in scope (tds_complete.c, test_missed's memo), and must ask
# whether the receive there now is in scope: without that, a busy rank's
# polls of a receive on an ignored tag posted in that slot counted as idle
# polls under TDSHIM_IDLE=test, the rank was judged passive while it
# worked, and rank 0 was notified before the results came (2026-12-05: no
# test failed without the check; this one does: tests/mutants/mutants.ini,
# memo-scope-unchecked). Points: natively the program ends without a
# notification; under each configuration every rank is notified, none
# before every result came, and tdshim saw no premature announcement; the
# case exercised: in at least half the runs every rank but 0 polled its
# work receive empty before the work came (the memo set).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
CFGS="2:bcj:auto 3:bcj:auto 3:cda:auto 2:skr:none"
nruns=$(echo $CFGS | wc -w) runs_set=0
plan $((2 + nruns))
out=$(run_mpi 2 -- "$B/busymemo" 0.05 20 0.1 2>"$TMPD/native.err")
rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^busymemo rank=[01] before=[0-9]* early=0 notified=0$')" -eq 2 ]
ok $? "native: the program ends, nothing notifies it (rc=$rc)"
for cfg in $CFGS; do
    np=${cfg%%:*} rest=${cfg#*:}
    a=${rest%%:*} pb=${rest#*:}
    err="$TMPD/$np-$a-$pb.err"
    out=$(run_mpi "$np" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=3 \
        TDSHIM_NOTIFY=tag:2 TDSHIM_REPORT=none -- "$B/busymemo" 0.2 20 20 2>"$err")
    rc=$?
    notified=$(echo "$out" | grep -c '^busymemo rank=[0-9]* before=[0-9]* early=0 notified=1$')
    early=$(echo "$out" | grep -c '^busymemo rank=0 before=[0-9]* early=1 ')
    set_=$(echo "$out" | grep -c '^busymemo rank=[1-9][0-9]* before=[1-9][0-9]* ')
    [ "$set_" -eq $((np - 1)) ] && runs_set=$((runs_set + 1))
    premature=$(grep -c 'premature' "$err")
    [ $rc -eq 0 ] && [ "$notified" -eq "$np" ] && [ "$premature" -eq 0 ]
    ok $? "$np ranks, $a, piggyback $pb, TDSHIM_IDLE=test: every rank notified after the results ($notified of $np; rank 0 notified early: $early; premature announcements on stderr: $premature; memo set on $set_ of $((np - 1)) ranks; rc=$rc)"
done
[ $((2 * runs_set)) -ge "$nruns" ]
ok $? "the case exercised: in $runs_set of $nruns runs every rank but 0 polled its work receive empty before the work came"
done_testing
