#!/bin/sh
# Measure mode: TDSHIM_NOTIFY=none on programs that stop by themselves
# (--native-stop). The shim must not change the result, deliver nothing
# (notifications=0, nothing arriving while the program lingers), and still
# record the detection: at least one episode in every rank's report, and
# detection.notifications == 0.
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

plan 5
measure_case() {
    local desc=$1 np=$2 ex=$3 dir="$work/measure" rc st=0
    shift 3
    mkdir -p "$dir"
    if ! have_shim; then ok 1 "$desc: libtdshim.so not built"; return; fi
    timeout -k 5 "$TMO" "$RUN" --notify none --report-dir "$dir" -np "$np" "$EX/$ex" --native-stop "$@" \
        >"$work/out" 2>"$work/out.err"
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "^RESULT example=$ex ranks=$np .*notifications=0 stray=0 .*ok\$" "$work/out"; then
        st=1
        diag "exit status $rc; output:" "$(tail -n 5 "$work/out")" "stderr:" "$(tail -n 15 "$work/out.err")"
    elif ! check_reports "$dir" "$np" -1 || ! "${PYTHON3:-python3}" - "$dir" "$np" <<'PY'
import glob, json, sys
d, n = glob.glob(sys.argv[1] + "/tdshim-report-*")[0], int(sys.argv[2])
bad = [r for r in range(n) if json.load(open("%s/rank-%04d.json" % (d, r)))["detection"]["notifications"]]
if bad: print("# ranks %s got notifications in measure mode" % bad)
sys.exit(1 if bad else 0)
PY
    then
        st=1
    fi
    ok $st "$desc"
    rm -rf "$dir"
}
measure_case "measure mode token_ring np=4" 4 token_ring --tokens 3 --linger-ms 200
measure_case "measure mode dnc_tree np=3" 3 dnc_tree --max-depth 9 --linger-ms 200
measure_case "measure mode three_phase np=4" 4 three_phase --work-us 20 --linger-ms 200
measure_case "measure mode burst_spawn np=1 (single rank)" 1 burst_spawn --linger-ms 200

# An episode closed only by MPI_Finalize (TDSHIM_IDLE=api and a program that
# never calls the API: no rank is passive before it) still has every
# column: entering MPI_Finalize is each rank's last busy->idle transition.
dir="$work/finonly"
mkdir -p "$dir"
st=0
if ! have_shim; then
    st=1
else
    TDSHIM_IDLE=api timeout -k 5 "$TMO" "$RUN" --notify none --report-dir "$dir" -np 2 "$EX/token_ring" --native-stop \
        >"$work/out" 2>"$work/out.err" || st=1
    rows=$(sed -n '/^@--- Detection episodes/,/^Latency =/p' "$dir"/tdshim-report-*/summary.txt | grep -E '^ +[0-9]+ ')
    if [ -z "$rows" ] || printf '%s\n' "$rows" | grep -qi nan; then
        st=1
        diag "episode table:" "$rows"
    fi
fi
ok $st "a finalize-only episode has LastPassive, Latency and I2E (no nan)"
done_testing
