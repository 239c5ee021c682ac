#!/bin/sh
# Issue 26: tdshim never waits for another rank except inside a call that
# waits natively for that same rank (DESIGN.md §2). tests/mpi/unwrapped
# (read its header) puts every rank but one into a blocking call tdshim does
# not wrap (communicator, topology, window and file calls, every collective,
# nonblocking collectives' waits) while the last rank, passive, sends two
# messages and completes them: to itself on a duplicate of MPI_COMM_SELF
# or to its neighbour, persistent, nonblocking + MPI_Wait or blocking.
# Natively every case ends. Under cda/hcda a send that waited for credit
# only rank 0 can grant hung there for ever (rank 0 never reads the BORROW
# inside MPI_Comm_dup); every case must now end under a timeout exactly as
# natively, under every algorithm at 2-4 ranks.
#  - the regression of the issue: 2 ranks, cda and hcda (default
#    configuration), a persistent send to self on a dup of MPI_COMM_SELF +
#    MPI_Wait on rank 1 while rank 0 is in MPI_Comm_dup (hung before);
#  - every call x send kind, rotated over the runs so that each call meets
#    every kind: credit algorithms at 2, 3 and 4 ranks with TDSHIM_CDA_INIT=2
#    (every case's sends outrun the credit), the others (which hold no
#    send) once each, at 2, 3 or 4 ranks in turn (make check's time);
#    each run's output must be the native run's, case for case.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
PROG="$B/unwrapped"
export RUN_MPI_TIMEOUT=40 # a hang is what this test looks for: fail it well before make's patience ends
ncalls=$("$PROG" list | head -n 1 | wc -w)
CREDIT="cda hcda"
OTHERS="bcj skr fourcounter termdetect edod xulau bcjrd none"
runs=
i=0
for a in $CREDIT; do for n in 2 3 4; do runs="$runs $a:$n:$i"; i=$((i + 1)); done; done
n=2
for a in $OTHERS; do runs="$runs $a:$n:$i"; i=$((i + 1)) n=$((n % 3 + 2)); done
plan $((3 + 2 + i))

# the output of a run that ends: "case N CALL SEND ok" for every call, the
# send kinds rotated by ROT (what every native run prints)
expected() {
    "$PROG" list | tail -n 1 | tr ' ' '\n' >"$TMPD/sends"
    nsends=$(wc -l <"$TMPD/sends")
    c=0
    for name in $("$PROG" list | head -n 1); do
        echo "case $c $name $(sed -n "$(((c + $1) % nsends + 1))p" "$TMPD/sends") ok"
        c=$((c + 1))
    done
}

# the native runs
expected 0 >"$TMPD/exp0"
for n in 2 3 4; do
    mkdir -p "$TMPD/n$n"
    run_mpi $n -- "$PROG" "$TMPD/n$n" 5 0 all >"$TMPD/native$n" 2>"$TMPD/native$n.err"
    rc=$?
    [ $rc -eq 0 ] && cmp -s "$TMPD/native$n" "$TMPD/exp0"
    ok $? "natively at $n ranks all $ncalls cases end (status $rc)"
done

# the regression: a persistent send to self that waited for credit, rank 0 in MPI_Comm_dup
for a in $CREDIT; do
    start=$(date +%s)
    out=$(run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a -- "$PROG" "$TMPD" 50 0 comm_dup:persistent-self 2>"$TMPD/reg.err")
    rc=$?
    [ $rc -eq 0 ] && [ "$out" = "case 0 comm_dup persistent-self ok" ]
    ok $? "$a, 2 ranks: rank 1's persistent send to itself on a dup of MPI_COMM_SELF + MPI_Wait while rank 0 is in MPI_Comm_dup ends (status $rc, $(($(date +%s) - start)) s; it hung before)"
    [ $rc -eq 0 ] || diag "$(tail -n 5 "$TMPD/reg.err")"
done

# one run of every case: ALGO:N:ROT
run_one() {
    a=${1%%:*} r=${1#*:} n=${r%%:*} rot=${r#*:}
    mkdir -p "$TMPD/r$rot"
    run_mpi $n LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_CDA_INIT=2 -- "$PROG" "$TMPD/r$rot" 5 $rot all \
        >"$TMPD/r$rot.out" 2>"$TMPD/r$rot.err"
    echo $? >"$TMPD/r$rot.rc"
}
report() {
    a=${1%%:*} r=${1#*:} n=${r%%:*} rot=${r#*:}
    rc=$(cat "$TMPD/r$rot.rc")
    expected "$rot" >"$TMPD/r$rot.exp"
    [ "$rc" -eq 0 ] && cmp -s "$TMPD/r$rot.out" "$TMPD/r$rot.exp"
    ok $? "$a at $n ranks: all $ncalls cases (a held send against each unwrapped call, send kinds rotated by $rot) end as natively (status $rc)"
    [ "$rc" -eq 0 ] || diag "last case done: $(tail -n 1 "$TMPD/r$rot.out")" "$(tail -n 5 "$TMPD/r$rot.err")"
}
start=$(date +%s)
set -- $runs
while [ $# -gt 0 ]; do
    # two runs at a time (the machine has 2 cores)
    first=$1; shift
    run_one "$first" &
    second=
    if [ $# -gt 0 ]; then second=$1; shift; run_one "$second" & fi
    wait
    report "$first"
    [ -n "$second" ] && report "$second"
done
diag "elapsed $(($(date +%s) - start)) s for $i runs of $ncalls cases"
done_testing
