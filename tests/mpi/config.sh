#!/bin/sh
# Configuration (DESIGN.md §5): every TDSHIM_* variable is validated at
# MPI_Init. A bad value must stop the job within seconds with a non-zero
# exit and exactly one line from tdshim:
#   tdshim: TDSHIM_X='value' is invalid: accepted values are ...
# and a full set of valid non-default values must be accepted.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

BAD="TDSHIM_ALGO=nosuch TDSHIM_NOTIFY=tag:x TDSHIM_NOTIFY=tag:-1 TDSHIM_NOTIFY=exit:300 TDSHIM_NOTIFY=sometimes
TDSHIM_IDLE=probe:0 TDSHIM_IDLE=lazy TDSHIM_IGNORE_TAGS=1,,2 TDSHIM_IGNORE_TAGS=abc TDSHIM_IGNORE_TAGS=5-2
TDSHIM_IGNORE_TAGS=3, TDSHIM_TREE=kary:1 TDSHIM_TREE=ternary TDSHIM_PIGGYBACK=zerocopy TDSHIM_PIGGYBACK=none TDSHIM_REPORT=html
TDSHIM_REPORT=text,,json TDSHIM_REPORT_DIR=/nonexistent/tdshim TDSHIM_CALLSITES=-1 TDSHIM_CALLSITES=1000
TDSHIM_FINALIZE_TIMEOUT=0 TDSHIM_FINALIZE_TIMEOUT=abc TDSHIM_VERBOSE=3 TDSHIM_CDA_INIT=0 TDSHIM_CDA_INIT=1 TDSHIM_CDA_INIT=4294967296 TDSHIM_CDA_CON=x
TDSHIM_CDA_WCON=-5 TDSHIM_CDA_BORROW=1e3 TDSHIM_XULAU_TOPO=star TDSHIM_XULAU_DIMS=2x2
TDSHIM_XULAU_DIMS=2,,2 TDSHIM_XULAU_DIMS=0,4 TDSHIM_XULAU_DIMS=1,2,3,4
TDSHIM_IDLE=spin:0 TDSHIM_SPIN_GAP=0 TDSHIM_SPIN_GAP=x TDSHIM_CONFIRM=maybe TDSHIM_IGNORE_EMPTY=yes
TDSHIM_MIXED=maybe TDSHIM_MIXED_TIMEOUT=-1 TDSHIM_MIXED_TIMEOUT=x TDSHIM_MIXED_TIMEOUT=7200 TDSHIM_REPORT_MODE=public
TDSHIM_CALLSITES=0x10 TDSHIM_CALLSITES=+1 TDSHIM_CALLSITES=007 TDSHIM_CALLSITES=-0 TDSHIM_NOTIFY=tag:07
TDSHIM_NOTIFY=exit:+3 TDSHIM_IDLE=probe:0x2 TDSHIM_TREE=kary:+4 TDSHIM_IGNORE_TAGS=1-0x10 TDSHIM_XULAU_DIMS=02,2
TDSHIM_CDA_INIT=1e3 TDSHIM_FINALIZE_TIMEOUT=0x1p3 TDSHIM_FINALIZE_TIMEOUT=+2 TDSHIM_FINALIZE_TIMEOUT=inf
TDSHIM_SPIN_GAP=nan TDSHIM_SPIN_GAP=1e2 TDSHIM_SPIN_GAP=.5 TDSHIM_SPIN_GAP=5. TDSHIM_SPIN_GAP=05
TDSHIM_SPIN_GAP=0.$(printf '%0309d' 0)1 TDSHIM_REPORT_DIR=$TMPD/exe
TDSHIM_IGNORE_SHORT=2 TDSHIM_IGNORE_SHORT=2:x TDSHIM_IGNORE_SHORT=2:4,2:8 TDSHIM_IGNORE_SHORT=2:70000
TDSHIM_IGNORE_SHORT=-1:4 TDSHIM_IGNORE_SHORT=2:4, TDSHIM_IGNORE_SHORT=:4"
# an executable file passes access(W_OK | X_OK) but is no directory
printf '#!/bin/sh\n' >"$TMPD/exe" && chmod 755 "$TMPD/exe"

