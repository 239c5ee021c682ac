#!/bin/sh
# Progress safety and exact idleness (README "The model": the passivity rule
# and the progress guarantee). tests/mpi/progmix is a correct program that
# never polls while idle: rounds of Irecv/Isend (and persistent, Sendrecv,
# blocking sends) completed with every completion call in several groupings,
# MPI_Allreduce between rounds, messages on both sides of the eager limit.
# Under every algorithm it must end with exact data, within the timeout
# (no send may wait for a rank in a collective), with
# zero contract violations, no unsafe announcement, no core error, and no
# announcement before every rank is in MPI_Finalize (the job is never
# quiescent earlier). The bidirectional window pattern of MPI benchmark
# suites runs at 2 and 4 ranks; the mixed pattern at 4 (and 8 with
# PROGRESS_FULL=1: make check-long-progress). cda and hcda
# also run starved of credit (TDSHIM_CDA_INIT=2): hundreds of sends then go
# out prepaid (a BORROW each, never held: issue 26), and the report must
# show the borrows (at least one: their number depends on timing).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

ALGOS="none bcj skr fourcounter termdetect hcda cda edod xulau bcjrd"
check() { # DIR NP [min borrows]
    "${PYTHON3:-python3}" - "$1" "$2" "${3:-0}" <<'PY'
import glob, json, sys
runs = glob.glob(sys.argv[1] + "/tdshim-report-*")
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
n = int(sys.argv[2])
js = [json.load(open("%s/rank-%04d.json" % (runs[0], r))) for r in range(n)]
bad = []
last_in = max(j["t_finalize_s"] for j in js)
for r, j in enumerate(js):
    d = j["detection"]
    if d["violations"]: bad.append("rank %d: %d contract violations" % (r, d["violations"]))
    if d.get("unsafe"): bad.append("rank %d: %d unsafe announcements" % (r, d["unsafe"]))
    if d["core_error"]: bad.append("rank %d: core error %s" % (r, d["core_error"]))
    for e in j["episodes"]:
        t = e["t_detect_s"]
        # 10 ms: the clock alignment error is far smaller on one host
        if t is not None and t < last_in - 0.01:
            bad.append("rank %d: episode %d detected at %.4f s, before the last rank entered MPI_Finalize (%.4f s)"
                       % (r, e["episode"], t, last_in))
borrows = sum(j["detection"]["borrows"] for j in js)
if borrows < int(sys.argv[3]): bad.append("%d borrows, want >= %s" % (borrows, sys.argv[3]))
for b in bad[:8]: print("# " + b)
sys.exit(1 if bad else 0)
PY
}

run_case() { # ALGO NP PATTERN SEED [starved]
    dir="$TMPD/r-$1-$2-$3-$4"
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    starve="" mindef=0
    # at least one borrow: how many depends on timing (cda, 4 ranks, bidir seed 15, 6 runs each
    # on 2026-11-29: 13-82 before and 11-88 after that day's commits; 8 once in a CI dry run,
    # which the floor of 10 it had failed); none would mean the report lost them
    [ -n "${5:-}" ] && starve="TDSHIM_CDA_INIT=2 TDSHIM_CDA_BORROW=1" mindef=1
    # shellcheck disable=SC2086
    run_mpi "$2" LD_PRELOAD="$LIB" TDSHIM_ALGO="$1" TDSHIM_NOTIFY=none TDSHIM_REPORT=json $starve \
        TDSHIM_REPORT_DIR="$dir" -- "$B/progmix" --pattern "$3" --seed "$4" --rounds 15 \
        >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    t1=$(date +%s.%N)
    st=0
    if [ $rc -ne 0 ] || ! grep -q "^RESULT progmix .* errors=0 ok$" "$TMPD/out"; then
        st=1
        [ $rc -eq 124 ] && diag "HANG: killed by the 60 s timeout"
        diag "exit status $rc" "$(tail -n 3 "$TMPD/out")" "$(head -n 8 "$TMPD/err")"
    elif ! check "$dir" "$2" "$mindef"; then
        st=1
    elif grep -q "tdshim: rank" "$TMPD/err"; then
        st=1
        diag "tdshim warned:" "$(grep 'tdshim: rank' "$TMPD/err" | head -3)"
    fi
    ok $st "$1${5:+ (starved of credit)} np=$2 $3 seed=$4: exact, no violation, no hang, nothing announced early ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s)"
}

# PROGRESS_FULL=1 (make check-long-progress) adds the 8-rank mixed runs
# (6 ranks over 2 cores each time: 70 s of the CI's 30 minutes)
FULL=${PROGRESS_FULL:-0}
n=0
for a in $ALGOS; do n=$((n + 3 + FULL)); done
plan $((n + 2 + 2 + 2 * FULL + 1))
# the program is right without the shim
run_mpi 4 -- "$B/progmix" --pattern mix --seed 1 --rounds 30 >"$TMPD/out" 2>&1 &&
    grep -q "errors=0 ok$" "$TMPD/out"
ok $? "native progmix np=4: $(grep -o 'completions=[^ ]*' "$TMPD/out")"
run_mpi 2 -- "$B/progmix" --pattern bidir --seed 2 --rounds 30 >"$TMPD/out" 2>&1 &&
    grep -q "errors=0 ok$" "$TMPD/out"
ok $? "native progmix bidir np=2"
for a in $ALGOS; do
    run_case "$a" 2 bidir 11
    run_case "$a" 4 bidir 12
    run_case "$a" 4 mix 13
    [ "$FULL" = 1 ] && run_case "$a" 8 mix 14
done
for a in cda hcda; do
    run_case "$a" 4 bidir 15 starved
    [ "$FULL" = 1 ] && run_case "$a" 8 mix 16 starved
done
# TDSHIM_IGNORE_EMPTY=1: progmix's zero-byte messages are not primary
# (counted as ignored on both sides), the rest as before. No check of
# violations here: progmix's empty messages do carry meaning (a round's
# message, after which the rank sends at once), the very risk the README
# gives for TDSHIM_IGNORE_EMPTY, so a rank whose round brought only empty
# messages after a long wait (a loaded machine: 1 run in ~25) sends while
# passive and the violation is counted, as it should be.
dir="$TMPD/ie"
mkdir -p "$dir"
run_mpi 4 LD_PRELOAD="$LIB" TDSHIM_IGNORE_EMPTY=1 TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" -- \
    "$B/progmix" --pattern mix --seed 3 --rounds 30 >"$TMPD/out" 2>"$TMPD/err" &&
    grep -q "errors=0 ok$" "$TMPD/out" && "${PYTHON3:-python3}" - "$dir" <<'PY'
import glob, json, sys
js = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*/rank-*.json")]
ign, s, r = (sum(j["primary"][k] for j in js) for k in ("ignored", "sent", "received"))
print("# ignored %d (both sides), primary sent %d received %d" % (ign, s, r))
sys.exit(0 if ign > 0 and ign % 2 == 0 and s == r else 1)
PY
ok $? "TDSHIM_IGNORE_EMPTY=1: zero-byte messages counted as ignored on both sides, primaries exact"
done_testing
