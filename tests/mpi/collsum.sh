#!/bin/sh
# The program's blocking collectives under tdshim are the MPI library's
# own (shim/mpi/gen_wrappers.py, "collective"): tests/mpi/collsum.c's sums
# of doubles through MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block,
# MPI_Scan and MPI_Exscan at 13 counts must be native's byte for byte under
# every algorithm, at 3 and 5 ranks. Until 2026-11-29 xulau and bcjrd ran
# them as their nonblocking forms, polled; Open MPI 4.1's MPI_Iallreduce
# adds in another order, and that library failed this test under both.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/collsum"
list=$("$top_builddir/tests/sim/tdsim" --list-algos 2>/dev/null | awk '{print $1}')
[ -n "$list" ] || list="bcj bcjrd xulau"
SIZES="3 5"
plan $(($(echo $SIZES | wc -w) * (1 + $(echo $list | wc -w))))
for np in $SIZES; do
    run_mpi $np -- "$P" >"$TMPD/native.$np" 2>"$TMPD/err"
    rc=$?
    sort "$TMPD/native.$np" >"$TMPD/n" && mv "$TMPD/n" "$TMPD/native.$np"
    lines=$(grep -c ' [0-9a-f]\{16\}$' "$TMPD/native.$np")
    # per count: allreduce, reduce_scatter_block and scan on every rank,
    # reduce on rank 0, exscan on the others
    [ $rc -eq 0 ] && [ "$lines" -eq $((13 * (3 * np + 1 + np - 1))) ]
    ok $? "native, $np ranks: exit $rc, $lines result hashes"
    for a in $list; do
        run_mpi $np LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_REPORT=none -- "$P" >"$TMPD/out" 2>"$TMPD/err"
        rc=$?
        sort "$TMPD/out" >"$TMPD/o"
        [ $rc -eq 0 ] && cmp -s "$TMPD/native.$np" "$TMPD/o"
        ok $? "$a, $np ranks: exit $rc, every collective's result identical to native's"
        [ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/err" | head -n 5
        cmp -s "$TMPD/native.$np" "$TMPD/o" || diag "$(diff "$TMPD/native.$np" "$TMPD/o" | grep -c '^>') result(s) differ, e.g. $(diff "$TMPD/native.$np" "$TMPD/o" | grep '^>' | head -n 1)"
    done
done
done_testing
