#!/bin/sh
# Type signature mismatches (tests/mpi/sigmatch.c): 8 sends received with
# another type (a char+int struct with gaps, double, int, a vector of
# shorts), each through every receive entry point: Recv; Irecv completed by
# Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome; a
# persistent receive; Mprobe+Mrecv; Improbe+Imrecv; an Irecv freed with
# MPI_Request_free (its buffer once a later message arrived and a barrier
# passed: before, tdshim wrote it only at its next waiting point, so the
# program saw none of the data); the receive half of Sendrecv and
# Sendrecv_replace; with MPI-4.0, of MPI_Isendrecv (Wait, Waitall; not
# MPI_Isendrecv_replace, which crashes MPICH 4.0.2 natively on such a
# message). MPICH reports a message that ends inside a basic element of the
# receive type (MPI_ERR_TRUNCATE; the multiple-completion calls
# MPI_ERR_IN_STATUS with it in the status; none for MPI_Isendrecv, whose
# receive error MPICH 4.0.2 drops) and writes only the basic elements that
# arrived; Open MPI reports none of them. Under tdshim the error classes
# and every byte of the receive buffers are the native ones (not the
# counts, see sigmatch.c), with a header in both layouts and header-free.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/sigmatch"
plan 4
run_mpi 2 -- "$P" >"$TMPD/native" 2>"$TMPD/native.err"
rc=$?
n=$(grep -c 'buf' "$TMPD/native")
want=120 # 8 x 15 entry points; with MPI-4.0 8 x 17
grep -q isendrecv "$TMPD/native" && want=136
[ $rc -eq 0 ] && [ "$n" -eq $want ]
ok $? "natively: $n receives, $(grep -vc ': rc 0 ' "$TMPD/native") of them reporting an error (rc=$rc)"
for cfg in bcj:auto cda:copy skr:auto; do
    a=${cfg%:*} pb=${cfg#*:}
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_PIGGYBACK=$pb TDSHIM_REPORT=none -- "$P" >"$TMPD/$a" 2>"$TMPD/$a.err"
    rc=$?
    [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/$a"
    ok $? "$a, $pb: error classes and receive buffers as native (rc=$rc)"
    diff "$TMPD/native" "$TMPD/$a" | head -6 | cut -c1-120 | sed 's/^/# /'
done
done_testing
