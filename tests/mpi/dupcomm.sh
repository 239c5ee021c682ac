#!/bin/sh
# Messages on a copy of MPI_COMM_WORLD (tdshim's flat entries take it as
# MPI_COMM_WORLD), then on a communicator made right after freeing it, in
# the reversed rank order, which may get the copy's handle back, on that
# one and one of half the ranks in turn (the flat entries translate the
# ranks of the last one seen), and on one made right after freeing the
# reversed one, in a rotated order (tests/mpi/dupcomm.c): payloads,
# sources, tags and counts as sent, and
# the report counts every message against the right ranks (sent =
# received on every rank, nothing unreceived, no violation) under a
# header-free algorithm and under bcj; with TDSHIM_NOTIFY=tag:N, an empty
# message a rank sends itself on the copy with tag N is a primary message,
# not the notification, and each rank gets exactly one notification.
# The regression is tested only when the handles come back: every run,
# native included, must report reuse on every rank (both frees: "reused
# 3"), or the point fails. Under AddressSanitizer (a sanitizer build), its
# quarantine would keep freed communicators of Open MPI (malloc'ed) from
# coming back: it is turned off for these runs (quarantine_size_mb=0 and
# thread_local_quarantine_size_kb=0: with the first only, still no reuse).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

R=20 NP=4
plan 5
[ -n "$SAN_X" ] && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
out=$(run_mpi 2 -- "$B/dupcomm" 2 0 2>&1)
[ "$(printf '%s\n' "$out" | grep -c "^rank [01]: bad 0 reused 3 ")" -eq 2 ]
ok $? "natively: the program runs and checks itself, both freed handles reused on both ranks ($(printf '%s' "$out" | head -n 1))"

for cfg in skr:0 bcj:0 skr:999 bcj:999; do
    a=${cfg%:*} t=${cfg#*:}
    dir="$TMPD/rep-$a-$t"
    mkdir -p "$dir"
    note=
    [ "$t" -gt 0 ] && note="TDSHIM_NOTIFY=tag:$t"
    # shellcheck disable=SC2086
    run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" $note -- \
        "$B/dupcomm" $R "$t" >"$TMPD/out" 2>"$TMPD/out.err"
    rc=$?
    n=$([ "$t" -gt 0 ] && echo 1 || echo 0)
    good=$(grep -c "bad 0 reused [0-3] notified $n sent" "$TMPD/out")
    reused=$(grep -c "reused [13]" "$TMPD/out") xreused=$(grep -c "reused [23]" "$TMPD/out")
    report_counts "$dir" $NP "$TMPD/out"
    rep=$?
    [ $rc -eq 0 ] && [ "$good" -eq $NP ] && [ $rep -eq 0 ] && [ "$reused" -eq $NP ] && [ "$xreused" -eq $NP ]
    ok $? "TDSHIM_ALGO=$a${note:+, $note}: $R rounds on a copy of MPI_COMM_WORLD, on a reversed communicator ($reused of $NP ranks got the copy's handle back), on it and one of half the ranks in turn, and on a rotated one ($xreused got the reversed one's handle back): intact, counted against the right ranks (rc=$rc)"
    [ "$reused" -eq $NP ] && [ "$xreused" -eq $NP ] ||
        diag "the freed handles did not come back on every rank: the stale-handle regression was not exercised"
    [ "$good" -eq $NP ] || sed 's/^/# /' "$TMPD/out" "$TMPD/out.err" | head -n 12
done
done_testing
