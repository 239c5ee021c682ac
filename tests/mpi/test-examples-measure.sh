#!/bin/sh
# Measure mode: TDSHIM_NOTIFY=none on programs that stop by themselves
# (--native-stop). The shim must not change the result, deliver nothing
# (notifications=0, nothing arriving while the program lingers), and still
# record the detection: at least one episode in every rank's report, and
# detection.notifications == 0. The programs that keep the contract get
# the advice that they do.
# Then the advice (README, "Measure mode and the advice") followed step by
# step on work_steal, a program that polls while busy and sends requests
# and "no work" replies that carry no work: each run's advice names the
# next setting, and the last run keeps the contract:
#   probe                        -> no notion free of breaches (the idle notions side by side):
#                                   measure again with TDSHIM_IDLE=test (its breaches' tags then show)
#   test                         -> TDSHIM_IGNORE_TAGS=1 (steal requests sent while passive)
#   test, ignore tag 1           -> TDSHIM_IGNORE_EMPTY=1 (empty replies on tag 2 sent while passive)
#   test, ignore tag 1 and empty -> TDSHIM_IDLE=test had no breach: the contract is kept
# (issue 37: the old chain ended in spin, which notified early at fine grain)
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

plan 10
# The busy-polling evidence is CPU time between empty polls (more than
# TDSHIM_SPIN_GAP, 20 us): beside a loaded CI box's other jobs the same code
# takes longer, and dnc_tree, which does not poll while busy, was once seen
# "polling while busy" 132 times in 6556 empty polls (fresh-clone CI at
# 9279085; 3 of 8 runs under load on a branch, 0 of 3 quieter). A case whose
# advice fails only on that evidence is run again, three runs at most; each
# retry is in the log.
measure_case() {
    local try=1
    while ! measure_once "$@" && [ $try -lt 3 ] && grep -q 'poll while busy' "$work/advice.txt" 2>/dev/null; do
        diag "try $try: the advice saw busy polling (CPU time between empty polls, load-dependent): again"
        try=$((try + 1))
    done
    ok $st "$1 (and the advice says it kept the contract, or names a notion without breaches)$([ $try -gt 1 ] && echo ", run $try")"
}
measure_once() {
    local desc=$1 np=$2 ex=$3 dir="$work/measure" rc
    st=0
    shift 3
    rm -rf "$dir" "$work/advice.txt"
    mkdir -p "$dir"
    if ! have_shim; then st=1; diag "$desc: libtdshim.so not built"; return 1; fi
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
    elif ! grep -Eq '^The program kept the contract under TDSHIM_IDLE=probe|^[0-9]\. TDSHIM_IDLE=[a-z]+: no breach among' \
        "$dir"/tdshim-report-*/summary.txt; then
        st=1
        sed -n '/^@--- Advice/,$p' "$dir"/tdshim-report-*/summary.txt >"$work/advice.txt"
        diag "advice:" "$(cat "$work/advice.txt")"
    fi
    rm -rf "$dir"
    return $st
}

