#!/bin/sh
# Transparency (DESIGN.md §4): tests/mpi/transparency exercises every
# wrapped point-to-point function and prints payload checksums, statuses
# and error classes. Its transcript under LD_PRELOAD=libtdshim.so must be
# byte-for-byte the native one, at 2, 3 and 4 ranks, with the automatic,
# copy and datatype piggyback layouts and header-free (skr: auto chooses
# it). Reports are off (not under test).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

plan 17
for n in 2 3 4; do
    run_mpi "$n" -- "$B/transparency" >"$TMPD/native$n" 2>"$TMPD/native$n.err"
    ok $? "native run at $n ranks"
    for pb in auto copy datatype none; do
        algo=bcj
        [ $pb = none ] && algo=skr
        run_mpi "$n" LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=$algo TDSHIM_PIGGYBACK=$pb -- "$B/transparency" \
            >"$TMPD/shim$n$pb" 2>"$TMPD/shim$n$pb.err"
        rc=$?
        if [ $rc -eq 0 ] && [ -s "$TMPD/native$n" ] && cmp -s "$TMPD/native$n" "$TMPD/shim$n$pb"; then
            ok 0 "$n ranks, TDSHIM_PIGGYBACK=$pb: transcript identical to native ($(wc -l <"$TMPD/native$n") lines)"
        else
            ok 1 "$n ranks, TDSHIM_PIGGYBACK=$pb: transcript identical to native (rc=$rc)"
            diff "$TMPD/native$n" "$TMPD/shim$n$pb" | head -20 | sed 's/^/# /'
            sed 's/^/# stderr: /' "$TMPD/shim$n$pb.err" | head -10
        fi
    done
done
# the transcript proves something: it has every section and no failed check
grep -q '^comms:' "$TMPD/native4" && ! grep -q 'BAD' "$TMPD/native4"
ok $? "native transcript is complete and all payload checks pass"
grep -c 'src=' "$TMPD/native4" | { read -r c; [ "$c" -ge 200 ]; }
ok $? "native transcript checks at least 200 statuses"
done_testing
