#!/bin/sh
# The notification receive posted where a receive out of scope was
# (tests/mpi/busyreuse.c): a busy rank's MPI_Test of a receive out of scope
# takes the entry the last test found without the table lookup
# (tds_complete.c, test_busy) only while that entry still holds the handle
# and is out of scope. The entry is recycled for the next receive, and MPI
# gives that receive the same handle: without the scope check, the
# notification receive's empty tests counted as polls out of scope, no
# rank was ever judged passive under TDSHIM_IDLE=test, and no notification
# came (2026-12-05: no test failed without that check; this one does:
# tests/mutants/mutants.ini, busy-scope-unchecked). Points: natively the
# program ends without a notification; under each configuration every
# rank is notified; the case was exercised: in at least half
# the runs a rank's notification receive had the handle of its ignored one
# (MPI gives it on most runs; tdshim's own control receives, reposted
# between, can take it on a loaded node: one rank of two, once in three
# runs beside two busy loops).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
CFGS="2:bcj:auto 2:skr:none 3:bcj:auto 3:cda:auto"
nruns=$(echo $CFGS | wc -w) runs_reused=0
plan $((2 + nruns))
out=$(run_mpi 2 -- "$B/busyreuse" 2 0.1 2>"$TMPD/native.err")
rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^busyreuse rank=[01] reused=[01] notified=0 polls=')" -eq 2 ]
ok $? "native: the program ends, nothing notifies it (rc=$rc)"
for cfg in $CFGS; do
    np=${cfg%%:*} rest=${cfg#*:}
    a=${rest%%:*} pb=${rest#*:}
    out=$(run_mpi "$np" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=3 \
        TDSHIM_NOTIFY=tag:2 TDSHIM_REPORT=none -- "$B/busyreuse" 4 20 2>"$TMPD/$np-$a-$pb.err")
    rc=$?
    notified=$(echo "$out" | grep -c '^busyreuse rank=[0-9]* reused=[01] notified=1 ')
    reused=$(echo "$out" | grep -c '^busyreuse rank=[1-9][0-9]* reused=1 ')
    [ "$reused" -eq 0 ] || runs_reused=$((runs_reused + 1))
    [ $rc -eq 0 ] && [ "$notified" -eq "$np" ]
    ok $? "$np ranks, $a, piggyback $pb, TDSHIM_IDLE=test: every rank notified ($notified of $np; $reused of $((np - 1)) notification receives on the handle of the ignored one; rc=$rc)"
done
# whether MPI gives the notification receive the freed handle is the
# library's choice: Open MPI 4.1 and MPICH 4.0 both do (2026-12-05, MPICH:
# 2 of 2 ranks in each run of the mpich step's build)
[ $((2 * runs_reused)) -ge "$nruns" ]
ok $? "the case exercised: in $runs_reused of $nruns runs a notification receive had the handle of the ignored receive"
done_testing
