#!/bin/sh
# A third-party MPI runtime under tdshim: StarPU-MPI (Debian's
# starpu-examples, linked with Open MPI, installed by scripts/deps), the
# task runtime, on its own MPI examples. StarPU is the asynchronous program
# tdshim is for: a progression thread of its own (MPI_THREAD_SERIALIZED)
# posts a standing MPI_Irecv(MPI_ANY_SOURCE) for its envelopes and polls
# its detached requests with MPI_Test while the workers compute; data goes
# as a second message, often after its receiver's task asked for it, in
# the program's datatypes (user_datatype*), over MPI_COMM_WORLD and
# communicators of its own (comm, mix_comm), from C and Fortran
# (nf_basic_ring). Each example must end (exit status 0: StarPU's examples
# assert their results) with the native run's output, its lines sorted
# (the ranks' lines interleave; word by word, as a line may be split) and
# those that carry timings or addresses left out, and every run's reports
# must balance. 2 ranks: mpi_cholesky,
# stencil5, user_datatype, user_datatype2, user_datatype_early,
# mpi_complex, filter, cache, mm, nf_basic_ring; 4 ranks: comm, mix_comm
# (they need 4), mpi_cholesky, stencil5, mm, nf_basic_ring. One StarPU
# worker per rank (STARPU_NCPU=1), its calibration files in the test's
# directory (STARPU_HOME), not in $HOME. make check: 2 ranks under bcj,
# bcjrd, xulau, bcj in the datatype layout, skr header-free, 4 ranks under
# bcj and cda; make check-long-thirdparty: every algorithm at 2 ranks, bcj
# skr cda xulau at 4 (tp_cfg).
#
# Found by running them: Open MPI's MPI_T_init_thread, through which
# tdshim read the eager limits, made every rank's MPI_Init 0.21 s slower
# (tests/mpi/initcost.sh); and the header's struct datatype costs a large
# message its single-copy transfer (docs/user-guide.md, "Limitations").
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG2=${STARPU_CFG2:-$(tp_cfg "bcj bcjrd xulau bcj:datatype skr:none" "bcj bcjrd skr fourcounter termdetect cda hcda edod xulau bcj:datatype skr:none")}
CFG4=${STARPU_CFG4:-$(tp_cfg "bcj cda" "bcj skr cda xulau")}
EX2=${STARPU_EX2:-"mpi_cholesky stencil5 user_datatype user_datatype2 user_datatype_early mpi_complex filter cache mm nf_basic_ring"}
EX4=${STARPU_EX4:-"comm mix_comm mpi_cholesky stencil5 mm nf_basic_ring"}
n2=$(echo $CFG2 | wc -w) n4=$(echo $CFG4 | wc -w)
npoints=$((2 + 2 * n2 + 2 * n4))
plan $npoints
D=${STARPU_MPI_EXAMPLES:-/usr/lib/x86_64-linux-gnu/starpu/mpi}
tp_need_ompi $npoints "$D/mpi_cholesky" starpu-examples
export STARPU_NCPU=1 STARPU_SILENT=1 STARPU_HOME="$TMPD/starpu-home"
mkdir -p "$STARPU_HOME"

# example NP EX DIR [VAR=value...]: one run of example EX in DIR: DIR/out,
# DIR/err and DIR/facts (the words of the output's lines, those with a
# timing or an address left out, sorted: mpirun forwards a rank's Fortran
# record in pieces, so another rank's line can split it, natively too:
# nf_basic_ring at 4 ranks, 4 runs in 15 under bcj before 2026-12-04); its
# status
example() {
    en=$1 ex=$2 d=$3
    shift 3
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=90 run_mpi "$en" STARPU_NCPU=1 STARPU_SILENT=1 STARPU_HOME="$STARPU_HOME" "$@" -- \
        "$D/$ex" >"$d/out" 2>"$d/err")
    e_rc=$?
    grep -v -e '0x' -e '[Tt]ime' -e 'GFlops' -e 'took' "$d/out" | tr -s ' \t' '\n\n' | grep . | LC_ALL=C sort >"$d/facts"
    return $e_rc
}
for np in 2 4; do
    case $np in 2) cfgs=$CFG2 exs=$EX2 ;; 4) cfgs=$CFG4 exs=$EX4 ;; esac
    bad=""
    for ex in $exs; do
        example $np "$ex" "$TMPD/native$np/$ex" || bad="$bad $ex"
    done
    [ -z "$bad" ]
    ok $? "native, $np ranks: every example ends ($(echo $exs | wc -w))${bad:+; failed:$bad}"
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$np-$a-$pb"
        differ="" unbal="" totals=""
        for ex in $exs; do
            d="$TMPD/$name/$ex"
            example $np "$ex" "$d" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
                TDSHIM_REPORT_DIR="$d"
            tp_sub "$ex" "$TMPD/native$np/$ex" "$d" $? $np
        done
        tp_close "$np ranks, $a, piggyback $pb" "every example ends with the native output"
    done
done
