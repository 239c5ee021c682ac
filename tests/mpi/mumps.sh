#!/bin/sh
# A third-party MPI library under tdshim: MUMPS (Debian's libmumps-dev,
# built against Open MPI, installed by scripts/deps), the parallel sparse
# direct solver, a Fortran library, driven by tests/mpi/mumpslap.c: a
# 13,824-unknown 7-point operator (N=24) factorized and solved, as LU
# (SYM 0) and as LDL^T (SYM 2). MUMPS's factorization is asynchronous: each
# rank polls MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) from Fortran between
# pieces of work (about a million empty polls a run at 2 ranks) and
# receives MPI_PACKED messages of up to megabytes, sending its own from a
# buffer of its own with MPI_Isend and MPI_Test; the analysis and the
# solve use collectives. Each run must end (exit status 0) with the native
# run's line of facts exactly (the solution's error below 1e-12, the
# numbers of entries in the factors, the flops; native runs at the same
# rank count agree on it, the error's last digits do not), and its reports
# must balance. 2 ranks: bcj, skr, hcda, bcj in the copy layout, skr
# header-free; 4 ranks (oversubscribed): bcj, xulau (make
# check-long-thirdparty: every algorithm and bcj in both header layouts at
# 2 ranks, bcj skr cda xulau at 4; tp_cfg).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG2=${MUMPS_CFG2:-$(tp_cfg "bcj skr hcda bcj:copy skr:none" "bcj bcjrd skr fourcounter termdetect cda hcda edod xulau bcj:copy bcj:datatype skr:none")}
CFG4=${MUMPS_CFG4:-$(tp_cfg "bcj xulau" "bcj skr cda xulau")}
N=${MUMPS_N:-24}
n2=$(echo $CFG2 | wc -w) n4=$(echo $CFG4 | wc -w)
npoints=$((2 + 2 * n2 + 2 * n4))
plan $npoints
P="$top_builddir/tests/mpi/mumpslap"
tp_need_ompi $npoints "$P" libmumps-dev # built where configure found MUMPS

# solve NP SYM DIR [VAR=value...]: one run in DIR: DIR/out, DIR/err and
# DIR/facts (the output's first line); its status
solve() {
    s_np=$1 s_sym=$2 d=$3
    shift 3
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=120 run_mpi "$s_np" "$@" -- "$P" "$N" "$s_sym" >"$d/out" 2>"$d/err")
    s_rc=$?
    head -n 1 "$d/out" >"$d/facts"
    return $s_rc
}
for np in 2 4; do
    case $np in 2) cfgs=$CFG2 ;; 4) cfgs=$CFG4 ;; esac
    bad=""
    for sym in 0 2; do
        solve $np $sym "$TMPD/native$np/$sym" && grep -q 'error below 1e-12' "$TMPD/native$np/$sym/facts" ||
            bad="$bad sym=$sym"
    done
    [ -z "$bad" ]
    ok $? "native, $np ranks: both solves end with the error below 1e-12${bad:+; not:$bad}"
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$np-$a-$pb"
        differ="" unbal="" totals=""
        for sym in 0 2; do
            d="$TMPD/$name/$sym"
            solve $np $sym "$d" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
                TDSHIM_REPORT_DIR="$d"
            tp_sub "sym=$sym" "$TMPD/native$np/$sym" "$d" $? $np
        done
        tp_close "$np ranks, $a, piggyback $pb" "LU and LDL^T end with the native run's facts"
    done
done
