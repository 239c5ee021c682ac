#!/bin/sh
# MPI-4.0 large-count calls of more than INT_MAX elements (tests/mpi/bigcount.c;
# before issue 29 such a call stopped the job): natively and under tdshim
# with a header (bcj: outside Open MPI the copy layout, its bounce buffer
# posted as one element of a contiguous type of bytes) and header-free
# (skr: the call as written, counted), the receiver's lines (error class,
# MPI_Get_count_c and MPI_Get_elements_c, envelope, wrong bytes in the
# buffer) must be the native ones, with no tdshim warning, and each rank's
# report must count the messages and bytes the program sent and received
# (primary sent, sent_bytes, received, received_bytes: over 2^33 bytes in
# full mode).
#  - make check: `bigcount small`, messages of 1000 bytes into receives of
#    INT_MAX + 16 bytes by every receiving call (MPI_Recv_c, MPI_Irecv_c,
#    MPI_Recv_init_c, MPI_Mrecv_c, MPI_Imrecv_c, the receive half of
#    MPI_Sendrecv_c and MPI_Isendrecv_c) and MPI_Buffer_attach_c of as many:
#    the large-count receive path in seconds;
#  - BIGCOUNT=one (scripts/check's MPICH step): one message of INT_MAX + 16
#    elements of MPI_BYTE (over 2 GiB, the count over INT_MAX) first, its
#    every byte checked, then the small ones;
#  - make check-long (check-long-bigcount, BIGCOUNT=full): messages of
#    INT_MAX + 16 bytes too, blocking, nonblocking, persistent, shorter than
#    the receive: about 25 s on an idle 2-core VM and 8 GiB of memory (2 GiB
#    buffers and tdshim's bounce buffers as large).
# one and full are skipped with less than 10 GiB of memory available.
# The MPI library must have MPI-4.0 (MPICH 4.0; Open MPI 4.1 skips).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/bigcount"
mode=${BIGCOUNT:-small}
plan_mpi4 3 "$P"
avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null)
if [ "$mode" != small ] && [ "${avail:-0}" -lt 10 ]; then
    for i in 1 2 3; do skip "needs 10 GiB of available memory (${avail:-?} GiB)"; done
    exit 0
fi
RUN_MPI_TIMEOUT=300
export RUN_MPI_TIMEOUT
run_mpi 2 -- "$P" $mode >"$TMPD/native" 2>"$TMPD/native.err"
rc=$?
# the receiver's lines; the large messages rank 0 sends and their bytes
n=7 big=0 bigbytes=0 N=2147483663
[ "$mode" = one ] && n=8 big=1 bigbytes=$N
[ "$mode" = full ] && n=12 big=5 bigbytes=$((5 * N - 7))
[ $rc -eq 0 ] && [ "$(grep -c ': err 0 .* bad 0$' "$TMPD/native")" -eq $n ] &&
    grep -q '^Buffer_attach_c/detach_c: err 0 0 same buffer 1 size 2147483663$' "$TMPD/native"
ok $? "natively ($mode): $n receives intact, attach/detach of INT_MAX + 16 bytes (rc=$rc)"
# rank 0 sends the large messages and 7 of 1000 bytes, rank 1 answers two
# with empty ones: (sent, sent_bytes, received, received_bytes) per rank
want="$((big + 7)) $((bigbytes + 7000)) 2 0;2 0 $((big + 7)) $((bigbytes + 7000))"
for a in bcj skr; do
    mkdir -p "$TMPD/rep-$a"
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/rep-$a" -- "$P" $mode \
        >"$TMPD/$a" 2>"$TMPD/$a.err"
    rc=$?
    got=$("${PYTHON3:-python3}" -c '
import glob, json, sys
fs = sorted(glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json"))
ps = [json.load(open(f))["primary"] for f in fs]
print(";".join("%d %d %d %d" % (p["sent"], p["sent_bytes"], p["received"], p["received_bytes"]) for p in ps))
' "$TMPD/rep-$a" 2>&1)
    [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/$a" && ! grep -q '^tdshim: rank' "$TMPD/$a.err" && [ "$got" = "$want" ]
    ok $? "$a ($mode): the receiver's lines are the native ones, no warning, the reports count the program's messages and bytes: $got (rc=$rc)"
    [ "$got" = "$want" ] || diag "the reports' (sent, sent_bytes, received, received_bytes) per rank: $got, expected $want"
    if ! cmp -s "$TMPD/native" "$TMPD/$a"; then
        diff "$TMPD/native" "$TMPD/$a" | head -10 | sed 's/^/# /'
        grep -v '^bigcount:' "$TMPD/$a.err" | head -5 | sed 's/^/# stderr: /'
    fi
    grep -h '^bigcount:' "$TMPD/$a.err" | sed "s/^/# $a: /"
done
done_testing
