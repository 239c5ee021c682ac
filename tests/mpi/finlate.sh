#!/bin/sh
# Ranks that enter MPI_Finalize while the others work on (issue 41: "termination
# not proven within TDSHIM_FINALIZE_TIMEOUT at MPI_Finalize although every
# primary message was received" under TDSHIM_ALGO=fourcounter
# TDSHIM_NOTIFY=tag:999 TDSHIM_IGNORE_EMPTY=1 at 4 ranks). tests/mpi/finlate.c:
# the last rank (and, by seed, rank 2) leaves after phase 1 and finalizes;
# ranks 0 and 1 run the later phases and exchange a result after the last
# notification. A rank in MPI_Finalize must take part in every later episode
# (td_announce_local): before that fix every such run either waited for a
# notification that never came or stalled TDSHIM_FINALIZE_TIMEOUT at finalize.
#  - the issue's configuration looped $FINLATE_RUNS times (default 15; seed i,
#    2 or 3 phases) beside a CPU hog (a bounded `yes`), stopped at the third
#    failure;
#  - each other detecting algorithm once.
# Every run: exit 0, no "not proven", no timeout, nothing dropped, every hop
# of every token handled, every rank notified at least once per phase it ran.
# TDSHIM_FINALIZE_TIMEOUT is the default 10 s (the issue's): on a 2-core box
# at load 20 (this hog, four ranks spinning, other jobs) the last episode
# was measured proven up to 2.9 s after the last rank entered MPI_Finalize,
# so a 2 s bound failed 3 of 50 such runs without any stall. Before the fix
# every run fails whatever the bound (the episode is never proven).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
RUNS=${FINLATE_RUNS:-15}
ALGOS="bcj skr termdetect hcda cda edod xulau bcjrd"
plan $((1 + $(echo $ALGOS | wc -w)))

# run ALGO PHASES SEED: one run; 0 if it passed, its diagnostics in $TMPD/why
run() {
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_ALGO=$1 TDSHIM_NOTIFY=tag:999 TDSHIM_IGNORE_EMPTY=1 \
        TDSHIM_FINALIZE_TIMEOUT=10 TDSHIM_REPORT=none -- "$B/finlate" "$2" 999 10 "$3" >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    awk -v ph="$2" -v rc=$rc '
        /^rank [0-9]+: phases/ { n++; if ($6 < $4) bad = bad " rank " $2 " notified " $6 " of " $4;
                                 inj += $8; tok += $10; drop += $12; if ($13 == "timeout") bad = bad " timeout at rank " $2 }
        END { if (rc != 0) bad = bad " exit " rc; if (n != 4) bad = bad " " n " ranks reported";
              if (tok != inj) bad = bad " hops " tok " of " inj; if (drop) bad = bad " " drop " dropped";
              if (bad) { print bad; exit 1 } }' "$TMPD/out" >"$TMPD/why"
    st=$?
    if grep -q 'not proven\|premature\|contract violation\|detection stopped' "$TMPD/err"; then
        grep 'not proven\|premature\|contract violation\|detection stopped' "$TMPD/err" | head -n 2 >>"$TMPD/why"
        st=1
    fi
    return $st
}

# a CPU hog beside the runs (the issue's stall was intermittent), bounded
# by this script's life and by timeout
timeout $((RUNS * 15 + 120)) sh -c 'yes >/dev/null' &
hog=$!
trap 'kill $hog 2>/dev/null; rm -rf "$TMPD"' EXIT
fails=0 first=""
t0=$(date +%s)
i=1
while [ $i -le "$RUNS" ] && [ $fails -lt 3 ]; do
    ph=$((2 + i % 2))
    if ! run fourcounter $ph $i; then
        fails=$((fails + 1))
        [ -n "$first" ] || first="seed $i, $ph phases:$(tr '\n' ' ' <"$TMPD/why")"
    fi
    i=$((i + 1))
done
[ $fails -eq 0 ]
ok $? "fourcounter, tag:999, TDSHIM_IGNORE_EMPTY=1, 4 ranks under load: $((i - 1)) runs, $fails failed ($(($(date +%s) - t0)) s)${first:+; first: $first}"
kill $hog 2>/dev/null

for a in $ALGOS; do
    run $a 3 1
    ok $? "$a: ranks in MPI_Finalize take part in the later episodes$(test -s "$TMPD/why" && echo ":" $(cat "$TMPD/why"))"
done
done_testing
