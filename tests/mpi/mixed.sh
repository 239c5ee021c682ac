#!/bin/sh
# Half-preloaded jobs (DESIGN.md §7 "Do no harm"; tds_preload.c): an MPMD
# launch where only some ranks carry LD_PRELOAD=libtdshim.so must end in
# bounded time, never hang in MPI_Init (it did, on the collective that
# agrees on the configuration, which the other ranks never join). With
# TDSHIM_MIXED=stop the job stops with exactly one tdshim line naming the
# ranks not under tdshim and exit status 2; with TDSHIM_MIXED=native it
# runs as natively: the transparency transcript is byte-for-byte the
# native one, with one warning line. Both orders (the preloaded rank first
# and second), a header-free algorithm (skr) and one with a header (bcj),
# and a 3-rank job with the middle rank bare. TDSHIM_MIXED_TIMEOUT=1: a
# run may take 2 s (a rank other than 0 waits twice the timeout for rank
# 0's verdict) plus the launch.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

plan 10
P="$B/transparency"
run_mpi 2 -- "$P" >"$TMPD/native2" 2>"$TMPD/native2.err"
ok $? "native run at 2 ranks"
run_mpi 3 -- "$P" >"$TMPD/native3" 2>"$TMPD/native3.err"

# mixed NAME MODE ALGO LAYOUT: LAYOUT is one letter per rank, p (preloaded)
# or n (not); one app context per rank
mixed() {
    name=$1 mode=$2 algo=$3 layout=$4
    args="" sep=""
    for c in $(echo "$layout" | sed 's/./& /g'); do
        args="$args $sep -n 1"
        if [ "$c" = p ]; then
            for kv in LD_PRELOAD="$LIB" TDSHIM_MIXED=$mode TDSHIM_ALGO=$algo TDSHIM_MIXED_TIMEOUT=1 TDSHIM_REPORT=none; do
                if [ $MPI_FLAVOUR = hydra ]; then
                    args="$args -env ${kv%%=*} ${kv#*=}"
                else
                    args="$args -x $kv"
                fi
            done
        fi
        args="$args $P"
        sep=":"
    done
    t0=$(date +%s)
    if [ $MPI_FLAVOUR = hydra ]; then
        # shellcheck disable=SC2086
        timeout 60 "$MPIRUN" $args >"$TMPD/$name.out" 2>"$TMPD/$name.err"
    else
        # shellcheck disable=SC2086
        OMPI_MCA_orte_tmpdir_base=$(mktemp -d "$TMPD/ompi.XXXXXX") \
            timeout 60 "$MPIRUN" --oversubscribe $SAN_X $args >"$TMPD/$name.out" 2>"$TMPD/$name.err"
    fi
    echo "$? $(($(date +%s) - t0))" >"$TMPD/$name.rc"
}

# judge NAME MODE BARE-RANKS SIZE
judge() {
    name=$1 mode=$2 bare=$3 n=$4
    read -r rc t <"$TMPD/$name.rc"
    grep '^tdshim' "$TMPD/$name.err" >"$TMPD/$name.lines"
    nl=$(wc -l <"$TMPD/$name.lines")
    named=0
    grep -q "^tdshim: ranks\{0,1\} $bare of $n \(is\|are\) not under tdshim" "$TMPD/$name.lines" && named=1
    if [ "$mode" = stop ]; then
        good=$([ "$rc" -eq 2 ] && [ "$nl" -eq 1 ] && [ $named -eq 1 ] && [ "$t" -le 20 ] && echo 1)
        what="stops: exit 2, one line naming rank $bare"
    else
        good=$([ "$rc" -eq 0 ] && [ "$nl" -eq 1 ] && [ $named -eq 1 ] && [ "$t" -le 20 ] &&
            cmp -s "$TMPD/native$n" "$TMPD/$name.out" && echo 1)
        what="runs natively: transcript identical, one line naming rank $bare"
    fi
    if [ "$good" = 1 ]; then
        ok 0 "$name: $what (${t}s)"
    else
        ok 1 "$name: $what (rc=$rc, ${t}s, $nl tdshim lines)"
        sed 's/^/# /' "$TMPD/$name.err" | head -12
    fi
}

# two jobs at a time (each mostly waits), judged in order
for algo in skr bcj; do
    for mode in stop native; do
        mixed "$algo-$mode-pn" $mode $algo pn &
        mixed "$algo-$mode-np" $mode $algo np &
        wait
        judge "$algo-$mode-pn" $mode 1 2
        judge "$algo-$mode-np" $mode 0 2
    done
done
mixed "bcj-stop-pnp" stop bcj pnp
judge "bcj-stop-pnp" stop 1 3
done_testing