# advice_step DESC WANT_STDERR_REGEX WANT_SUMMARY_REGEX [VAR=value...]:
# work_steal in measure mode; the stderr advice line and summary.txt's
# Advice section must match (an empty stderr regex: no advice line).
# Under spin, whether a rank is passive when it answers depends on timing:
# on a loaded box every rank may be judged busy in one run (no violation,
# "kept the contract"); such a run is retried, four times at most. The run
# that needs violations on tag 1 uses TDSHIM_SPIN_GAP=2000: under the
# default 20 us, a rank descheduled between two polls is judged busy again,
# and beside two busy loops 12 runs of 12 had no violation (with 2000 us: 3
# of 12; the fresh-clone CI at 42378d5 failed on three in a row). The run
# with tag 1 ignored keeps the default: with 2000 us a victim judged
# passive while still working also sends non-empty work on tag 2.
advice_step() {
    local desc=$1 want_err=$2 want_sum=$3 dir="$work/advice" st=0 try=0 adv few
    shift 3
    if ! have_shim; then ok 1 "$desc: libtdshim.so not built"; return; fi
    while :; do
        rm -rf "$dir" && mkdir -p "$dir"
        env "$@" timeout -k 5 "$TMO" "$RUN" --notify none --report-dir "$dir" -np 4 "$EX/work_steal" --native-stop \
            --seed 7 --phases 6 --root-children 100 >"$work/out" 2>"$work/out.err"
        adv=$(sed -n '/^@--- Advice/,$p' "$dir"/tdshim-report-*/summary.txt 2>/dev/null)
        try=$((try + 1))
        # thin evidence, a matter of timing: no violation at all, or a notion
        # named on fewer than 300 passive judgements (a loaded fresh-clone CI
        # run at 88fda6f: spin judged passive 33 times, 0 breaches, where
        # runs beside it judge 320-490 times with 31-47 breaches; one at
        # 69cbafd, whose polls are cheaper: 132 times, 0 breaches, where 6
        # runs beside the CI's ThreadSanitizer step judged 0-152 times with
        # 0-5 breaches)
        few=$(sed -n 's/^tdshim: advice: TDSHIM_IDLE=[a-z]* (no breach in \([0-9]*\) passive judgements).*/\1/p' \
            "$work/out.err")
        if [ -n "$want_err" ] && [ $try -lt 5 ] && printf '%s\n' "$adv" | grep -q '^The program kept the contract'; then
            diag "try $try: no evidence in this run (timing), again"
        elif [ -z "$want_err" ] && [ $try -lt 5 ] && grep -q '^tdshim: advice: .*poll while busy' "$work/out.err"; then
            # busy-polling evidence (CPU time between empty polls), which a
            # loaded box inflates, as measure_case's: the fresh-clone CI
            # run at 9fa7904, beside other tests, saw 99 and 219 such gaps
            # in two runs of the step that follows the advice; alone, 0 in
            # 12 runs (this library and 1dd7d00's)
            diag "try $try: $(grep '^tdshim: advice' "$work/out.err"): busy polling seen (load-dependent), again"
        elif [ -n "$want_err" ] && [ $try -lt 5 ] && [ -n "$few" ] && [ "$few" -lt 300 ] &&
            ! grep -Eq "^tdshim: advice: .*$want_err" "$work/out.err"; then
            diag "try $try: $(grep '^tdshim: advice' "$work/out.err"): too few judgements (timing), again"
        else
            break
        fi
    done
    if ! grep -q "^RESULT example=work_steal ranks=4 .* ok\$" "$work/out"; then
        st=1
        diag "output:" "$(tail -n 3 "$work/out")" "$(tail -n 8 "$work/out.err")"
    elif [ -n "$want_err" ] && ! grep -Eq "^tdshim: advice: .*$want_err" "$work/out.err"; then
        st=1
    elif [ -z "$want_err" ] && grep -q "^tdshim: advice:" "$work/out.err"; then
        st=1
    elif ! printf '%s\n' "$adv" | grep -Eq "$want_sum"; then
        st=1
    fi
    [ $st -eq 0 ] || diag "stderr advice: $(grep '^tdshim: advice' "$work/out.err")" "summary:" "$adv"
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

# A notion unsound for the program is rejected: aggregated_traversal tests
# the same MPI_ANY_TAG receives while busy and idle, and at 1 us per vertex
# the test notion's judgements are breached (it then sends buffers): the
# advice must not name test, and must show its breaches
dir="$work/reject"
rm -rf "$dir" && mkdir -p "$dir"
st=0
timeout -k 5 "$TMO" "$RUN" --notify none --report-dir "$dir" -np 2 "$EX/aggregated_traversal" --native-stop \
    --seeds 2 --work-us 1 >"$work/out" 2>"$work/out.err" || st=1
adv=$(sed -n '/^@--- Advice/,$p' "$dir"/tdshim-report-*/summary.txt 2>/dev/null)
if [ $st -ne 0 ] || ! printf '%s\n' "$adv" | grep -Eq 'TDSHIM_IDLE=test judged [0-9]+ times passive on [0-9]+ of 2 ranks, [1-9][0-9]* breaches' ||
    printf '%s\n' "$adv" | grep -q 'TDSHIM_IDLE=test: no breach' || grep -q 'advice: TDSHIM_IDLE=test' "$work/out.err"; then
    st=1
    diag "advice:" "$adv" "$(tail -n 3 "$work/out.err")"
fi
ok $st "aggregated_traversal --work-us 1: measure mode shows test's breaches and does not advise it"

advice_step "work_steal under probe: no notion free of breaches, measure again with TDSHIM_IDLE=test" \
    'measure again with TDSHIM_IDLE=test' '^2\. No idle notion was free of breaches' TDSHIM_IDLE=probe
# tag 1's messages are all 4 bytes: TDSHIM_IGNORE_SHORT=1:4 is the same setting as
# TDSHIM_IGNORE_TAGS=1 for it, named when the run's work-tag evidence counted tag 1
# as carrying work (a fresh-clone CI run at 80e2343: 2 of 8 finds; as
# test-examples-queue.sh's first measure step, issue 41)
advice_step "work_steal under test: the advice names tag 1 (requests) or tag 2's empty replies, sent by passive ranks" \
    'TDSHIM_IGNORE_TAGS=1 if tag 1 carries no work|TDSHIM_IGNORE_EMPTY=1 \(empty messages on tag 2|TDSHIM_IGNORE_SHORT=1:4 \(4-byte messages on tag 1' \
    '^[0-9]\. tag [12]: [0-9]+ messages sent by (passive ranks|ranks judged passive)' TDSHIM_IDLE=test
advice_step "work_steal under test, tag 1 ignored: the advice is TDSHIM_IGNORE_EMPTY=1 (tag 2, all empty)" \
    'TDSHIM_IGNORE_EMPTY=1 \(empty messages on tag 2' '^[0-9]\. tag 2: [0-9]+ messages sent by passive ranks .*, all empty' \
    TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1
advice_step "work_steal with the advice followed: test had no breach, the contract is kept, no advice line" \
    '' '^The program kept the contract under TDSHIM_IDLE=test' TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1
done_testing
