#!/bin/sh
# Statuses aligned to 4 bytes only (tests/mpi/stalign.c): Open MPI's
# Fortran bindings pass the program's INTEGER status array to the C
# function as its MPI_Status, where the C type needs 8 bytes' alignment;
# tdshim copied statuses as structs, which UBSan reported under MUMPS
# (tests/mpi/mumps.sh; shim/mpi/tds_state.h, tds_status_seed). Every
# completion and probe call with such statuses: the output is native's byte
# for byte and the reports count the program's messages, under a
# header-free algorithm, bcj's header in both layouts and through the
# general entries; in the sanitizer build (scripts/check, sanmpi) a
# misaligned access by tdshim fails the run.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/stalign"
CONFIGS="skr:none bcj:auto bcj:copy xulau:auto"
plan $((1 + 2 * $(echo $CONFIGS | wc -w) + 2))

run_mpi 2 -- "$P" "$TMPD/native" >"$TMPD/native.err" 2>&1
rc=$?
cat "$TMPD/native.0" "$TMPD/native.1" >"$TMPD/native" 2>/dev/null
[ $rc -eq 0 ] && grep -q '^rank 1: statuses aligned to 4 bytes, sent 2 received 51$' "$TMPD/native"
ok $? "native: exit $rc, every status printed ($(wc -l <"$TMPD/native") lines)"

for cfg in $CONFIGS; do
    as_native "$cfg" "$P" "$TMPD/run"
    report_counts "$cfg_dir" 2 "$TMPD/out"
    ok $? "$a, TDSHIM_PIGGYBACK=$pb: the report counts the program's messages on both ranks"
done
# the general entries: an ignored tag (none of the program's) leaves bcj no flat entry
AS_NATIVE_ENV=TDSHIM_IGNORE_TAGS=77 as_native bcj:auto "$P" "$TMPD/run"
report_counts "$cfg_dir" 2 "$TMPD/out"
ok $? "bcj, TDSHIM_IGNORE_TAGS=77: the report counts the program's messages on both ranks"
