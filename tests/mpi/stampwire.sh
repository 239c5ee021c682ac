#!/bin/sh
# bcj's sweep stamp as it travels (tests/mpi/stampwire.c): every primary
# carries its sender's sweep number (bcj.c), and a stamp that stays 0 lets a
# sweep crossed by a message succeed, a false detection. The simulator
# checks the algorithm's use of the stamp, not the shim's send paths; in
# runs, the window is too narrow for any other MPI test to fail on a stamp
# never written (tests/mutants/mutants.ini, bcj-stamp-unsent). Here rank 2
# takes copies of rank 0's ping-pong messages past tdshim and reads their
# headers: 2000 messages at 3 ranks, during one episode whose sweeps keep
# failing, so the stamps must climb (their byte wraps at 256). Points:
# native, no header; bcj in each header layout and bcjrd: a 2-byte header,
# at least a quarter of the stamps non-zero and 8 different values.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
CFGS="bcj:auto bcj:copy bcj:datatype bcjrd:auto"
plan $((1 + $(echo $CFGS | wc -w)))
N=2000
out=$(run_mpi 3 -- "$B/stampwire" $N 2>"$TMPD/native.err")
[ "$out" = "stampwire hdr=0 n=$N nonzero=0 distinct=0" ]
ok $? "native: every copy arrives without a header ($out)"
for cfg in $CFGS; do
    a=${cfg%%:*} pb=${cfg#*:}
    out=$(run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=none -- \
        "$B/stampwire" $N 2>"$TMPD/$a-$pb.err")
    rc=$?
    set -- $(echo "$out" | sed -n 's/^stampwire hdr=\([0-9]*\) n=\([0-9]*\) nonzero=\([0-9]*\) distinct=\([0-9]*\)$/\1 \2 \3 \4/p')
    [ $rc -eq 0 ] && [ "${1:-}" = 2 ] && [ "${2:-}" = $N ] && [ "${3:-0}" -ge $((N / 4)) ] && [ "${4:-0}" -ge 8 ]
    ok $? "$a, piggyback $pb: the stamps on the wire climb (rc=$rc: ${out:-no output})"
done
done_testing
