#!/bin/sh
# Nothing read from memory nobody initialised, nothing written out of
# bounds, nothing freed twice: tdshim under Valgrind's memcheck, which sees
# what the sanitizer builds do not (a branch on an uninitialised field, a
# system call given uninitialised bytes) in the library as it ships, not
# recompiled. Each rank of each run is a memcheck process (--error-exitcode:
# one error report fails the run) with Open MPI's suppressions and
# tests/mpi/memcheck.supp (reports in PMIx and libunwind, natively too),
# and the run's output must be what it is without Valgrind:
#  - generated point-to-point cases (tests/diff/diffgen, seed 2, 300 cases:
#    statuses aligned to 4 bytes among them) under bcj, skr header-free and
#    cda in the datatype layout (copy under MPICH): transcripts native's
#    byte for byte;
#  - tests/mpi/transparency (3 ranks) and stalign: native's output;
#  - 4 standing receives under MPI_Testany (tds_flat.c's ring and the
#    control receive in the same call), the work-stealing recipe;
#  - examples: work_steal under its recipe (bcj, skr header-free) and in
#    measure mode (the candidate notions and the advice), dnc_tree with
#    call sites (libunwind), work_queue under its sound setting (hcda);
#    every report written (JSON and summary.txt);
#  - threads (MPI_THREAD_MULTIPLE);
#  - the termdetect API (libtermdetect, no preload: tests/api/api-check at
#    4 ranks through libtool, so that memcheck runs the program, not its
#    wrapper script);
#  - where configure built them: MUMPS (Fortran statuses, MPI_PACKED) and
#    Tachyon (persistent requests);
#  - where Debian's packages are installed (scripts/deps): LAMMPS (a melt of
#    500 atoms, 100 steps, cda: its thermodynamic table native's) and hpcc
#    (N = 200 on 1 x 2, bcj: every check PASSED, as natively).
# A library whose algorithm state is malloc'd instead of calloc'd
# (td_engine.c) fails it. Skipped without valgrind and in a sanitizer
# build. Under MPICH (hydra; scripts/check's MPICH step) the same runs but
# MUMPS and Tachyon (Debian builds them against Open MPI), with no
# suppression file of MPICH's (none needed: no report in its code here).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
NPOINTS=17
plan $NPOINTS
skip_all() {
    for _ in $(seq $NPOINTS); do skip "$1"; done
    exit 0
}
command -v valgrind >/dev/null 2>&1 || skip_all "no valgrind (scripts/deps installs it)"
[ "$LIB" = "$top_builddir/shim/.libs/libtdshim.so" ] || skip_all "a sanitizer build: memcheck runs the plain library"
SUPP="--suppressions=$top_srcdir/tests/mpi/memcheck.supp"
RANKVAR=OMPI_COMM_WORLD_RANK
[ "$MPI_FLAVOUR" = hydra ] && RANKVAR=PMI_RANK
for f in /usr/share/openmpi/openmpi-valgrind.supp /usr/share/openmpi/openmpi-valgrind.supp.gz; do
    [ -f "$f" ] && SUPP="$SUPP --suppressions=$f" && break
done
G="$top_builddir/tests/diff/diffgen" E="$top_builddir/examples"
export RUN_MPI_TIMEOUT=180

# vg NAME NP [VAR=value...] -- PROGRAM ARGS: one run under memcheck in
# $TMPD/NAME (reports there), its output in $TMPD/NAME/out and err; its
# status (97: memcheck reported an error)
vg() {
    vg_name=$1 vg_np=$2
    shift 2
    mkdir -p "$TMPD/$vg_name"
    vg_env=""
    while [ "$1" != "--" ]; do vg_env="$vg_env $1"; shift; done
    shift
    # shellcheck disable=SC2086
    (cd "$TMPD/$vg_name" && run_mpi "$vg_np" LD_PRELOAD="$LIB" TDSHIM_REPORT=text,json TDSHIM_REPORT_DIR=. $vg_env -- \
        valgrind -q --error-exitcode=97 --num-callers=30 $SUPP \
        --log-file="$TMPD/$vg_name/vg.%q{$RANKVAR}" "$@" >"$TMPD/$vg_name/out" 2>"$TMPD/$vg_name/err")
}
# vg_point NAME RC WHAT CHECK: the point "WHAT": the run ended (RC 0),
# memcheck reported nothing, and CHECK (0: the output was right); else
# memcheck's first report or the run's last lines
vg_point() {
    # (MPICH's shared memory: "WARNING: valgrind ignores shmget(shmflg) SHM_HUGETLB", not a report)
    vp_errs=$(cat "$TMPD/$1"/vg.* 2>/dev/null | grep -E '^==[0-9]+== [A-Z]' | grep -cv '== WARNING: valgrind ignores')
    [ "$2" -eq 0 ] && [ "$vp_errs" -eq 0 ] && [ "$4" -eq 0 ]
    ok $? "$3 (exit $2, memcheck reports $vp_errs lines)"
    if [ "$vp_errs" -ne 0 ]; then
        cat "$TMPD/$1"/vg.* | grep -E '^==[0-9]+== ' | grep -v '== WARNING: valgrind ignores' | head -n 24 | sed 's/^/# /'
    elif [ "$2" -ne 0 ] || [ "$4" -ne 0 ]; then
        tail -n 4 "$TMPD/$1/out" "$TMPD/$1/err" | sed 's/^/# /'
    fi
}
# same A B: 0 if files A and B are the same
same() { cmp -s "$1" "$2"; }
# result NAME: 0 if the example's RESULT line says ok
result() { grep -q '^RESULT .* ok$' "$TMPD/$1/out"; }

