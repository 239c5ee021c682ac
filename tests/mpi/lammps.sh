#!/bin/sh
# A third-party MPI program under tdshim: LAMMPS (Debian's lammps, linked with
# Open MPI, installed by scripts/deps), the molecular dynamics code, on the
# Lennard-Jones melt of its own examples (4,000 atoms, 250 steps). Its
# halo exchanges post MPI_Irecv, MPI_Send and MPI_Wait between neighbours
# every step, it migrates atoms with MPI_Sendrecv and reduces its
# thermodynamics with MPI_Allreduce: the regular, bulk-synchronous program
# tdshim must leave as it found it. The thermodynamic table it prints (step,
# temperature, energies, pressure every 50 steps, to 8 digits) must be the
# native run's byte for byte at the same number of ranks, and the run's
# reports must balance. 2 ranks under every algorithm, bcj with the datatype
# layout and skr header-free; 4 ranks under bcj, skr and cda.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG2=${LAMMPS_CFG2:-"bcj bcjrd skr fourcounter termdetect cda hcda edod xulau bcj:datatype skr:none"}
CFG4=${LAMMPS_CFG4:-"bcj skr cda"}
n2=$(echo $CFG2 | wc -w) n4=$(echo $CFG4 | wc -w)
npoints=$((2 + 2 * n2 + 2 * n4))
plan $npoints
LMP=${LAMMPS:-$(command -v lmp)}
tp_need_ompi $npoints "$LMP" lammps

melt_input 10 250 >"$TMPD/in.melt"
# lammps NP NAME [VAR=value...]: one run in $TMPD/NAME, its thermodynamic
# table (the header and the rows up to "Loop time") in $TMPD/NAME/facts
lammps() {
    ln=$1 d="$TMPD/$2"
    shift 2
    mkdir -p "$d"
    (cd "$d" && RUN_MPI_TIMEOUT=120 run_mpi "$ln" "$@" -- "$LMP" -in "$TMPD/in.melt" -log "$d/log" -echo none \
        >"$d/out" 2>&1)
    l_rc=$?
    [ -f "$d/log" ] && sed -n '/^ *Step /,/^Loop time/p' "$d/log" | grep -v '^Loop time' >"$d/facts" || : >"$d/facts"
    return $l_rc
}
for np in 2 4; do
    case $np in 2) cfgs=$CFG2 ;; 4) cfgs=$CFG4 ;; esac
    lammps $np native$np
    rc=$?
    nf=$(grep -c . "$TMPD/native$np/facts")
    [ "$nf" -eq 7 ] || rc=1
    ok $rc "native, $np ranks: lmp ends, its thermodynamic table $nf lines"
    [ $rc -eq 0 ] || tail -n 5 "$TMPD/native$np/out" | sed 's/^/# /'
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$np-$a-$pb"
        lammps $np "$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
            TDSHIM_REPORT_DIR="$TMPD/$name"
        rc=$?
        tp_points "$np ranks, $a, piggyback $pb" "ends, its thermodynamic table native's byte for byte" \
            "$TMPD/native$np" "$TMPD/$name" $rc $np
    done
done
