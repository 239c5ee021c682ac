#!/bin/sh
# A message of more than 2 GiB (3 GiB: 2^27 elements of a 24-byte type),
# natively and under tdshim with a 2-byte (bcj) and a 6-byte (cda)
# piggyback: the receiver's line (return code, byte and element counts,
# source, tag, wrong bytes including guard bytes past the buffer) must be
# the native one. About 30 s per run and 6 GiB of memory: in `make
# check-long` (check-long-bigmsg), skipped with less than 8 GiB available.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
plan 3
avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null)
if [ "${avail:-0}" -lt 8 ]; then
    for i in 1 2 3; do skip "needs 8 GiB of available memory (${avail:-?} GiB)"; done
    exit 0
fi
nat=$(timeout 300 "$MPIRUN" --oversubscribe -n 2 $SAN_X "$B/bigmsg" 2>&1)
printf '%s\n' "$nat" | grep -q "^rc=0 bytes=3221225472 count=134217728 src=0 tag=5 bad=0$"
ok $? "native: 3 GiB received intact ($nat)"
for a in bcj cda; do
    out=$(timeout 300 "$MPIRUN" --oversubscribe -n 2 $SAN_X -x LD_PRELOAD="$LIB" -x TDSHIM_REPORT=none \
        -x TDSHIM_ALGO=$a "$B/bigmsg" 2>&1)
    [ "$out" = "$nat" ]
    ok $? "$a: the same line as native ($out)"
done
done_testing
