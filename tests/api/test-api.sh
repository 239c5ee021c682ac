#!/bin/sh
# libtermdetect beyond the guide's example (tests/api/api-check.c): partial
# participation, states, counts, a foreign message on the termination tag.
# api-check prints the TAP itself (on rank 0); this script checks it ran.
. "$top_srcdir/tests/tap.sh"
out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      timeout 120 ${MPIRUN:-mpirun} --oversubscribe -np 4 "$top_builddir/tests/api/api-check" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E '^(1\.\.|ok |not ok |# )'
if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^1\.\.7$'; then
    echo "not ok 8 - api-check exited with status $rc"
    printf '%s\n' "$out" | tail -5 | sed 's/^/# /'
    exit 1
fi
