#!/bin/sh
# Fortran programs under tdshim (README "Stacking with other PMPI tools and
# Fortran"). Open MPI's Fortran bindings convert handles and statuses and
# call the C PMPI_* functions, which tdshim defines too:
#  - ftoken (examples/token_ring.c in Fortran) built with include 'mpif.h',
#    use mpi and use mpi_f08, polling with MPI_Iprobe, ends correctly under
#    every algorithm at 4 ranks: every token checked, one notification per
#    rank, and tdshim's report counts exactly the messages the program
#    received (tdshim saw every Fortran send). bcj (a header) and skr
#    (header-free) run under all three bindings, every other algorithm under
#    one, in turn (a binding converts handles the same way whatever the
#    algorithm; make check-long-fortran, FORTRAN_FULL=1: every pair);
#  - the same with a standing MPI_Irecv polled by MPI_Test and MPI_Isend +
#    MPI_Wait (TDSHIM_IDLE=test), with a 1-byte and an 8-byte header;
#  - fmix, a C program whose Fortran half sends to and receives from its C
#    half in every combination: transcript byte for byte the native one
#    with every piggyback layout (before tdshim defined PMPI_*, the Fortran
#    sends went out without a header and the C receives aborted).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

list=$("$top_builddir/tests/sim/tdsim" --list-algos 2>/dev/null | awk '$1 != "none" {print $1}')
[ -n "$list" ] || list=bcj
# pairs: "algorithm binding" lines, see above
pairs() { rotation "${FORTRAN_FULL:-0}" "$list" "mpifh mod f08" bcj skr; }
n=$(pairs | wc -l)
total=$((n + 6 + 5))
plan $total
if [ ! -x "$B/ftoken_f08" ] || [ ! -x "$B/fmix" ]; then
    i=0
    while [ $i -lt $total ]; do skip "no MPI Fortran compiler (configure found no working mpifort: apt-get install gfortran)"; i=$((i + 1)); done
    exit 0
fi

NP=4 TOK=40
# ftoken_run BINDING STYLE ALGO [VAR=value...]: ok if the program ends right
# and the report's primary messages match what the program received
ftoken_run() {
    prog=$1 style=$2 algo=$3
    shift 3
    d="$TMPD/rep-$prog-$style-$algo"
    mkdir -p "$d"
    run_mpi $NP LD_PRELOAD="$LIB" TDSHIM_ALGO="$algo" TDSHIM_NOTIFY=tag:999 TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$d" "$@" -- "$B/ftoken_$prog" "$style" $TOK 999 >"$d.out" 2>"$d.err"
    rc=$?
    recvd=$(sed -n 's/^RESULT example=ftoken .* received=\([0-9]*\) ok$/\1/p' "$d.out")
    if [ $rc -ne 0 ] || [ -z "$recvd" ]; then
        sed 's/^/# /' "$d.out" "$d.err" | head -10
        return 1
    fi
    "${PYTHON3:-python3}" - "$d" $NP "$recvd" <<'PY'
import glob, json, os, sys
d, n, recvd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = glob.glob(os.path.join(d, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
sent = got = 0
for r in range(n):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    det = j["detection"]
    if det["notifications"] != 1 or det["violations"] != 0 or det["unsafe"] != 0:
        print("# rank %d: notifications %d violations %d unsafe %d" % (r, det["notifications"], det["violations"], det["unsafe"]))
        sys.exit(1)
    sent += j["primary"]["sent"]; got += j["primary"]["received"]
if (sent, got) != (recvd, recvd) or recvd == 0:
    print("# tdshim counted %d sent, %d received; the program received %d" % (sent, got, recvd)); sys.exit(1)
PY
}

pairs >"$TMPD/pairs"
while read -r a prog; do
    ftoken_run $prog probe "$a" </dev/null
    ok $? "ftoken ($prog) under $a, $NP ranks, $TOK tokens: every token checked, one notification, tdshim counted every Fortran message"
done <"$TMPD/pairs"
for prog in mpifh mod f08; do
    for a in bcj cda; do
        ftoken_run $prog test "$a" TDSHIM_IDLE=test
        ok $? "ftoken ($prog) with a standing MPI_Irecv polled by MPI_Test, MPI_Isend+MPI_Wait, under $a (TDSHIM_IDLE=test)"
    done
done

run_mpi 3 -- "$B/fmix" >"$TMPD/native" 2>"$TMPD/native.err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ' data ok$' "$TMPD/native")" -eq 120 ]
ok $? "fmix natively: 120 C/Fortran receives at 3 ranks, every payload and status right (rc=$rc)"
for v in "auto bcj" "copy bcj" "datatype bcj" "auto cda"; do
    set -- $v
    run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_PIGGYBACK=$1 TDSHIM_ALGO=$2 -- "$B/fmix" \
        >"$TMPD/shim" 2>"$TMPD/shim.err"
    rc=$?
    [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/shim"
    ok $? "fmix under tdshim ($2, TDSHIM_PIGGYBACK=$1): transcript identical to native (rc=$rc)"
    cmp -s "$TMPD/native" "$TMPD/shim" || { diff "$TMPD/native" "$TMPD/shim" | head -6; head -4 "$TMPD/shim.err"; } | sed 's/^/# /'
done
done_testing
