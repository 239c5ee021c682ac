#!/bin/sh
# The termdetect guide's Algorithm 1 (tests/api/guide-example.c) linked with
# -ltermdetect (no LD_PRELOAD) must stop at termination with every task of
# its task tree executed, at 1, 2, 4 and 8 ranks.
. "$top_srcdir/tests/tap.sh"
plan 4
prog="$top_builddir/tests/api/guide-example"
# Algorithm 1 sends with a blocking MPI_Send, also to its own rank: at one
# rank that returns only where MPI buffers a send to oneself (Open MPI does,
# MPICH does not; natively the same)
hydra=0
case $(${MPIRUN:-mpirun} --version 2>&1 | head -n 3) in *HYDRA* | *MPICH*) hydra=1 ;; esac
for n in 1 2 4 8; do
    if [ $n -eq 1 ] && [ $hydra -eq 1 ]; then
        skip "1 rank: MPICH does not buffer the example's blocking send to its own rank (it hangs natively too)"
        continue
    fi
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
          timeout 120 ${MPIRUN:-mpirun} --oversubscribe -np $n "$prog" 4 7 2>&1)
    rc=$?
    echo "$out" | grep -q "^guide-example: ok ranks=$n "
    found=$?
    [ $rc -eq 0 ] && [ $found -eq 0 ]
    ok $? "guide example at $n ranks terminates with every task executed"
    diag "$(echo "$out" | tail -3)"
done
done_testing
