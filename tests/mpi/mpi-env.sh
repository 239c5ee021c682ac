# Common setup of the MPI TAP scripts: source after tests/tap.sh.
# Provides $LIB (the built libtdshim.so), $B (tests/mpi build dir) and
# run_mpi N [VAR=value...] -- PROGRAM ARGS: mpirun with the variables set
# in every rank only (-x VAR=value: mpirun itself is not preloaded), under a
# 60 s timeout (RUN_MPI_TIMEOUT seconds if set). Values must not contain spaces.
: "${top_builddir:?run through make check}"
: "${MPIRUN:=mpirun}"
LIB="$top_builddir/shim/.libs/libtdshim.so"
# a sanitizer build (--enable-sanitizers): the ASan runtime must come first
# in the preload list, and the ranks need the sanitizer options
SAN_X=""
asan=$(ldd "$LIB" 2>/dev/null | sed -n 's/.*libasan[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
if [ -n "$asan" ]; then
    LIB="$asan:$LIB"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    SAN_X="-x ASAN_OPTIONS -x UBSAN_OPTIONS"
fi
# a ThreadSanitizer build (--enable-sanitizers=thread): likewise
tsan=$(ldd "$LIB" 2>/dev/null | sed -n 's/.*libtsan[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
if [ -n "$tsan" ]; then
    LIB="$tsan:$LIB"
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:report_signal_unsafe=0:suppressions=$(cd "$top_srcdir" && pwd)/tests/mpi/tsan.supp}"
    SAN_X="-x TSAN_OPTIONS"
fi
B="$top_builddir/tests/mpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# quiet, local-only Open MPI: no network probing on a CI box. TDSHIM_TEST_BTL=tcp,self
# runs the tests over the TCP transport (the inter-node path, on the loopback):
# other eager/rendezvous thresholds and another completion order (make check-tcp)
export OMPI_MCA_btl="${TDSHIM_TEST_BTL:-self,vader}" OMPI_MCA_rmaps_base_oversubscribe=1
case $OMPI_MCA_btl in *tcp*) export OMPI_MCA_btl_tcp_if_include=lo ;; esac
# ob1, the messaging layer a node without InfiniBand ends up with anyway,
# chosen up front: probing UCX first cost each launch 0.15-0.2 s here
# (0.59-0.76 s against 0.39-0.52 s for a 2-rank job), a tenth of make check
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}" OMPI_MCA_osc="${OMPI_MCA_osc:-^ucx}"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-test.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
# The launcher's flavour: Open MPI's mpirun (-x NAME=value, --oversubscribe)
# or MPICH's hydra (-genv NAME value; it runs any number of ranks anyway).
case $("$MPIRUN" --version 2>&1 | head -n 3) in
*HYDRA* | *MPICH* | *hydra*) MPI_FLAVOUR=hydra ;;
*) MPI_FLAVOUR=ompi ;;
esac
run_mpi() {
    n=$1; shift
    xs=""
    while [ "$1" != "--" ]; do
        if [ $MPI_FLAVOUR = hydra ]; then
            xs="$xs -genv ${1%%=*} ${1#*=}"
        else
            xs="$xs -x $1"
        fi
        shift
    done
    shift
    if [ $MPI_FLAVOUR = hydra ]; then
        # shellcheck disable=SC2086
        timeout "${RUN_MPI_TIMEOUT:-60}" "$MPIRUN" -n "$n" $xs "$@"
    else
        # session directories of its own: jobs started side by side (config.sh)
        # race on creating the shared top one ("File exists"; Makefile.am)
        # shellcheck disable=SC2086
        OMPI_MCA_orte_tmpdir_base=$(mktemp -d "$TMPD/ompi.XXXXXX") \
            timeout "${RUN_MPI_TIMEOUT:-60}" "$MPIRUN" --oversubscribe -n "$n" $SAN_X $xs "$@"
    fi
}
# plan_mpi4 N PROGRAM [ARGS]: plan N points of a test of an MPI-4.0 program
# (built against an older MPI it prints "no MPI-4"; ARGS make it end at once
# otherwise): then all N are skipped and the script ends
plan_mpi4() {
    pm_n=$1 pm_p=$2
    shift 2
    plan "$pm_n"
    if [ "$("$pm_p" "$@" 2>/dev/null)" = "no MPI-4" ]; then
        for i in $(seq "$pm_n"); do skip "the MPI library predates MPI-4.0"; done
        exit 0
    fi
}
# report_counts DIR NP OUT: the one run's reports in DIR give each of the NP
# ranks the primaries sent and received that its line "rank R: ... sent S
# received N" in OUT says, nothing unreceived and no violation (non-zero,
# with a diagnostic line, otherwise)
report_counts() {
    "${PYTHON3:-python3}" - "$1" "$2" "$3" <<'PY'
import glob, json, os, re, sys
d, np = sys.argv[1], int(sys.argv[2])
lines = dict((int(m.group(1)), (int(m.group(2)), int(m.group(3))))
             for m in re.finditer(r"^rank (\d+): .* sent (\d+) received (\d+)$", open(sys.argv[3]).read(), re.M))
runs = glob.glob(os.path.join(d, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
for r in range(np):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    p, det = j["primary"], j["detection"]
    got = (p["sent"], p["received"], p["unreceived_at_finalize"], det["violations"])
    want = lines.get(r, (-1, -1)) + (0, 0)
    if got != want:
        print("# rank %d: (sent, received, unreceived, violations) = %s, expected %s" % (r, got, want))
        sys.exit(1)
PY
}

# rotation FULL "A..." "B..." KEEP...: "a b" lines, the pairs a test runs
# when one pairing per A is enough: every B for an A named in KEEP, one B
# in turn for every other A; FULL=1: every pair (fortran.sh, mpi4.sh)
rotation() {
    rot_full=$1 rot_as=$2 rot_bs=$3
    shift 3
    rot_nb=$(echo $rot_bs | wc -w) rot_i=0
    for rot_a in $rot_as; do
        rot_j=0 rot_keep=0
        for rot_k in "$@"; do [ "$rot_a" = "$rot_k" ] && rot_keep=1; done
        for rot_b in $rot_bs; do
            if [ "$rot_full" = 1 ] || [ $rot_keep = 1 ] || [ $((rot_i % rot_nb)) -eq $rot_j ]; then
                echo "$rot_a $rot_b"
            fi
            rot_j=$((rot_j + 1))
        done
        rot_i=$((rot_i + 1))
    done
}

# as_native CFG ARGS...: the 2-rank program ARGS (its last argument
# $TMPD/run, the prefix of the files $TMPD/run.0 and .1 its ranks write)
# under tdshim with CFG, algorithm:piggyback[:notification tag], and a JSON
# report in $cfg_dir; one point: exit 0 and the ranks' files ($TMPD/out)
# identical to $TMPD/native. Sets a, pb, nt (the notification: none or
# tag:N) and cfg_dir (ringwait.sh, probed.sh); AS_NATIVE_ENV: more
# VAR=value settings for the run
as_native() {
    a=${1%%:*} pb=${1#*:} nt=none
    shift
    case $pb in *:*) nt=tag:${pb#*:} pb=${pb%%:*} ;; esac
    cfg_dir="$TMPD/rep-$a-$pb-$nt${AS_NATIVE_ENV:+-g}"
    mkdir -p "$cfg_dir"
    # shellcheck disable=SC2086
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_NOTIFY="$nt" TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$cfg_dir" ${AS_NATIVE_ENV:-} -- "$@" >"$TMPD/err" 2>&1
    as_rc=$?
    cat "$TMPD/run.0" "$TMPD/run.1" >"$TMPD/out" 2>/dev/null
    [ $as_rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/out"
    ok $? "$a, TDSHIM_PIGGYBACK=$pb, TDSHIM_NOTIFY=$nt${AS_NATIVE_ENV:+, $AS_NATIVE_ENV}: exit $as_rc, output identical to native"
    [ $as_rc -eq 0 ] || sed 's/^/# /' "$TMPD/err" | head -n 8
    cmp -s "$TMPD/native" "$TMPD/out" || diff "$TMPD/native" "$TMPD/out" | head -n 8 | sed 's/^/# /'
}
