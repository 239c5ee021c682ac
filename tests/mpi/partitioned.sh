#!/bin/sh
# Partitioned communication (MPI-4.0) under every algorithm and both kinds
# of piggyback: examples/part_halo, a halo exchange on a ring whose edges
# go out as --parts partitions (received in half as many), then relayed
# tasks polled with MPI_Iprobe, 2 phases ended by the done notification
# (TDSHIM_NOTIFY=tag:999). Skipped where the MPI library predates MPI-4.0
# (Open MPI 4.1). Natively (--native-stop) on 3 and on 2 ranks, then each
# algorithm with TDSHIM_PIGGYBACK=auto on 3 ranks, 8 partitions (the
# header-free algorithms without a header: no companion), and with
# TDSHIM_PIGGYBACK=copy on 2 ranks, 16 partitions (every algorithm with a
# header, so every partitioned request with its header companion; on 2
# ranks both halos of a rank come from one peer with one tag: two
# partitioned requests per (peer, tag, communicator) each way). Each run:
#  - the halos line (every value received, statuses) identical to native's;
#  - RESULT ... ok with early=0: every task run, one notification per phase
#    on every rank, nothing after it, and no rank notified before the last
#    rank ran out of work ('none' detects nothing: --native-stop);
#  - the reports: every message counted once, sent = received = the
#    partitioned messages (2 per rank per round) + the relays + the clock
#    synchronisation of ex_common.c (11 per rank but rank 0), none without
#    a header, none unreceived, no unsafe episode.
# Then the headers themselves, under bcj (2 ranks) and cda (3 ranks):
# tests/mpi/libhspy.so, preloaded after tdshim, logs the bytes of every
# companion tdshim readies and of every one it completes, numbered per peer
# in the order of their initialization (the order MPI matches them in):
# every header read back is the one sent for the same message, one per
# partitioned message. (A header lost after it arrived shows in the runs
# above too: cda and hcda, whose credit it carries, never announce.)
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$top_builddir/examples/part_halo"
algos="bcj skr fourcounter termdetect cda hcda edod xulau bcjrd none"
phases=2 rounds=6 tokens=4 hops=6
plan_mpi4 $((4 + 2 * $(echo $algos | wc -w))) "$P" --help
args="--phases $phases --rounds $rounds --tokens $tokens --hops $hops"
for np in 3 2; do
    parts=$((np == 3 ? 8 : 16))
    run_mpi $np -- "$P" $args --parts $parts --native-stop >"$TMPD/native$np" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q "^RESULT example=part_halo ranks=$np .* ok\$" "$TMPD/native$np" &&
        grep -q "^part_halo: halos .* 0 wrong\$" "$TMPD/native$np"
    ok $? "natively, $np ranks, $parts partitions: $(grep '^part_halo: halos' "$TMPD/native$np") (rc=$rc)"
done
k=0
for pb in auto copy; do
    [ $pb = auto ] && np=3 parts=8
    [ $pb = copy ] && np=2 parts=16
    for a in $algos; do
        k=$((k + 1))
        d="$TMPD/rep-$k"
        mkdir -p "$d"
        notify=tag:999 stop=
        [ $a = none ] && notify=none stop=--native-stop
        run_mpi $np LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_PIGGYBACK=$pb TDSHIM_NOTIFY=$notify TDSHIM_REPORT=json \
            TDSHIM_REPORT_DIR="$d" -- "$P" $args --parts $parts $stop >"$TMPD/out$k" 2>"$TMPD/err$k"
        rc=$?
        python3 - "$d" $np $a $((np * phases * (rounds * 2 + tokens * hops) + 11 * (np - 1))) >"$TMPD/counts$k" <<'PY'
import glob, json, sys
d, np, algo, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
reps = [json.load(open(f)) for f in sorted(glob.glob(d + '/*/rank-*.json'))]
p = [r['primary'] for r in reps]
sent, recv = sum(x['sent'] for x in p), sum(x['received'] for x in p)
nohdr = sum(x.get('without_header', 0) for x in p)
unrecv = sum(x['unreceived_at_finalize'] for x in p)
unsafe = sum(e['unsafe'] for r in reps for e in r['episodes'])
print('sent %d received %d (want %d) without_header %d unreceived %d unsafe %d' % (sent, recv, want, nohdr, unrecv, unsafe))
sys.exit(0 if len(reps) == np and sent == want and recv == want and nohdr == 0 and unrecv == 0 and unsafe == 0 else 1)
PY
        crc=$?
        expect="RESULT example=part_halo ranks=$np .* phases=$phases notifications=$phases stray=0 .* early=0 .* ok\$"
        [ $a = none ] && expect="RESULT example=part_halo ranks=$np .* notifications=0 stray=0 .* ok\$"
        [ $rc -eq 0 ] && [ $crc -eq 0 ] && grep -q "$expect" "$TMPD/out$k" &&
            [ "$(grep '^part_halo: halos' "$TMPD/out$k")" = "$(grep '^part_halo: halos' "$TMPD/native$np")" ]
        ok $? "$a, TDSHIM_PIGGYBACK=$pb, $np ranks, $parts partitions: halos as native, RESULT ok, early=0, every message counted once ($(cat "$TMPD/counts$k"); rc=$rc)"
        if [ $rc -ne 0 ] || [ $crc -ne 0 ]; then
            grep -E '^(RESULT|part_halo)' "$TMPD/out$k" | head -n 3 | sed 's/^/# /'
            grep -v '^tdshim: report' "$TMPD/err$k" | head -n 5 | sed 's/^/# stderr: /'
        fi
    done
done
HS="$B/.libs/libhspy.so"
for run in "bcj 2 16" "cda 3 8"; do
    set -- $run
    d="$TMPD/hspy-$1"
    mkdir -p "$d"
    run_mpi $2 LD_PRELOAD="$LIB:$HS" HSPY_DIR="$d" TDSHIM_ALGO=$1 TDSHIM_NOTIFY=tag:999 TDSHIM_REPORT=none -- \
        "$P" $args --parts $3 >"$TMPD/hspy-$1.out" 2>&1
    rc=$?
    cat "$d"/hspy-*.txt 2>/dev/null | sed -n 's/^S //p' | sort >"$d/sent"
    cat "$d"/hspy-*.txt 2>/dev/null | sed -n 's/^R //p' | sort >"$d/recv"
    want=$(($2 * phases * rounds * 2))
    [ $rc -eq 0 ] && grep -q "^RESULT .* ok\$" "$TMPD/hspy-$1.out" && [ "$(wc -l <"$d/sent")" -eq $want ] &&
        cmp -s "$d/sent" "$d/recv"
    ok $? "$1, $2 ranks: every companion header read back is the one sent ($(wc -l <"$d/sent") sent, $(wc -l <"$d/recv") received, $want partitioned messages; $(cut -d' ' -f5 "$d/sent" | sort -u | wc -l) distinct; rc=$rc)"
    [ $rc -eq 0 ] || grep -v '^tdshim: report' "$TMPD/hspy-$1.out" | head -n 5 | sed 's/^/# /'
    cmp -s "$d/sent" "$d/recv" || diff "$d/sent" "$d/recv" | head -n 6 | sed 's/^/# /'
done
done_testing
