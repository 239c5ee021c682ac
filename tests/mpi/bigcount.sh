#!/bin/sh
# MPI-4.0 large-count calls of more than INT_MAX elements (tests/mpi/bigcount.c;
# before issue 29 such a call stopped the job): natively and under tdshim
# with a header (bcj: outside Open MPI the copy layout, its bounce buffer
# posted as one element of a contiguous type of bytes) and header-free
# (skr: the call as written, counted), the receiver's lines (error class,
# MPI_Get_count_c and MPI_Get_elements_c, envelope, wrong bytes in the
# buffer) must be the native ones, with no tdshim warning.
#  - make check: `bigcount small`, messages of 1000 bytes into receives of
#    INT_MAX + 16 bytes by every receiving call (MPI_Recv_c, MPI_Irecv_c,
#    MPI_Recv_init_c, MPI_Mrecv_c, MPI_Imrecv_c, the receive half of
#    MPI_Sendrecv_c and MPI_Isendrecv_c) and MPI_Buffer_attach_c of as many:
#    the large-count receive path in seconds;
#  - make check-long (check-long-bigcount, BIGCOUNT=full): messages of
#    INT_MAX + 16 bytes too, blocking, nonblocking, persistent, shorter than
#    the receive: about 25 s on an idle 2-core VM and 8 GiB of memory (2 GiB
#    buffers and tdshim's bounce buffers as large), skipped with less than
#    10 GiB available.
# The MPI library must have MPI-4.0 (MPICH 4.0; Open MPI 4.1 skips).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/bigcount"
mode=${BIGCOUNT:-small}
plan_mpi4 3 "$P"
avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null)
if [ "$mode" = full ] && [ "${avail:-0}" -lt 10 ]; then
    for i in 1 2 3; do skip "needs 10 GiB of available memory (${avail:-?} GiB)"; done
    exit 0
fi
RUN_MPI_TIMEOUT=300
export RUN_MPI_TIMEOUT
run_mpi 2 -- "$P" $mode >"$TMPD/native" 2>"$TMPD/native.err"
rc=$?
n=7
[ "$mode" = full ] && n=12
[ $rc -eq 0 ] && [ "$(grep -c ': err 0 .* bad 0$' "$TMPD/native")" -eq $n ] &&
    grep -q '^Buffer_attach_c/detach_c: err 0 0 same buffer 1 size 2147483663$' "$TMPD/native"
ok $? "natively ($mode): $n receives intact, attach/detach of INT_MAX + 16 bytes (rc=$rc)"
for a in bcj skr; do
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_REPORT=none -- "$P" $mode >"$TMPD/$a" 2>"$TMPD/$a.err"
    rc=$?
    [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/$a" && ! grep -q '^tdshim: rank' "$TMPD/$a.err"
    ok $? "$a ($mode): the receiver's lines are the native ones, no warning (rc=$rc)"
    if ! cmp -s "$TMPD/native" "$TMPD/$a"; then
        diff "$TMPD/native" "$TMPD/$a" | head -10 | sed 's/^/# /'
        grep -v '^bigcount:' "$TMPD/$a.err" | head -5 | sed 's/^/# stderr: /'
    fi
    grep -h '^bigcount:' "$TMPD/$a.err" | sed "s/^/# $a: /"
done
done_testing
