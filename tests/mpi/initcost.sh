#!/bin/sh
# What tdshim's MPI_Init loads and costs (do no harm: a short job, a test
# suite of many, must not pay for tdshim at start). Open MPI's
# MPI_T_init_thread, through which tdshim read the BTLs' eager limits,
# registers every component of every framework: it dlopened 100-odd MCA
# components MPI_Init had not selected, among them the psm and ofi MTLs,
# whose libinfinipath's constructor sleeps on Debian 12. Each rank's
# MPI_Init took 0.24 s under tdshim against 0.028 s natively, and a 0.2 s
# StarPU-MPI example 0.6 s. tdshim now reads Open MPI's MCA variables
# (tds_init.c, eager_ompi; tests/mpi/eagerx-mca.sh checks the limit read).
# Checked without timing: the dynamic loader's record (LD_DEBUG=files) of
# the MCA components each rank initialised must be the native run's, under
# an algorithm with a header (the eager limits are read), a header-free
# one and cda; the times are printed. Open MPI only (MPICH has no MCA
# components: a visible skip).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/initcost"
plan 4
if [ "$MPI_FLAVOUR" != ompi ]; then
    for i in 1 2 3 4; do skip "not Open MPI: no MCA components"; done
    exit 0
fi
# loaded NAME [VAR=value...]: a 2-rank run; the sorted set of MCA
# components both ranks initialised into $TMPD/NAME.set, MPI_Init's times
# into $TMPD/NAME.out; its status
loaded() {
    name=$1
    shift
    mkdir -p "$TMPD/ld-$name"
    run_mpi 2 "$@" LD_DEBUG=files LD_DEBUG_OUTPUT="$TMPD/ld-$name/r" -- "$P" >"$TMPD/$name.out" 2>"$TMPD/$name.err"
    rc=$?
    cat "$TMPD/ld-$name"/r.* 2>/dev/null | sed -n 's|.*calling init: .*/\(mca_[^/]*\.so\)$|\1|p' | sort -u >"$TMPD/$name.set"
    return $rc
}
times() { sort "$TMPD/$1.out" | awk '{printf " %s s", $3}'; }
loaded native
nat=$(wc -l <"$TMPD/native.set")
[ "$nat" -ge 5 ] && [ "$(grep -c '^init ' "$TMPD/native.out")" -eq 2 ]
ok $? "natively the ranks initialised $nat MCA components; MPI_Init took$(times native)"
for cfg in bcj skr:none cda; do
    a=${cfg%%:*}
    pb=auto
    case $cfg in *:none) pb=none ;; esac
    loaded "$a" LD_PRELOAD="$LIB" TDSHIM_REPORT=none TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK=$pb
    rc=$?
    m=$(wc -l <"$TMPD/$a.set")
    [ $rc -eq 0 ] && [ "$(grep -c '^init ' "$TMPD/$a.out")" -eq 2 ] && cmp -s "$TMPD/native.set" "$TMPD/$a.set"
    ok $? "$cfg: the ranks initialised the native run's MCA components ($m of $nat); MPI_Init took$(times "$a")"
    diff "$TMPD/native.set" "$TMPD/$a.set" | grep '^[<>]' | head -5 | sed 's/^/# /'
done
done_testing
