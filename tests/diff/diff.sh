#!/bin/sh
# Transparency under generated cases (issue 12): tests/diff/diffgen draws
# point-to-point cases from a seed (25 datatypes: ten predefined ones of
# 1 to 8 bytes, more than tdshim's type cache keeps, and from contiguous to nested
# structs with gaps and lower bounds, indexed_block, subarray, darray and
# types nested three deep, counts 0..300, receive counts equal, larger and
# smaller (truncation), 7 send modes, 15 receive entry points (two poll
# the receive among others with MPI_Testany and MPI_Testsome) with or
# without MPI_ANY_SOURCE/MPI_ANY_TAG, statuses aligned to 8 bytes or, one
# case in 4, to 4 only as Open MPI's Fortran bindings pass them, sends to
# self), plus receives from
# MPI_PROC_NULL, MPI_BOTTOM with absolute addresses, an intercommunicator,
# and a datatype and a communicator freed while an operation on them is
# pending. Each rank's transcript (status,
# error class and a hash of the whole receive buffer with guard bytes on
# both sides) under LD_PRELOAD=libtdshim.so must be byte for byte the
# native one, for every piggyback layout (copy, datatype, auto) and header
# size (none: 1 byte, bcj: 2, hcda: 6, cda: 9, xulau: 5), and header-free
# (DESIGN.md §4: none under auto, skr under TDSHIM_PIGGYBACK=none).
# The first seed runs again over the TCP transport (OMPI_MCA_btl=tcp,self
# on the loopback interface, which every machine has:
# the network path, where protocols and truncation differ) under three
# header sizes and layouts and header-free.
# The first seed runs again with half the tags ignored (TDSHIM_IGNORE_TAGS:
# receives out of scope, the general entries; a busy rank's MPI_Test,
# tds_complete.c test_busy, once took a stale entry of a reused handle for
# the receive and gave its status unconverted) under bcj and cda, and
# header-free (skr, empty messages ignored too: the flat sends classify).
# DIFF_SEEDS (default "1 2") and DIFF_CASES (default 600) set the size;
# DIFF_IGN_ALL=1 runs the ignored-tags configurations for every seed, not
# only the first (make check-long-diff: 40 seeds more, each so);
# DIFF_CONFIGS (ALGO:LAYOUT ...) replaces the configurations, DIFF_TCP=0
# leaves the TCP runs out (scripts/check's MPICH step: header-free only,
# README "MPI libraries"); DIFFGEN_NOTRUNC=1 generates no truncated
# receive (tests/diff/diff-ucx.sh).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
# diff-ucx.sh (DIFF_UCX): through a pml this Open MPI may not be able to
# select here (no UCX): a visible skip
if [ -n "${DIFF_UCX:-}" ] &&
    ! run_mpi 2 -- "$top_builddir/tests/diff/diffgen" 1 1 "$TMPD/sel" >"$TMPD/sel.out" 2>&1 &&
    grep -q "cannot be selected" "$TMPD/sel.out"; then
    plan 1
    skip "Open MPI's pml ucx cannot be selected here"
    exit 0
fi

