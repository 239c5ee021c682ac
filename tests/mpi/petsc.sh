#!/bin/sh
# A third-party library's own tests under tdshim: PETSc (Debian's
# libpetsc-real-dev, built against Open MPI, and the tests and tutorials of
# its examples package, installed by scripts/deps), 13 runs at 2 to 8
# ranks (oversubscribed) of 8 of PETSc's test programs, compiled here:
# - PetscCommBuildTwoSided (sys/tests/ex8) in its three algorithms: an
#   allreduce of counts, a reduce-scatter, and the nonblocking consensus
#   (NBX: each rank MPI_Issend's its messages, then polls
#   MPI_Iprobe(MPI_ANY_SOURCE) and receives what it finds, starts an
#   MPI_Ibarrier once its synchronous sends complete and stops when the
#   barrier does: an asynchronous termination of its own), with the data
#   messages sent by callbacks too (-build_twosided_f), at 4 and 8 ranks;
# - PetscSF (vec/is/sf/tests/ex1), the star-forest communication
#   under every vector scatter, with persistent requests (MPI_Send_init,
#   MPI_Recv_init, MPI_Startall, MPI_Waitall) and as neighbourhood
#   collectives (-sf_type neighbor);
# - vector and matrix assembly with values for other ranks
#   (vec/vec/tests/ex29 with the legacy stash, mat/tests/ex52 in
#   blocked MPIBAIJ), vector scatters (vec/vec/tests/ex24);
# - Krylov solvers (ksp/ksp/tutorials ex2: GMRES on a 2-D Laplacian; ex50:
#   CG with full multigrid on a DMDA; ex23: pipelined FGMRES, whose
#   reductions are MPI_Iallreduce overlapped with the operator).
# The native runs must end (exit status 0) with PETSc's own expected output
# where its test names one (output/*.out: trailing blanks and PETSc's
# "  type:" filter aside, as its harness compares); each run under tdshim
# must end with the native run's standard output byte for byte, and every
# run's reports must balance. PETSC_CFG: the configurations.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG=${PETSC_CFG:-"bcj skr:none cda:datatype"}
# PATH|NP|ARGS|EXPECTED: a test program of PETSc's examples, its ranks and
# arguments, and the name of its expected output (empty: none for them)
CASES='sys/tests/ex8|4|-verbose -build_twosided allreduce|ex8_1
sys/tests/ex8|4|-verbose -build_twosided ibarrier|ex8_1
sys/tests/ex8|4|-verbose -build_twosided_f -build_twosided ibarrier|ex8_1
sys/tests/ex8|4|-verbose -build_twosided redscatter|ex8_1
sys/tests/ex8|8|-verbose -build_twosided ibarrier|
vec/is/sf/tests/ex1|3||ex1_basic_3
vec/is/sf/tests/ex1|3|-sf_type neighbor|
vec/vec/tests/ex24|3|-vec_type standard|ex24_1
vec/vec/tests/ex29|3|-n 126 -vec_assembly_legacy -repeat 2|ex29_1
mat/tests/ex52|3|-mat_block_size 2 -test_setvaluesblocked|ex52_1
ksp/ksp/tutorials/ex2|4|-ksp_monitor_short -m 40 -n 40 -ksp_gmres_cgs_refinement_type refine_always|
ksp/ksp/tutorials/ex50|4|-pc_type mg -pc_mg_type full -ksp_type cg -ksp_monitor_short -da_refine 3 -mg_coarse_pc_type redundant -mg_coarse_redundant_pc_type svd -ksp_view|ex50_2
ksp/ksp/tutorials/ex23|2|-ksp_monitor_short -ksp_rtol 1e-6 -ksp_type pipefgmres|ex23_3'
npoints=$((2 + 2 * $(echo $CFG | wc -w)))
plan $npoints
E=${PETSC_EXAMPLES:-$(ls -d /usr/share/petsc/*/share/petsc/examples/src 2>/dev/null | tail -n 1)}
[ -n "$E" ] && [ -f "$E/sys/tests/ex8.c" ] ||
    tp_skip_all $npoints "no PETSc examples here (scripts/deps installs Debian's libpetsc3.18-dev-examples)"
pflags=$(pkg-config --cflags --libs PETSc 2>/dev/null) ||
    tp_skip_all $npoints "no PETSc for pkg-config here (scripts/deps installs Debian's libpetsc-real-dev)"
[ "$MPI_FLAVOUR" = ompi ] || tp_skip_all $npoints "Debian's PETSc is built against Open MPI"

# the programs, built with the MPI compiler of this build (MPICC, from
# the test environment) against Debian's PETSc
mkdir -p "$TMPD/bin"
built=0 bad=""
for p in $(echo "$CASES" | cut -d'|' -f1 | sort -u); do
    exe="$TMPD/bin/$(echo "$p" | tr / _)"
    # shellcheck disable=SC2086 # pflags: flags, split
    if ${MPICC:-mpicc} -O1 -o "$exe" "$E/$p.c" $pflags -lm >"$exe.log" 2>&1; then
        built=$((built + 1))
    else
        bad="$bad $p"
        head -n 3 "$exe.log" | sed 's/^/# /'
    fi
done
ldd "$TMPD/bin/sys_tests_ex8" 2>/dev/null | grep -q 'libmpi\.so\.40'
ok $? "$built of $(echo "$CASES" | cut -d'|' -f1 | sort -u | wc -l) of PETSc's test programs built, linked with Open MPI's libmpi.so.40${bad:+; not:$bad}"

# run_all DIR [VAR=value...]: every case, in DIR/N: out, err, rc and
# facts (its standard output)
run_all() {
    ra_d=$1
    shift
    i=0
    echo "$CASES" >"$TMPD/cases"
    while IFS='|' read -r p np args exp; do
        i=$((i + 1))
        d="$ra_d/$i"
        mkdir -p "$d"
        # shellcheck disable=SC2086 # args: the program's arguments, split
        (cd "$d" && RUN_MPI_TIMEOUT=120 run_mpi "$np" "$@" -- "$TMPD/bin/$(echo "$p" | tr / _)" $args \
            >"$d/out" 2>"$d/err" </dev/null)
        echo $? >"$d/rc"
        cp "$d/out" "$d/facts"
        echo "$np" >"$d/np"
    done <"$TMPD/cases"
}
# PETSc's comparison: trailing blanks and its "  type:" lines aside
norm() { sed 's/[[:space:]]*$//' "$1" | grep -v '  type:'; }

run_all "$TMPD/native"
i=0 failed=""
while IFS='|' read -r p np args exp; do
    i=$((i + 1))
    d="$TMPD/native/$i"
    if [ "$(cat "$d/rc")" != 0 ] || [ ! -s "$d/out" ]; then
        failed="$failed $i:$p(rc=$(cat "$d/rc"))"
    elif [ -n "$exp" ]; then
        norm "$E/$(dirname "$p")/output/$exp.out" >"$TMPD/exp.$i"
        norm "$d/out" | cmp -s - "$TMPD/exp.$i" || failed="$failed $i:$p(not $exp.out)"
    fi
done <"$TMPD/cases"
[ -z "$failed" ]
ok $? "native: $(echo "$CASES" | wc -l) runs end, each with PETSc's expected output where its test has one${failed:+; not:$failed}"
for cfg in $CFG; do
    tp_shim_all "$cfg"
    for i in $(seq "$(echo "$CASES" | wc -l)"); do
        tp_sub "$i" "$TMPD/native/$i" "$TMPD/$name/$i" "$(cat "$TMPD/$name/$i/rc")" "$(cat "$TMPD/$name/$i/np")"
    done
    tp_close "$a, piggyback $pb" "every run ends with the native run's output"
done
