#!/bin/sh
# A busy rank's polls of receives out of scope, by every way a program makes
# them, while it works (tests/mpi/busymemo.c): none may count as an idle
# poll under TDSHIM_IDLE=test or spin, whichever of tdshim's shortcuts answers it.
# Each mode guards one shortcut that no other test caught a bug in
# (2026-12-05; tests/mutants/mutants.ini):
#   testany    test_missed's memo: the slot where the last empty
#              MPI_Testany found a receive in scope now holds one out of
#              scope (memo-scope-unchecked; bcj, cda: table entries;
#              skr header-free: the flat ring's answer)
#   test       the flat MPI_Test's steal request taken (ftest_ignored:
#              ignored-scope-lost)
#   slots      a flat receive among the slots, not the ring (plain_scope:
#              slots-scope-lost)
#   getstatus  a flat receive made a table entry by MPI_Request_get_status
#              (tds_hs_promote: promote-scope-lost)
# and, under TDSHIM_IDLE=spin (its configurations end in :spin; the work
# in 5 us pieces, shorter than TDSHIM_SPIN_GAP, so that only the scope
# tells the busy polls from idle ones), the general MPI_Test of a flat
# receive near the ring's end, which the flat MPI_Test leaves to it under
# spin (test_near: near-scope-lost; the test and slots modes reach it).
# With any of those bugs, a busy rank was judged passive while it worked
# and rank 0 was notified before the results came. Points: natively the
# program ends without a notification; under each configuration and mode
# every rank is notified, rank 0 not before every result came, and tdshim
# saw no premature announcement; each mode exercised: in at least half its
# runs every rank but 0 took the steal request while it worked and had
# polled its work receive empty before the work came.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
CFGS="2:bcj:auto 3:cda:auto 2:skr:none 3:skr:none 2:skr:none:spin 3:skr:none:spin 2:bcj:auto:spin"
MODES="testany test slots getstatus"
ncfg=$(echo $CFGS | wc -w) nmodes=$(echo $MODES | wc -w)
plan $((1 + ncfg * nmodes + nmodes))
out=$(run_mpi 2 -- "$B/busymemo" 0.2 20 0.1 test 2>"$TMPD/native.err")
rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^busymemo rank=[01] before=[0-9]* steal=[01] early=0 notified=0$')" -eq 2 ]
ok $? "native: the program ends, nothing notifies it (rc=$rc)"
for mode in $MODES; do
    set_=0
    for cfg in $CFGS; do
        np=${cfg%%:*} rest=${cfg#*:}
        a=${rest%%:*} pb=${rest#*:} idle=test chunk=20
        case $pb in *:spin) pb=${pb%:spin} idle=spin chunk=5 ;; esac
        err="$TMPD/$mode-$np-$a-$pb-$idle.err"
        out=$(run_mpi "$np" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_IDLE=$idle TDSHIM_IGNORE_TAGS=3 \
            TDSHIM_NOTIFY=tag:2 TDSHIM_REPORT=none -- "$B/busymemo" 0.2 $chunk 20 "$mode" 2>"$err")
        rc=$?
        notified=$(echo "$out" | grep -c '^busymemo rank=[0-9]* before=[0-9]* steal=[01] early=0 notified=1$')
        early=$(echo "$out" | grep -c '^busymemo rank=0 .* early=1 ')
        exercised=$(echo "$out" | grep -c '^busymemo rank=[1-9][0-9]* before=[1-9][0-9]* steal=1 ')
        [ "$exercised" -eq $((np - 1)) ] && set_=$((set_ + 1))
        premature=$(grep -c 'premature' "$err")
        [ $rc -eq 0 ] && [ "$notified" -eq "$np" ] && [ "$premature" -eq 0 ]
        ok $? "$mode, $np ranks, $a, piggyback $pb, TDSHIM_IDLE=$idle: every rank notified after the results ($notified of $np; rank 0 early: $early; premature announcements on stderr: $premature; exercised on $exercised of $((np - 1)) ranks; rc=$rc)"
    done
    [ $((2 * set_)) -ge "$ncfg" ]
    ok $? "$mode exercised: in $set_ of $ncfg runs every rank but 0 polled its work receive empty and took the steal request while it worked"
done
done_testing
