# Shared by tests/mpi/test-examples*.sh and test-run.sh (sourced, not a test).
# Program output and stderr go to separate files: mpirun forwards the two
# streams separately, and tdshim's stderr summary must not split a RESULT line.
# Runs the example programs under tdshim through scripts/tdshim-run and
# judges them by the program's own RESULT line (ground truth from the seed,
# one done message per phase, nothing arriving after it) and, when the shim
# wrote one, by the per-rank JSON report (shim/report/schema.json).
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
. "$top_srcdir/tests/tap.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# TDSHIM_TEST_BTL=tcp,self: over the TCP transport (tests/mpi/mpi-env.sh)
if [ -n "${TDSHIM_TEST_BTL:-}" ]; then
    export OMPI_MCA_btl="$TDSHIM_TEST_BTL"
    case $OMPI_MCA_btl in *tcp*) export OMPI_MCA_btl_tcp_if_include=lo ;; esac
fi
# A rank that busy-polls must yield the core to the others (2 cores, 16 ranks).
export OMPI_MCA_mpi_yield_when_idle=1
export MPIRUN="${MPIRUN:-mpirun}"
# Anything TDSHIM_* from the caller's environment would leak into every run.
for v in $(env | sed -n 's/^\(TDSHIM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

EX="$top_builddir/examples"
RUN="$top_builddir/scripts/tdshim-run"
SHIMLIB="$top_builddir/shim/.libs/libtdshim.so"
DONE_TAG=999
TMO="${TDSHIM_TEST_TIMEOUT:-120}"
work=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-ex.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

have_shim() { [ -f "$SHIMLIB" ]; }

# Algorithms to test: what the simulator knows (it links the same core),
# minus 'none', which by design never announces.
algos() {
    local list=
    if [ -x "$top_builddir/tests/sim/tdsim" ]; then
        list=$("$top_builddir/tests/sim/tdsim" --list-algos 2>/dev/null | awk '{print $1}')
    fi
    [ -n "$list" ] || list=bcj
    printf '%s\n' $list | grep -vx none
}

# check_reports DIR NP NOTIFICATIONS: DIR (the --report-dir of one
# tdshim-run) holds one tdshim-report-* directory; every rank's JSON report there
# exists, says
# NOTIFICATIONS notifications were delivered (-1: any), records at least
# that many episodes (finalize may close one more: NOTIFICATIONS+1 at most,
# or >= 1 in measure mode), the same episodes on every rank, no contract violation (the examples keep the
# contract), no core error, nothing unreceived, and sent == received.
check_reports() {
    "${PYTHON3:-python3}" - "$@" <<'PY'
import glob, json, sys, os
parent, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = glob.glob(os.path.join(parent, "tdshim-report-*"))
if len(runs) != 1:
    print("# %s: %d report directories, want 1" % (parent, len(runs))); sys.exit(1)
d = runs[0]
lo, hi = (k, k + 1) if k >= 0 else (1, 1 << 30)
bad = []
sent = recv = 0
eps = set()
for r in range(n):
    p = os.path.join(d, "rank-%04d.json" % r)
    try:
        j = json.load(open(p))
    except Exception as e:
        print("# report %s: %s" % (p, e)); sys.exit(1)
    ne = len(j["episodes"])
    eps.add(tuple(sorted(e["episode"] for e in j["episodes"])))
    if not lo <= ne <= hi: bad.append("rank %d: %d episodes (want %d..%d)" % (r, ne, lo, hi))
    det = j["detection"]
    if k >= 0 and det["notifications"] != k: bad.append("rank %d: %d notifications (want %d)" % (r, det["notifications"], k))
    if det["violations"]: bad.append("rank %d: %d contract violations" % (r, det["violations"]))
    if det["core_error"]: bad.append("rank %d: core error %s" % (r, det["core_error"]))
    if det["unsafe"]: bad.append("rank %d: %d pieces of evidence of a premature announcement: %s" % (r, det["unsafe"], [e.get("unsafe_why") for e in j["episodes"] if e["unsafe"]]))
    if j["primary"]["unreceived_at_finalize"]: bad.append("rank %d: unreceived messages" % r)
    sent += j["primary"]["sent"]; recv += j["primary"]["received"]
if sent != recv: bad.append("primary sent %d != received %d" % (sent, recv))
if len(eps) > 1: bad.append("the ranks' reports list different episodes: %s" % sorted(eps))
for b in bad: print("# " + b)
sys.exit(1 if bad else 0)
PY
}

# run_case DESC NP PHASES ALGO EXAMPLE ARGS...: one run under the shim with
# TDSHIM_NOTIFY=tag:$DONE_TAG; ok when the program says ok with PHASES
# notifications per rank and the reports agree.
run_case() {
    local desc=$1 np=$2 phases=$3 algo=$4 ex=$5
    shift 5
    local dir="$work/rep-$tap_n" out="$work/out" t0 t1 rc st=0
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    timeout -k 5 "$TMO" "$RUN" --algo "$algo" --notify "tag:$DONE_TAG" --report-dir "$dir" \
        -np "$np" "$EX/$ex" --done-tag "$DONE_TAG" "$@" >"$out" 2>"$out.err"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ] || ! grep -q "^RESULT example=$ex ranks=$np .* phases=$phases notifications=$phases stray=0 .*ok\$" "$out"; then
        st=1
        [ $rc -eq 124 ] && diag "timed out after ${TMO}s (a hang: termination never announced?)"
        diag "exit status $rc; output:" "$(tail -n 5 "$out")" "stderr:" "$(tail -n 15 "$out.err")"
    elif ! check_reports "$dir" "$np" "$phases"; then
        st=1
    fi
    ok $st "$desc ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s)"
    rm -rf "$dir"
}

# run_native DESC NP EXPECT_RC EXAMPLE ARGS...: the program alone (no shim),
# stopping by the message count it computed from the seed.
run_native() {
    local desc=$1 np=$2 want=$3 ex=$4 rc st=0
    shift 4
    timeout -k 5 "$TMO" "$MPIRUN" -np "$np" "$EX/$ex" "$@" >"$work/out" 2>"$work/out.err"
    rc=$?
    if [ $rc -ne 0 ] && [ "$want" = 0 ]; then st=1; fi
    if [ $rc -eq 0 ] && [ "$want" != 0 ]; then st=1; fi
    if [ "$want" = 0 ] && ! grep -q "^RESULT example=$ex ranks=$np .*notifications=0 stray=0 .*ok\$" "$work/out"; then st=1; fi
    if [ "$want" != 0 ] && ! grep -q "^RESULT example=$ex .*FAIL\$" "$work/out"; then st=1; fi
    [ $st -eq 0 ] || diag "exit status $rc; output:" "$(tail -n 5 "$work/out")" "stderr:" "$(tail -n 10 "$work/out.err")"
    ok $st "$desc"
}
