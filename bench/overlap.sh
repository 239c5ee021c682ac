#!/bin/sh
# bench/RESULTS.md, "Large messages while the sender computes": 11 alternating
# runs of bench/overlap at 8 KiB, 64 KiB and 200 KiB, natively, under bcj
# (auto layout), bcj with TDSHIM_PIGGYBACK=copy and skr header-free; one
# line per run: CONFIG BYTES MEDIAN_US. Run from the build directory:
#   bench/overlap.sh [LIBTDSHIM]
L=${1:-$PWD/shim/.libs/libtdshim.so}
for b in 8192 65536 204800; do
    for i in 1 2 3 4 5 6 7 8 9 10 11; do
        echo "native $b $(mpirun -np 2 bench/overlap --bytes $b | awk '/^overlap/{print $3}')"
        echo "bcj $b $(mpirun -np 2 -x LD_PRELOAD="$L" -x TDSHIM_REPORT=none bench/overlap --bytes $b | awk '/^overlap/{print $3}')"
        echo "bcjcopy $b $(mpirun -np 2 -x LD_PRELOAD="$L" -x TDSHIM_REPORT=none -x TDSHIM_PIGGYBACK=copy bench/overlap --bytes $b |
            awk '/^overlap/{print $3}')"
        echo "skrnone $b $(mpirun -np 2 -x LD_PRELOAD="$L" -x TDSHIM_REPORT=none -x TDSHIM_ALGO=skr bench/overlap --bytes $b |
            awk '/^overlap/{print $3}')"
    done
done