rm -f "$TMPD"/dgn.*
run_mpi 2 -- "$G" 2 300 "$TMPD/dgn" >/dev/null 2>&1
# cda in the datatype layout; in the copy layout under MPICH, where the
# datatype layout is not supported (MPI_ERR_TRUNCATE: docs/user-guide.md)
DT=datatype
[ "$MPI_FLAVOUR" = hydra ] && DT=copy
for cfg in bcj:auto skr:none cda:$DT; do
    a=${cfg%:*} pb=${cfg#*:}
    vg "dg-$a" 2 TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" -- "$G" 2 300 "$TMPD/dg-$a/t"
    rc=$?
    same "$TMPD/dgn.0" "$TMPD/dg-$a/t.0" && same "$TMPD/dgn.1" "$TMPD/dg-$a/t.1"
    vg_point "dg-$a" $rc "generated cases, $a, piggyback $pb: transcripts native's" $?
done

run_mpi 3 -- "$B/transparency" >"$TMPD/transp.native" 2>/dev/null
vg transp 3 TDSHIM_ALGO=bcj -- "$B/transparency"
rc=$?
same "$TMPD/transp.native" "$TMPD/transp/out"
vg_point transp $rc "transparency, bcj, 3 ranks: native's output" $?

rm -f "$TMPD"/staln.*
run_mpi 2 -- "$B/stalign" "$TMPD/staln" >/dev/null 2>&1
vg stalign 2 TDSHIM_ALGO=bcj TDSHIM_PIGGYBACK=copy -- "$B/stalign" "$TMPD/stalign/s"
rc=$?
same "$TMPD/staln.0" "$TMPD/stalign/s.0" && same "$TMPD/staln.1" "$TMPD/stalign/s.1"
vg_point stalign $rc "statuses aligned to 4 bytes, bcj: native's output" $?

vg standing 3 TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none TDSHIM_NOTIFY=tag:99 TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=50 -- \
    "$B/standing" any 4 400 99
rc=$?
tail -n 1 "$TMPD/standing/out" | grep -q 'messages=802, truncated=1, cancelled or notified=4, wrong=0, error codes wrong=0'
vg_point standing $rc "4 standing receives under MPI_Testany, the work-stealing recipe: every message right" $?

RECIPE="TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1"
# shellcheck disable=SC2086
vg ws-bcj 2 TDSHIM_ALGO=bcj $RECIPE -- "$E/work_steal" --phases 5 --work-us 1 --done-tag 999
rc=$?
result ws-bcj
vg_point ws-bcj $rc "work_steal under its recipe, bcj: ok" $?
# shellcheck disable=SC2086
vg ws-skr 2 TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none $RECIPE -- "$E/work_steal" --phases 5 --work-us 1 --done-tag 999
rc=$?
result ws-skr
vg_point ws-skr $rc "work_steal under its recipe, skr header-free: ok" $?
vg ws-measure 2 TDSHIM_ALGO=bcj -- "$E/work_steal" --phases 5 --work-us 1 --native-stop
rc=$?
result ws-measure && grep -q '^tdshim: advice: ' "$TMPD/ws-measure/err"
vg_point ws-measure $rc "work_steal in measure mode: ok, and the advice given" $?

vg dnc 3 TDSHIM_ALGO=bcj TDSHIM_NOTIFY=tag:999 TDSHIM_CALLSITES=3 -- "$E/dnc_tree" --done-tag 999 --max-depth 5 --work-us 20
rc=$?
result dnc && grep -q 'ex_send+0x' "$TMPD"/dnc/tdshim-report-*/summary.txt
vg_point dnc $rc "dnc_tree with call sites: ok, summary.txt names them" $?

vg wq 3 TDSHIM_ALGO=hcda TDSHIM_NOTIFY=tag:999 TDSHIM_IDLE=probe TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_SHORT=2:4 -- \
    "$E/work_queue" --done-tag 999
rc=$?
result wq
vg_point wq $rc "work_queue under its sound setting, hcda: ok" $?

vg threads 2 TDSHIM_ALGO=bcj TDSHIM_NOTIFY=tag:999 TDSHIM_THREADS=2 -- "$B/threads" 2 5 1 0
rc=$?
n=$(ls "$TMPD"/threads/tdshim-report-*/rank-*.json 2>/dev/null | wc -l)
[ "$n" -eq 2 ]
vg_point threads $rc "threads under MPI_THREAD_MULTIPLE, bcj: both reports written" $?

mkdir -p "$TMPD/api"
# shellcheck disable=SC2086
(cd "$TMPD/api" && run_mpi 4 -- "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=97 --num-callers=30 \
    $SUPP --log-file="$TMPD/api/vg.%q{$RANKVAR}" "$top_builddir/tests/api/api-check" >"$TMPD/api/out" 2>"$TMPD/api/err")
rc=$?
[ "$(grep -c '^ok ' "$TMPD/api/out")" -eq 7 ] && ! grep -q '^not ok' "$TMPD/api/out"
vg_point api $rc "the termdetect API (api-check, 4 ranks): its 7 points ok" $?

# native_vg NAME NP -- PROGRAM ARGS: the program natively in $TMPD/NAME.nat
# (its output in $TMPD/NAME.nat/out), then under memcheck with tdshim's
# settings NV_ENV (vg); both working directories get the files of
# $TMPD/NAME.in, if there is one (an input read from there); vg's status
native_vg() {
    nv_name=$1 nv_np=$2
    mkdir -p "$TMPD/$nv_name.nat" "$TMPD/$nv_name"
    [ -d "$TMPD/$nv_name.in" ] && cp "$TMPD/$nv_name.in"/* "$TMPD/$nv_name.nat/" && cp "$TMPD/$nv_name.in"/* "$TMPD/$nv_name/"
    shift 3
    (cd "$TMPD/$nv_name.nat" && run_mpi "$nv_np" -- "$@" >"$TMPD/$nv_name.nat/out" 2>/dev/null)
    vg "$nv_name" "$nv_np" $NV_ENV -- "$@"
}

# the programs of others: each where it is built against Open MPI
if [ -x "$B/mumpslap" ]; then
    NV_ENV=TDSHIM_ALGO=bcj native_vg mumps 2 -- "$B/mumpslap" 10 0
    rc=$?
    # the factors' sizes and flops native's (the error's last digits may differ under Valgrind's arithmetic)
    grep -q 'error below 1e-12' "$TMPD/mumps/out" && [ "$(head -n 1 "$TMPD/mumps.nat/out")" = "$(head -n 1 "$TMPD/mumps/out")" ]
    vg_point mumps $rc "MUMPS (Fortran statuses, MPI_PACKED), bcj: native's factors, error below 1e-12" $?
else
    skip "no tests/mpi/mumpslap (configure builds it where Debian's libmumps-dev links)"
fi
if [ -x "$B/tachyscene" ]; then
    NV_ENV=TDSHIM_ALGO=xulau native_vg tachy 2 -- "$B/tachyscene" 2 64
    rc=$?
    [ "$(grep -c '^frame' "$TMPD/tachy.nat/out")" -eq 2 ] && same "$TMPD/tachy.nat/out" "$TMPD/tachy/out"
    vg_point tachy $rc "Tachyon (persistent requests), xulau: native's images" $?
else
    skip "no tests/mpi/tachyscene (configure builds it where Debian's Tachyon links)"
fi
LMP=$(command -v lmp)
if [ -n "$LMP" ] && [ "$MPI_FLAVOUR" = ompi ]; then
    melt_input 5 100 >"$TMPD/in.melt" # 500 atoms, 100 steps
    NV_ENV=TDSHIM_ALGO=cda native_vg lmp 2 -- "$LMP" -in "$TMPD/in.melt" -log none -echo none
    rc=$?
    grep -A 3 '^ *Step' "$TMPD/lmp.nat/out" >"$TMPD/lmp.nt"
    grep -A 3 '^ *Step' "$TMPD/lmp/out" >"$TMPD/lmp.t"
    [ "$(wc -l <"$TMPD/lmp.nt")" -eq 4 ] && same "$TMPD/lmp.nt" "$TMPD/lmp.t"
    vg_point lmp $rc "LAMMPS (Debian's lmp), cda: native's thermodynamic table" $?
else
    skip "no LAMMPS built against Open MPI here (Debian's lammps; scripts/deps installs it)"
fi
HPCC=$(command -v hpcc)
if [ -n "$HPCC" ] && [ "$MPI_FLAVOUR" = ompi ]; then
    # hpcc reads hpccinf.txt from, and writes hpccoutf.txt into, its working directory
    mkdir -p "$TMPD/hpcc.in" && hpcc_input 200 40 1 2 >"$TMPD/hpcc.in/hpccinf.txt"
    NV_ENV=TDSHIM_ALGO=bcj native_vg hpcc 2 -- "$HPCC"
    rc=$?
    np=$(grep -c 'PASSED' "$TMPD/hpcc.nat/hpccoutf.txt" 2>/dev/null)
    [ "${np:-0}" -gt 0 ] && [ "$(grep -c 'PASSED' "$TMPD/hpcc/hpccoutf.txt")" -eq "$np" ] &&
        ! grep -q 'FAILED' "$TMPD/hpcc/hpccoutf.txt"
    vg_point hpcc $rc "hpcc (Debian's build), bcj: every check PASSED (${np:-0}), as natively" $?
else
    skip "no hpcc built against Open MPI here (Debian's hpcc; scripts/deps installs it)"
fi
