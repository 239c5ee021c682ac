#!/bin/sh
# A third-party MPI library under tdshim: Tachyon (Debian's
# libtachyon-openmpi-0-dev, built against Open MPI, installed by
# scripts/deps), the parallel ray tracer, driven by tests/mpi/tachyscene.c:
# 6 frames of 128 x 128 from a moving camera. Its ranks send their
# scanlines to rank 0 through persistent requests started again for every
# frame (MPI_Send_init, MPI_Recv_init, MPI_Start, MPI_Startall) and
# completed by MPI_Testsome and MPI_Waitall: a pattern of no other
# program tdshim is tested with. Every frame's image must hash to the
# native run's (native runs at 1, 2 and 4 ranks agree), and the reports
# must balance. 2 ranks: every algorithm, bcj under both header layouts,
# skr header-free; 4 ranks (oversubscribed): bcj skr cda xulau.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG2=${TACHYON_CFG2:-"bcj bcjrd skr fourcounter termdetect cda hcda edod xulau bcj:copy bcj:datatype skr:none"}
CFG4=${TACHYON_CFG4:-"bcj skr cda xulau"}
n2=$(echo $CFG2 | wc -w) n4=$(echo $CFG4 | wc -w)
npoints=$((2 + 2 * n2 + 2 * n4))
plan $npoints
P="$top_builddir/tests/mpi/tachyscene"
tp_need_ompi $npoints "$P" libtachyon-openmpi-0-dev # built where configure found Tachyon

# render NP DIR [VAR=value...]: one run in DIR: DIR/out, DIR/err and
# DIR/facts (the frames' hashes); its status
render() {
    r_np=$1 d=$2
    shift 2
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=120 run_mpi "$r_np" "$@" -- "$P" 6 128 >"$d/out" 2>"$d/err")
    r_rc=$?
    cp "$d/out" "$d/facts"
    return $r_rc
}
for np in 2 4; do
    case $np in 2) cfgs=$CFG2 ;; 4) cfgs=$CFG4 ;; esac
    render $np "$TMPD/native$np"
    rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '^frame [0-5] 128x128 fnv=' "$TMPD/native$np/facts")" -eq 6 ]
    ok $? "native, $np ranks: 6 frames rendered (rc=$rc)"
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$np-$a-$pb"
        render $np "$TMPD/$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
            TDSHIM_REPORT_DIR="$TMPD/$name"
        tp_points "$np ranks, $a, piggyback $pb" "every frame's image native's" "$TMPD/native$np" "$TMPD/$name" $? $np
    done
done
