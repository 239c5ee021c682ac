#!/bin/sh
# Python programs under tdshim through mpi4py (Debian's python3-mpi4py,
# built against Open MPI, installed by scripts/deps): the preloaded library
# in an interpreter that loads MPI itself (dlopen of mpi4py's extension
# module), at MPI_THREAD_MULTIPLE.
# - mpi4py.futures' MPIPoolExecutor, a third-party task pool: as a static
#   pool (python3 -m mpi4py.futures, 3 ranks: rank 0 runs the script and
#   a manager thread that polls MPI_Iprobe between sleeps and hands
#   pickled tasks to the others) under bcj, skr header-free and cda; and
#   as workers spawned by MPI_Comm_spawn (1 rank starting 2: two jobs, the
#   preload inherited), whose jobs count no primary message within
#   themselves: both reports must say there is nothing to detect rather
#   than name a setting (the advice said "ignore fewer tags" before
#   2026-12-04, with nothing ignored).
# - tests/mpi/mpi4py_p2p.py: pickled objects of unknown size (MPI_Mprobe +
#   MPI_Mrecv), MPI_Iprobe(MPI_ANY_SOURCE) polling, nonblocking and
#   synchronous sends of pickles, persistent requests polled by MPI_Test.
# - the point-to-point program at MPI_THREAD_SINGLE (MPI4PY_RC_THREAD_LEVEL=single)
#   for the configurations of MPI4PY_SINGLE: at MPI_THREAD_MULTIPLE, mpi4py's
#   default, every call takes tdshim's general entries under its lock
#   (tds_init.c: tds.fast off), so the flat entries a single-threaded
#   program takes (tds_flat.c: the flat MPI_Mrecv of a small pickle, ...)
#   were never run here (2026-12-05: a flat MPI_Mrecv posted one byte short
#   passed the multiple-level runs; at single, mpi4py raised
#   MPI_ERR_TRUNCATE: tests/mutants/mutants.ini, mrecv-short). The ranks'
#   thread levels are checked.
# Each run's results must be native's (the pool's 250 task results in
# order; every rank's lines), and the one-job runs' reports must balance.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG=${MPI4PY_CFG:-"bcj skr:none cda"}
SINGLE=${MPI4PY_SINGLE-"bcj skr:none"}
ncfg=$(echo $CFG | wc -w) nsingle=$(echo $SINGLE | wc -w)
npoints=$((3 + 4 * ncfg + 2 * nsingle + 1))
[ "$nsingle" -eq 0 ] || npoints=$((npoints + 1))
plan $npoints
# Debian's interpreter, the one python3-mpi4py is installed for (python3
# on PATH may be another: pyenv's on the CI machines)
PY=${MPI4PY_PYTHON:-/usr/bin/python3}
"$PY" -c 'import mpi4py.futures' 2>/dev/null ||
    tp_skip_all $npoints "no mpi4py for $PY (scripts/deps installs Debian's python3-mpi4py)"
[ "$MPI_FLAVOUR" = ompi ] || tp_skip_all $npoints "Debian's mpi4py is built against Open MPI"
so=$("$PY" -c 'import mpi4py.MPI as m; print(m.__file__)' 2>/dev/null)
ldd "$so" 2>/dev/null | grep -q 'libmpi\.so\.40' || tp_skip_all $npoints "$so is not linked with Open MPI's libmpi.so.40"
POOL="$top_srcdir/tests/mpi/mpi4py_pool.py" P2P="$top_srcdir/tests/mpi/mpi4py_p2p.py"
NTASK=200

# pool DIR NP [VAR=value...]: the static pool in DIR (out, err, facts: the
# task results); its status
pool() {
    po_d=$1 po_np=$2
    shift 2
    mkdir -p "$po_d"
    (cd "$po_d" && run_mpi "$po_np" "$@" -- "$PY" -m mpi4py.futures "$POOL" $NTASK >"$po_d/out" 2>"$po_d/err")
    po_rc=$?
    cp "$po_d/out" "$po_d/facts"
    return $po_rc
}
# p2p DIR [VAR=value...]: mpi4py_p2p.py at 3 ranks in DIR (facts: the
# ranks' lines); its status
p2p() {
    pp_d=$1
    shift
    mkdir -p "$pp_d"
    (cd "$pp_d" && run_mpi 3 "$@" -- "$PY" "$P2P" "$pp_d/lines" >"$pp_d/out" 2>"$pp_d/err")
    pp_rc=$?
    cat "$pp_d"/lines.0 "$pp_d"/lines.1 "$pp_d"/lines.2 >"$pp_d/facts" 2>/dev/null
    return $pp_rc
}

