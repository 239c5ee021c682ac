#!/bin/sh
# A third-party MPI program under tdshim: Meep, the finite-difference
# time-domain electromagnetics simulator (Debian's meep-openmpi, built
# against Open MPI, installed by scripts/deps), driven by its Scheme
# interface: a Gaussian pulse along a dielectric waveguide in 2D (16 x 8
# at resolution 20, PML boundaries), the flux through a plane accumulated
# at 20 frequencies while the fields decay. The cell is split into one
# chunk per rank, and every time step exchanges the chunks' boundary
# fields point to point: about 96,000 messages per rank in a 1.5 s run at
# 2 ranks, a rate no other program tdshim is tested with reaches while
# doing real work; the fluxes are summed by collectives. Each run must end
# (exit status 0) with the native run's 20 flux lines byte for byte
# (native runs at the same rank count agree on every digit), and its
# reports must balance. 2 ranks: every algorithm, bcj under both header
# layouts, skr header-free, bcj under the test idle notion; 3 ranks
# (oversubscribed): bcj skr cda xulau. MEEP_CFG2 and MEEP_CFG3 override.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG2=${MEEP_CFG2:-"bcj bcjrd skr fourcounter termdetect cda hcda edod xulau bcj:copy bcj:datatype skr:none bcj:auto:test"}
CFG3=${MEEP_CFG3:-"bcj skr cda xulau"}
n2=$(echo $CFG2 | wc -w) n3=$(echo $CFG3 | wc -w)
npoints=$((2 + 2 * n2 + 2 * n3))
plan $npoints
tp_need_ompi $npoints "$(command -v meep)" meep-openmpi

cat >"$TMPD/wg.ctl" <<'EOF'
(set! geometry-lattice (make lattice (size 16 8 no-size)))
(set! geometry (list (make block (center 0 0) (size infinity 1 infinity)
                           (material (make dielectric (epsilon 12))))))
(set! sources (list (make source (src (make gaussian-src (frequency 0.15) (fwidth 0.1)))
                          (component Ez) (center -7 0))))
(set! pml-layers (list (make pml (thickness 1.0))))
(set! resolution 20)
(define trans (add-flux 0.15 0.1 20 (make flux-region (center 6 0) (size 0 2))))
(run-sources+ 100)
(display-fluxes trans)
EOF

# simulate NP DIR [VAR=value...]: one run in DIR: DIR/out, DIR/err and
# DIR/facts (the flux lines); its status
simulate() {
    s_np=$1 d=$2
    shift 2
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=120 run_mpi "$s_np" "$@" -- meep "$TMPD/wg.ctl" >"$d/out" 2>"$d/err")
    s_rc=$?
    grep '^flux1:' "$d/out" >"$d/facts"
    return $s_rc
}
for np in 2 3; do
    case $np in 2) cfgs=$CFG2 ;; 3) cfgs=$CFG3 ;; esac
    simulate $np "$TMPD/native$np"
    rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '^flux1:, 0\.[0-9]*, [0-9]' "$TMPD/native$np/facts")" -eq 20 ]
    ok $? "native, $np ranks: the run ends with 20 flux lines (rc=$rc)"
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$np-$a-$pb-$idle"
        simulate $np "$TMPD/$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_IDLE="$idle" \
            TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/$name"
        tp_points "$np ranks, $a, piggyback $pb, idle $idle" "the native run's fluxes, every digit" \
            "$TMPD/native$np" "$TMPD/$name" $? $np
    done
done