SEEDS=${DIFF_SEEDS:-1 2}
CASES=${DIFF_CASES:-600}
ALGOS="none bcj hcda cda xulau"
LAYOUTS="copy datatype auto"
CONFIGS=${DIFF_CONFIGS:-$(for a in $ALGOS; do for pb in $LAYOUTS; do echo $a:$pb; done; done) skr:none}
TCP=${DIFF_TCP:-1}
nc=$(echo $CONFIGS | wc -w)
n=0
for s in $SEEDS; do n=$((n + 1 + nc)); done
[ "$TCP" = 1 ] && n=$((n + 5))
IGN=0-499,700-749,960-999
IGN_SEEDS=${SEEDS%% *}
[ "${DIFF_IGN_ALL:-0}" = 1 ] && IGN_SEEDS=$SEEDS
for s in $IGN_SEEDS; do n=$((n + 4)); done
plan $((n + 1))
G="$top_builddir/tests/diff/diffgen"
lines=0
for s in $SEEDS; do
    rm -f "$TMPD"/nat.* && run_mpi 2 -- "$G" "$s" "$CASES" "$TMPD/nat" >"$TMPD/nat.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ -s "$TMPD/nat.1" ]
    ok $? "seed $s: native run of $CASES cases (rc=$rc)"
    lines=$((lines + $(cat "$TMPD"/nat.0 "$TMPD"/nat.1 | wc -l)))
    for cfg in $CONFIGS; do
        a=${cfg%:*} pb=${cfg#*:}
        {
            rm -f "$TMPD"/shim.*
            run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=$a TDSHIM_PIGGYBACK=$pb -- \
                "$G" "$s" "$CASES" "$TMPD/shim" >"$TMPD/shim.out" 2>&1
            rc=$?
            if [ $rc -eq 0 ] && cmp -s "$TMPD/nat.0" "$TMPD/shim.0" && cmp -s "$TMPD/nat.1" "$TMPD/shim.1"; then
                ok 0 "seed $s, $a, $pb: both transcripts identical to native"
            else
                ok 1 "seed $s, $a, $pb: both transcripts identical to native (rc=$rc)"
                for r in 0 1; do diff "$TMPD/nat.$r" "$TMPD/shim.$r" 2>&1 | head -6 | sed 's/^/# /'; done
                grep -iE 'signal|error|abort' "$TMPD/shim.out" | head -5 | sed 's/^/# /'
            fi
        }
    done
done
for s in $IGN_SEEDS; do
rm -f "$TMPD"/nat.* && run_mpi 2 -- "$G" "$s" "$CASES" "$TMPD/nat" >"$TMPD/nat.out" 2>&1
# skr:none: header-free, the flat sends classifying each message
# (tds_flat.c FLAT_SENDS' CLS), empty messages ignored too; skr:none:tag
# the same with a notification configured (TDSHIM_NOTIFY=tag:31000, a tag
# the cases never use), which the flat receives that keep their scope and
# classify what they deliver need (flat_cls_Irecv: a receive on a named
# tag out of scope, on MPI_ANY_TAG in it), and TDSHIM_IDLE=api, under
# which no rank is ever passive: no notification is sent
for cfg in bcj:auto cda:copy skr:none skr:none:tag; do
    a=${cfg%%:*} pb=${cfg#*:} empty=0 nt=""
    case $pb in *:tag) pb=${pb%:tag} nt="TDSHIM_NOTIFY=tag:31000 TDSHIM_IDLE=api" ;; esac
    [ "$a" = skr ] && empty=1
    rm -f "$TMPD"/shim.*
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=$a TDSHIM_PIGGYBACK=$pb TDSHIM_IGNORE_TAGS=$IGN \
        TDSHIM_IGNORE_EMPTY=$empty $nt -- "$G" "$s" "$CASES" "$TMPD/shim" \
        >"$TMPD/shim.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ -s "$TMPD/nat.1" ] && cmp -s "$TMPD/nat.0" "$TMPD/shim.0" && cmp -s "$TMPD/nat.1" "$TMPD/shim.1"
    ok $? "seed $s, $a, $pb, TDSHIM_IGNORE_TAGS=$IGN TDSHIM_IGNORE_EMPTY=$empty${nt:+ $nt}: both transcripts identical to native (rc=$rc)"
    for r in 0 1; do diff "$TMPD/nat.$r" "$TMPD/shim.$r" 2>&1 | head -4 | sed 's/^/# /'; done
done
done
s=${SEEDS%% *}
[ "$TCP" = 1 ] && {
rm -f "$TMPD"/nat.* && OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo run_mpi 2 -- "$G" "$s" "$CASES" "$TMPD/nat" >"$TMPD/nat.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ -s "$TMPD/nat.1" ]
ok $? "TCP transport, seed $s: native run (rc=$rc)"
for cfg in "bcj auto" "cda copy" "hcda datatype" "fourcounter auto"; do
    set -- $cfg
    rm -f "$TMPD"/shim.*
    OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=$1 TDSHIM_PIGGYBACK=$2 -- \
        "$G" "$s" "$CASES" "$TMPD/shim" >"$TMPD/shim.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && cmp -s "$TMPD/nat.0" "$TMPD/shim.0" && cmp -s "$TMPD/nat.1" "$TMPD/shim.1"
    ok $? "TCP transport, seed $s, $1, $2: both transcripts identical to native (rc=$rc)"
done
}
nseeds=$(echo $SEEDS | wc -w)
[ "$lines" -ge $((CASES * nseeds)) ]
ok $? "the native transcripts hold $lines lines for $((CASES * nseeds)) generated cases"
done_testing
