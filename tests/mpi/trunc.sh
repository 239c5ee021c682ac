#!/bin/sh
# Truncated receives followed by sends (issue 42; tests/mpi/trunc.c): a
# receive that ends with MPI_ERR_TRUNCATE, through every completion path
# (Recv, Wait, Test, Waitany, Waitall, Testsome, a persistent receive,
# Mprobe+Mrecv, Improbe+Imrecv, Sendrecv), makes the rank active and counts
# as received, also when MPI wrote nothing of the message, tdshim's header
# included (MPICH 4.0 over UCX): under every idle notion (probe, test, spin,
# blocking) the empty reply after it is no contract violation, the error
# classes are the native ones, and each rank's report has the sends and
# receives the program counted, nothing unreceived and no violation.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/trunc"
R=2
plan 9
run_mpi 2 -- "$P" $R >"$TMPD/raw" 2>"$TMPD/native.err"
rc=$?
sort "$TMPD/raw" >"$TMPD/native" # the ranks' lines in any order
n=$(grep -c 'rc=' "$TMPD/native")
[ $rc -eq 0 ] && [ "$n" -eq $((R * 11)) ] && ! grep -q 'rc=0$' "$TMPD/native"
ok $? "natively: $n truncated receives, each an error (rc=$rc)"
for cfg in bcj:probe bcj:test bcj:spin bcj:blocking skr:probe skr:test cda:probe fourcounter:spin; do
    a=${cfg%:*} idle=${cfg#*:}
    dir="$TMPD/rep-$a-$idle"
    mkdir -p "$dir"
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_IDLE=$idle TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
        "$P" $R >"$TMPD/raw" 2>"$TMPD/out.err"
    rc=$?
    sort "$TMPD/raw" >"$TMPD/out"
    report_counts "$dir" 2 "$TMPD/out"
    rep=$?
    [ $rc -eq 0 ] && [ $rep -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/out" && ! grep -q 'contract violation' "$TMPD/out.err"
    ok $? "$a, TDSHIM_IDLE=$idle: error classes as native, no violation, the report counts every message (rc=$rc)"
    diff "$TMPD/native" "$TMPD/out" | head -4 | sed 's/^/# /'
    grep -E 'violation|without' "$TMPD/out.err" | head -2 | cut -c1-160 | sed 's/^/# /'
done
done_testing
