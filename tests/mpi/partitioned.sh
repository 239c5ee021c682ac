#!/bin/sh
# Partitioned communication (MPI-4.0) under every algorithm: tests/mpi/phalo,
# a halo exchange on a ring of 4 ranks with 4 or 16 partitions per message,
# 10 rounds (MPI_Startall, MPI_Pready / _range / _list, MPI_Parrived,
# MPI_Waitall; every value checked). Skipped where the MPI library predates
# MPI-4.0 (Open MPI 4.1).
#  - header-free algorithms (skr, fourcounter, termdetect, none): the
#    program's output as native, each partitioned message counted once per
#    round on both sides (sent = received = 10 per rank, none unreceived),
#    and the detectors record the end on every rank, none unsafe;
#  - algorithms with a piggyback (bcj, cda, hcda, edod, xulau): a
#    partitioned message cannot carry it, so the job stops at the first
#    MPI_Psend_init/MPI_Precv_init with one line naming the call.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/phalo"
free="skr fourcounter termdetect none"
piggy="bcj cda hcda edod xulau"
plan_mpi4 10 "$P"
run_mpi 4 -- "$P" 8 10 >"$TMPD/native" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^phalo ok: 4 ranks, 10 rounds of 8 partitions' "$TMPD/native"
ok $? "natively: $(head -n 1 "$TMPD/native") (rc=$rc)"
parts=4
for a in $free; do
    mkdir -p "$TMPD/rep-$a"
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/rep-$a" -- \
        "$P" $parts 10 >"$TMPD/$a" 2>"$TMPD/$a.err"
    rc=$?
    python3 - "$TMPD/rep-$a" $a >"$TMPD/$a.counts" <<'PY'
import glob, json, sys
reps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*/rank-*.json'))]
p = [r['primary'] for r in reps]
ok = len(reps) == 4 and all(x['sent'] == 10 and x['received'] == 10 and x['unreceived_at_finalize'] == 0 for x in p)
eps = [len(r['episodes']) for r in reps]
unsafe = sum(e['unsafe'] for r in reps for e in r['episodes'])
if sys.argv[2] != 'none':
    ok = ok and all(n >= 1 for n in eps) and unsafe == 0
print('sent %s received %s episodes %s unsafe %d' % ([x['sent'] for x in p], [x['received'] for x in p], eps, unsafe))
sys.exit(0 if ok else 1)
PY
    crc=$?
    [ $rc -eq 0 ] && [ $crc -eq 0 ] && grep -q "^phalo ok: 4 ranks, 10 rounds of $parts partitions" "$TMPD/$a"
    ok $? "$a, $parts partitions: output as native, every partitioned message counted once ($(cat "$TMPD/$a.counts"); rc=$rc)"
    [ $rc -eq 0 ] || head -n 3 "$TMPD/$a.err" | sed 's/^/# /'
    parts=$((parts == 4 ? 16 : 4))
done
for a in $piggy; do
    run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_ALGO=$a TDSHIM_REPORT=none -- "$P" 8 10 >"$TMPD/$a" 2>&1
    rc=$?
    [ $rc -ne 0 ] && grep -Eq "^tdshim: rank [0-3]: MPI_P(send|recv)_init: partitioned messages cannot carry tdshim's header, which TDSHIM_ALGO=$a needs" "$TMPD/$a" &&
        ! grep -q '^phalo' "$TMPD/$a"
    ok $? "$a: stops at the first partitioned call with one line naming it (rc=$rc)"
done
done_testing