set -- $BAD
plan $(($# + 10)) # one per bad value, plus the ten runs below
# the bad values run four at a time (each job only starts and stops), then
# are judged in order
i=0
for kv in $BAD; do
    i=$((i + 1))
    (
        t0=$(date +%s)
        run_mpi 2 LD_PRELOAD="$LIB" "$kv" -- "$B/tdprog" probe 1 999 5 >"$TMPD/out$i" 2>"$TMPD/err$i"
        echo "$? $(( $(date +%s) - t0 ))" >"$TMPD/rc$i"
    ) &
    [ $((i % 4)) -eq 0 ] && wait
done
wait
i=0
for kv in $BAD; do
    i=$((i + 1))
    var=${kv%%=*} val=${kv#*=}
    read -r rc t <"$TMPD/rc$i"
    grep '^tdshim' "$TMPD/err$i" >"$TMPD/lines"
    nl=$(wc -l <"$TMPD/lines")
    # a value longer than 64 bytes is shown cut, with "..."
    [ ${#val} -gt 64 ] && val="$(printf %.64s "$val")..."
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$t" -le 20 ] && [ "$nl" -eq 1 ] &&
        grep -qF "tdshim: $var='$val' is invalid: accepted values are " "$TMPD/lines"; then
        ok 0 "$var='$val': one clear line, exit $rc, ${t}s"
    else
        ok 1 "$var='$val': one clear line, non-zero exit within seconds (rc=$rc, ${t}s, $nl lines)"
        sed 's/^/# /' "$TMPD/err$i" | head -8
    fi
done
# the accepted values are really accepted (and the job then ends normally:
# tdprog needs TDSHIM_NOTIFY=tag:999 to end)
run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO=bcj TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE=probe:2 TDSHIM_IGNORE_TAGS=5,7-9 \
    TDSHIM_TREE=kary:3 TDSHIM_PIGGYBACK=copy TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD" TDSHIM_CALLSITES=0 \
    TDSHIM_FINALIZE_TIMEOUT=2.5 TDSHIM_VERBOSE=0 TDSHIM_CDA_INIT=1000 TDSHIM_CDA_CON=8 TDSHIM_CDA_WCON=4 \
    TDSHIM_CDA_BORROW=100 TDSHIM_XULAU_TOPO=hypercube TDSHIM_SPIN_GAP=50 TDSHIM_CONFIRM=on TDSHIM_IGNORE_EMPTY=1 TDSHIM_IGNORE_SHORT=2:4,9:0 TDSHIM_MIXED=native TDSHIM_MIXED_TIMEOUT=2.5 \
    TDSHIM_REPORT_MODE=group \
    -- "$B/tdprog" probe 2 999 10 >"$TMPD/out" 2>"$TMPD/err"
rc=$?
ok $rc "valid non-default values of every variable are accepted"
[ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/err" | head -8
run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=none -- "$B/transparency" >"$TMPD/out" 2>"$TMPD/err"
ok $? "TDSHIM_ALGO=none runs a program to its end"
# a variable tdshim does not know: one warning each, from rank 0 only,
# naming the nearest known one; not fatal. The tools' own (TDSHIM_LIB) pass.
run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 TDSHIM_ALOGRITHM=skr TDSHIM_Verbose=1 \
    TDSHIM_LIB=/x -- "$B/tdprog" probe 1 999 5 >"$TMPD/out" 2>"$TMPD/err"
rc=$?
grep '^tdshim' "$TMPD/err" >"$TMPD/lines"
[ $rc -eq 0 ] && [ "$(wc -l <"$TMPD/lines")" -eq 2 ] &&
    grep -qx 'tdshim: unknown variable TDSHIM_ALOGRITHM (did you mean TDSHIM_ALGO?)' "$TMPD/lines" &&
    grep -qx 'tdshim: unknown variable TDSHIM_Verbose (did you mean TDSHIM_VERBOSE?)' "$TMPD/lines"
st=$?
[ $st -eq 0 ] || diag "exit $rc" "$(cat "$TMPD/err")"
ok $st "misspelt TDSHIM_ALOGRITHM, TDSHIM_Verbose: one warning each naming TDSHIM_ALGO, TDSHIM_VERBOSE; the job runs"
# xulau dimensions: a mesh the job fits runs; one it does not fit stops the
# job at MPI_Init with the algorithm's reason, within seconds
run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=xulau TDSHIM_NOTIFY=tag:999 TDSHIM_XULAU_TOPO=mesh \
    TDSHIM_XULAU_DIMS=2,2 -- "$B/tdprog" probe 2 999 10 >"$TMPD/out" 2>"$TMPD/err"
ok $? "TDSHIM_XULAU_DIMS=2,2 on a 4-rank mesh runs to its notification"
t0=$(date +%s)
run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO=xulau TDSHIM_NOTIFY=tag:999 TDSHIM_XULAU_TOPO=mesh \
    TDSHIM_XULAU_DIMS=3,2 -- "$B/tdprog" probe 2 999 10 >"$TMPD/out" 2>"$TMPD/err"
rc=$? t=$(( $(date +%s) - t0 ))
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$t" -le 20 ] && grep -q "do not multiply to 4 ranks" "$TMPD/err"
ok $? "TDSHIM_XULAU_DIMS=3,2 on 4 ranks: the reason, exit $rc, ${t}s"
[ $rc -ne 0 ] && grep '^tdshim' "$TMPD/err" | head -2 | sed 's/^/# /'
# disagree NP ALGO KV PATTERN: rank 1 alone sets KV (Open MPI's or MPICH's
# rank variable); the job must stop at MPI_Init with one line matching
# PATTERN, within seconds (not core errors or a hang)
disagree() {
    np=$1 a=$2 kv=$3 pat=$4
    t0=$(date +%s)
    run_mpi "$np" LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO="$a" TDSHIM_NOTIFY=tag:999 -- sh -c \
        'r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; [ "$r" = 1 ] && export '"$kv"'; exec "$0" "$@"' \
        "$B/tdprog" probe 1 999 5 >"$TMPD/out" 2>"$TMPD/err"
    rc=$? t=$(( $(date +%s) - t0 ))
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$t" -le 20 ] && [ "$(grep -c '^tdshim' "$TMPD/err")" -eq 1 ] &&
        grep -q "$pat" "$TMPD/err"
    ok $? "$a, $kv on rank 1 only: one line naming the variables, exit $rc, ${t}s"
    grep '^tdshim' "$TMPD/err" | head -2 | sed 's/^/# /'
}
# header-free (skr under auto): receivers classify messages, so ranks that
# disagree on the layout or the ignored tags stop at MPI_Init
for kv in TDSHIM_PIGGYBACK=copy TDSHIM_IGNORE_TAGS=7; do
    disagree 2 skr "$kv" "differ between ranks: header-free"
done
# the control protocol's shape (spanning tree, credit constants, xulau's
# overlay) must agree too
for av in bcj:TDSHIM_TREE=kary:4 cda:TDSHIM_CDA_INIT=1000 xulau:TDSHIM_XULAU_TOPO=hypercube; do
    disagree 4 "${av%%:*}" "${av#*:}" "differ.* between ranks: the control protocol"
done
done_testing
