#!/bin/sh
# The termdetect guide's Algorithm 1 (tests/api/guide-example.c) linked with
# -ltermdetect (no LD_PRELOAD) must stop at termination with every task of
# its task tree executed, at 1, 2, 4 and 8 ranks.
. "$top_srcdir/tests/tap.sh"
plan 4
prog="$top_builddir/tests/api/guide-example"
for n in 1 2 4 8; do
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