pool "$TMPD/native/pool" 3
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$TMPD/native/pool/facts")" -eq $((NTASK + NTASK / 4)) ]
ok $? "native: the static pool of 3 ranks returns $((NTASK + NTASK / 4)) task results (rc=$rc)"
p2p "$TMPD/native/p2p"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c . "$TMPD/native/p2p/facts")" -eq 10 ] && grep -q '^0 gather 44991000$' "$TMPD/native/p2p/facts"
ok $? "native: the pickled point-to-point program ends with its 10 lines (rc=$rc)"
for cfg in $CFG; do
    cfg_parse "$cfg"
    for prog in pool p2p; do
        d="$TMPD/$a-$pb/$prog"
        if [ $prog = pool ]; then
            pool "$d" 3 LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json TDSHIM_REPORT_DIR=.
        else
            p2p "$d" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json TDSHIM_REPORT_DIR=.
        fi
        tp_points "$a, piggyback $pb, $prog" "the results are native's" "$TMPD/native/$prog" "$d" $? 3
    done
done
# at MPI_THREAD_SINGLE: the point-to-point program (the pool's manager
# thread calls MPI beside the main thread: it needs MPI_THREAD_MULTIPLE)
for cfg in $SINGLE; do
    cfg_parse "$cfg"
    d="$TMPD/single-$a-$pb/p2p"
    p2p "$d" MPI4PY_RC_THREAD_LEVEL=single LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" \
        TDSHIM_REPORT=json TDSHIM_REPORT_DIR=.
    tp_points "$a, piggyback $pb, p2p at MPI_THREAD_SINGLE" "the results are native's" "$TMPD/native/p2p" "$d" $? 3
done
# the single-level runs were at MPI_THREAD_SINGLE (mpi4py reads
# MPI4PY_RC_THREAD_LEVEL at import: an mpi4py that did not would leave the
# flat entries unrun, and the points above pass)
if [ -n "$SINGLE" ]; then
    lv=$(cat "$TMPD"/single-*/p2p/lines.thread.* 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
    n=$(cat "$TMPD"/single-*/p2p/lines.thread.* 2>/dev/null | grep -cx single)
    [ "$n" -eq $((3 * nsingle)) ] && [ "$(cat "$TMPD"/native/p2p/lines.thread.0)" = multiple ]
    ok $? "the single-level runs' ranks were at MPI_THREAD_SINGLE (${lv:-none}), the native run's at MPI_THREAD_MULTIPLE"
fi

# the spawned pool: 1 rank, 2 workers spawned (two jobs; the loopback's
# TCP between them, as tests/mpi/xjob.sh)
case $OMPI_MCA_btl in *tcp*) ;; *) export OMPI_MCA_btl="$OMPI_MCA_btl,tcp" ;; esac
export OMPI_MCA_btl_tcp_if_include=lo
mkdir -p "$TMPD/spawn-native" "$TMPD/spawn"
(cd "$TMPD/spawn-native" && run_mpi 1 -- "$PY" "$POOL" 100 2 >out 2>err)
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$TMPD/spawn-native/out")" -eq 125 ]
ok $? "native: 1 rank spawning 2 workers returns 125 task results (rc=$rc)"
(cd "$TMPD/spawn" && run_mpi 1 LD_PRELOAD="$LIB" TDSHIM_REPORT=text TDSHIM_REPORT_DIR=. -- "$PY" "$POOL" 100 2 >out 2>err)
rc=$?
said=$(grep -c '^tdshim: advice: nothing to detect (no primary message within this job: its [1-9][0-9]* went to or came from other jobs)' "$TMPD/spawn/err")
[ $rc -eq 0 ] && cmp -s "$TMPD/spawn-native/out" "$TMPD/spawn/out" && [ "$said" -eq 2 ] &&
    [ "$(ls -d "$TMPD"/spawn/tdshim-report-* | wc -l)" -eq 2 ]
ok $? "spawned workers under bcj: results native's, two reports (one a job), each advising nothing to detect ($said of 2; rc=$rc)"
[ "$said" -eq 2 ] || grep '^tdshim' "$TMPD/spawn/err" | head -n 6 | sed 's/^/# /'
