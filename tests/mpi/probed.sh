#!/bin/sh
# Receives after a found MPI_Iprobe (issue 38; tests/mpi/probed.c):
# tdshim's flat MPI_Recv takes MPI's blocking receive for a message a found
# MPI_Iprobe saw, while no call that can match it has run since
# (shim/mpi/tds_flat.c, tds_probed_covers; gen_wrappers.py, MATCHING).
#  - probed cases: eleven ways of probing and receiving (MPI_Probe, and
#    MPI_Improbe + MPI_Mrecv too; a count of MPI_INT below the probed bytes,
#    a truncated receive), with and without the
#    probe's status, receives that cover the probed message and ones that do
#    not; the output is native's byte for byte (source, tag, count and
#    checksum of every message) and each rank's report counts the messages
#    the program counted, under a header-free algorithm, under bcj's header
#    with the notification's envelope looked at (skr, TDSHIM_NOTIFY=tag:N),
#    and through the general entries (bcj with an ignored tag: tds_recv.c,
#    recv_probed).
#  - probed stale WAY: the probed message taken some other way (Irecv,
#    Sendrecv, Improbe+Mrecv, a persistent receive by Start and by Startall,
#    Recv, a second probe without a status, found by MPI_Probe then taken by
#    Irecv, and taken by MPI_Recv in another thread under
#    MPI_THREAD_SERIALIZED: the envelope is the rank's, not the thread's),
#    then MPI_Recv(ANY_SOURCE,
#    ANY_TAG) waits for the notification. A shim that took that receive for
#    one of a message still there would block in MPI, answer no detection,
#    and the run would hang (20 s timeout): each run must end with both
#    ranks notified. With Irecv left out of MATCHING, the irecv, ignore
#    and probe ways hang.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/probed"
CONFIGS="skr:none skr:none:999 bcj:auto xulau:auto"
WAYS="irecv sendrecv improbe persistent startall recv ignore probe thread"
STALE="skr bcj bcj:general"
# the general entries: an ignored tag (none of the program's) leaves bcj no flat entry
GENERAL="TDSHIM_IGNORE_TAGS=77"
plan $((3 + 2 * $(echo $CONFIGS | wc -w) + $(echo $WAYS | wc -w) * $(echo $STALE | wc -w)))

run_mpi 2 -- "$P" cases "$TMPD/native" >"$TMPD/native.err" 2>&1
rc=$?
cat "$TMPD/native.0" "$TMPD/native.1" >"$TMPD/native" 2>/dev/null
[ $rc -eq 0 ] && [ "$(grep -c '^way ' "$TMPD/native")" -eq 312 ] && grep -q '^rank 1: totals' "$TMPD/native"
ok $? "native: exit $rc, every message printed"

for cfg in $CONFIGS; do
    as_native "$cfg" "$P" cases "$TMPD/run"
    report_counts "$cfg_dir" 2 "$TMPD/out"
    ok $? "$a, TDSHIM_PIGGYBACK=$pb, TDSHIM_NOTIFY=$nt: the report counts the program's messages on both ranks"
done
AS_NATIVE_ENV=$GENERAL as_native bcj:auto "$P" cases "$TMPD/run"
report_counts "$cfg_dir" 2 "$TMPD/out"
ok $? "bcj, $GENERAL: the report counts the program's messages on both ranks"

for s in $STALE; do
    a=${s%%:*} extra=
    [ "$s" = "$a" ] || extra=$GENERAL
    for way in $WAYS; do
        # shellcheck disable=SC2086
        RUN_MPI_TIMEOUT=20 run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_NOTIFY=tag:99 TDSHIM_REPORT=none $extra \
            -- "$P" stale "$way" >"$TMPD/out" 2>"$TMPD/err"
        rc=$?
        [ $rc -eq 0 ] && grep -q "^rank 1: $way took source 0 tag 5 sum " "$TMPD/out" &&
            grep -q '^rank 0: then got source 0 tag 99$' "$TMPD/out" && grep -q '^rank 1: then got source 1 tag 99$' "$TMPD/out"
        ok $? "$a${extra:+ ($extra)}, the probed message taken by $way: the next MPI_Recv(ANY_SOURCE, ANY_TAG) waits for the notification and gets it (rc=$rc)"
        [ $rc -eq 0 ] || { sed 's/^/# /' "$TMPD/out"; sed 's/^/# /' "$TMPD/err" | head -n 4; }
    done
done
done_testing
