#!/bin/sh
# examples/work_queue (issue 41): a distributed work queue of libcircle's
# design whose workers probe for steal requests and replies before each
# item, answer "no work" with a 4-byte message on the work tag, receipt
# stolen work, leave their loop on the done tag and DROP work that arrives
# afterwards. A premature notification therefore shows as dropped= > 0, a
# wrong item count, or early= > 0 (a rank notified before the last rank ran
# out of work, on a clock common to all ranks).
#   (a) natively (no tdshim) with --native-stop (its own Safra token ring)
#       at 2 and 4 ranks, both workloads: exact count, nothing dropped, ok;
#   (b) under tdshim with TDSHIM_NOTIFY=tag:999 and $QUEUE_SETTINGS for
#       every algorithm (tdsim --list-algos, minus none) at 2 ranks (make
#       check) or 2, 3, 4, 6 and 8 (QUEUE_FULL=1, make check-long-queue:
#       both workloads), $QUEUE_PHASES trees per run: ok, which means the
#       exact count, one notification per tree on every rank, nothing
#       arriving after it, dropped=0 and early=0; and the report's advice
#       has nothing to change;
#   (c) measure mode (TDSHIM_NOTIFY=none, --native-stop) at 4 ranks, with
#       no other setting, then with the one its advice names
#       (TDSHIM_IGNORE_TAGS=1): the program's result is untouched, the
#       advice names TDSHIM_IGNORE_TAGS=1 (or TDSHIM_IGNORE_SHORT=1:4,
#       the same here), then TDSHIM_IGNORE_SHORT=2:4, and
#       the scoped notification (TDSHIM_NOTIFY=tag:N probed for only where
#       idle) -- together $QUEUE_SETTINGS -- and never the work tag (2);
#   (d) QUEUE_FULL=1 only: the setting one step before $QUEUE_SETTINGS
#       (requests ignored, "no work" replies counted) at 2 ranks: its 4-byte
#       "no work" replies sent by passive ranks are contract violations, and
#       the advice names TDSHIM_IGNORE_SHORT=2:4, never the work tag. That
#       setting may also never end (replies always in transit: a fresh-clone
#       CI run timed out at 40 s), so it is tried up to 3 times, in the long
#       sweep only; tests/report/test-advice checks the same rule in make
#       check.
#
# QUEUE_SETTINGS: the TDSHIM_* settings of (b), all in this one place: the
#                 sound setting (issue 41). Under TDSHIM_NOTIFY=tag:N only
#                 the probe for N is an idle poll (docs/internals.md, "Which
#                 polls are idle polls"), and work_queue makes it only with
#                 an empty queue; steal requests (tag 1) and the 4-byte "no
#                 work" replies on the work tag (TDSHIM_IGNORE_SHORT=2:4) are
#                 not primary, so an idle rank answering a request breaks no
#                 contract, and idle ranks exchanging them leave the job
#                 quiescent.
# QUEUE_EXPECT:   `pass` (the default) enforces (b); `fail` reports a
#                 failing case as TAP TODO, for trying other settings.
# QUEUE_FULL=1:   the long sweep: both workloads, 2 to 8 ranks, more trees.
# QUEUE_ALGOS, QUEUE_NPS, QUEUE_PHASES, QUEUE_SEED: narrow or widen (b).
# QUEUE_NATIVE_TIMEOUT: the timeout of (a) and (c), which must end (120 s).
QUEUE_SETTINGS=${QUEUE_SETTINGS-TDSHIM_IDLE=probe TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_SHORT=2:4}
QUEUE_EXPECT=${QUEUE_EXPECT:-pass}
# A run that never ends under tdshim is a failure too; keep it short.
TDSHIM_TEST_TIMEOUT=${TDSHIM_TEST_TIMEOUT:-40}
. "$top_srcdir/tests/mpi/test-examples-lib.sh"
NTMO=${QUEUE_NATIVE_TIMEOUT:-120}

FULL=${QUEUE_FULL:-0}
if [ "$FULL" = 1 ]; then
    NPS=${QUEUE_NPS:-2 3 4 6 8}
    LOADS=${QUEUE_LOADS:-short long}
    PHASES=${QUEUE_PHASES:-4}
else
    NPS=${QUEUE_NPS:-2}
    LOADS=${QUEUE_LOADS:-short}
    PHASES=${QUEUE_PHASES:-2}
fi
SEED=${QUEUE_SEED:-5}
list=${QUEUE_ALGOS:-$(algos)}
n=6
[ "$FULL" = 1 ] && n=7
for a in $list; do for np in $NPS; do for l in $LOADS; do n=$((n + 1)); done; done; done
plan $n

# result FILE EXAMPLE NP: the RESULT line's verdict fields, for the log
fields() { sed -n 's/^RESULT .* \(tasks=[0-9]* expected=[0-9]*\) .* \(phases=[0-9]* notifications=[0-9.]* stray=[0-9]*\) \(time=[0-9.]*\) workload=[a-z]* \(items=.*\) \([a-zA-Z]*\)$/\1 \2 \3 \4 \5/p' "$1"; }

# report_says DIR: what the report of the run in DIR says of its episodes
report_says() {
    awk 'NF == 10 && $1 ~ /^[0-9]+$/ && ($10 == "ok" || $10 == "UNSAFE") { n[$10]++ }
         /^contract violations / { v = $3 }
         END { printf "report: episodes %d ok, %d UNSAFE; contract violations (min/rank) %s\n", n["ok"], n["UNSAFE"], v }' \
        "$1"/tdshim-report-*/summary.txt 2>/dev/null
}

# (a) native: ok (the exact count), no notification, nothing arriving
# after a tree, dropped=0, early=0, and stolen > 0 (the tree was shared)
native() {
    np=$1 load=$2 st=0
    timeout -k 5 "$NTMO" "$MPIRUN" -np "$np" "$EX/work_queue" --native-stop --workload "$load" --phases 2 \
        --seed "$SEED" >"$work/out" 2>"$work/out.err"
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "^RESULT example=work_queue ranks=$np .* notifications=0 stray=0 .* dropped=0 early=0 stolen=[1-9].* ok\$" "$work/out"; then
        st=1
        diag "exit status $rc: $(fields "$work/out")" "$(tail -n 6 "$work/out.err")"
    else
        diag "$(fields "$work/out")"
    fi
    ok $st "native --native-stop np=$np --workload $load: exact count, dropped=0, early=0, work stolen"
}
native 2 short
native 4 short
native 2 long
native 4 long

# (b) under tdshim
case_b() {
    algo=$1 np=$2 load=$3
    desc="$algo np=$np --workload $load, $PHASES trees, $QUEUE_SETTINGS"
    if ! have_shim; then ok 1 "$desc: libtdshim.so not built"; return; fi
    dir="$work/rep-$tap_n" out="$work/out" st=0
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # QUEUE_SETTINGS is a list of VAR=value words
    env $QUEUE_SETTINGS timeout -k 5 "$TMO" "$RUN" --algo "$algo" --notify "tag:$DONE_TAG" --report-dir "$dir" \
        -np "$np" "$EX/work_queue" --done-tag "$DONE_TAG" --linger-ms 2 --workload "$load" \
        --phases "$PHASES" --seed "$SEED" --verbose >"$out" 2>"$out.err"
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -ne 0 ] || ! grep -q "^RESULT example=work_queue ranks=$np .* phases=$PHASES notifications=$PHASES stray=0 .* dropped=0 early=0 .* ok\$" "$out"; then
        st=1
        if [ $rc -eq 124 ]; then
            diag "timed out after ${TMO}s (a hang: termination never announced?);" \
                "$(grep -c ' ended at ' "$out.err") of $((np * PHASES)) rank-phases had ended" \
                "$(grep -E '^work_queue:' "$out.err" | grep -v ' ended at ' | head -n 4)"
        else
            diag "exit status $rc: $(fields "$out")" "the program says:" \
                "$(grep -E '^work_queue:' "$out.err" | grep -v ' ended at ' | head -n 6)"
        fi
    elif grep -q 'CONTRACT VIOLATIONS\|UNSAFE\|TDSHIM_IGNORE_TAGS=2' "$out.err"; then
        st=1
        diag "$(fields "$out")" "the report says the setting is not right:" "$(grep '^tdshim: ' "$out.err" | head -n 4)"
    else
        diag "$(fields "$out")"
    fi
    diag "$(report_says "$dir")"
    if [ $st -ne 0 ] && [ "$QUEUE_EXPECT" != pass ]; then
        tap_n=$((tap_n + 1))
        echo "not ok $tap_n - $desc (${secs}s) # TODO issue 41: QUEUE_EXPECT=$QUEUE_EXPECT"
    else
        ok $st "$desc (${secs}s)"
    fi
    rm -rf "$dir"
}
for a in $list; do
    for np in $NPS; do
        for l in $LOADS; do case_b "$a" "$np" "$l"; done
    done
done

# (c) measure mode, as a user would first run it: no setting but the mode,
# then with the setting its advice names (the requests' tag ignored). Each
# step's advice names its part of the sound setting and the scoped
# notification, and never suggests ignoring the work tag (2): tag 2's
# violations there (a rank TDSHIM_IDLE=probe misjudged sends stolen batches
# of up to 68 KB and 4-byte replies) carry data.
# measure SETTINGS EXPECT: SETTINGS (VAR=value words or "") for the run,
# EXPECT a grep -E pattern the stderr advice must match
measure() {
    dir="$work/measure" st=0
    rm -rf "$dir" && mkdir -p "$dir"
    if ! have_shim; then ok 1 "measure mode: libtdshim.so not built"; return; fi
    try=0
    while :; do
        rm -rf "$dir" && mkdir -p "$dir"
        # shellcheck disable=SC2086 # $1 is a list of VAR=value words
        env $1 timeout -k 5 "$NTMO" "$RUN" --notify none --report-dir "$dir" -np 4 "$EX/work_queue" --native-stop \
            --workload short --phases 2 --seed "$SEED" >"$work/out" 2>"$work/out.err"
        rc=$?
        try=$((try + 1))
        # a matter of timing (as test-examples-measure's advice_step): on a
        # loaded node spin may see no breach in a run (a fresh-clone CI run
        # at 886d9bc: spin judged passive 16 times, 0 breaches, where probe
        # and test breached 107 times; beside a CI run, 344 times, 0
        # breaches), and the advice then names spin instead of the scoped
        # notification: up to 5 tries, each in the log
        few=$(sed -n 's/^tdshim: advice: TDSHIM_IDLE=\([a-z]*\) (no breach in \([0-9]*\) passive.*/\1 \2/p' \
            "$work/out.err")
        if [ $rc -eq 0 ] && [ $try -lt 5 ] && [ -n "$few" ] &&
            ! grep -q '^tdshim: advice: .*TDSHIM_NOTIFY=tag:N probed for only where idle' "$work/out.err"; then
            diag "try $try: $(grep '^tdshim: advice' "$work/out.err"): a notion without breach in this run (timing), again"
        else
            break
        fi
    done
    if [ $rc -ne 0 ] || ! grep -q "^RESULT example=work_queue ranks=4 .*notifications=0 stray=0 .* dropped=0 early=0 .* ok\$" "$work/out"; then
        st=1
        diag "exit status $rc: $(fields "$work/out")" "$(tail -n 8 "$work/out.err")"
    elif ! ls "$dir"/tdshim-report-*/summary.txt >/dev/null 2>&1; then
        st=1
        diag "no report (summary.txt) in $dir"
    fi
    adv=$(grep '^tdshim: advice:' "$work/out.err")
    diag "advice on stderr: ${adv:-(none)}" "$(fields "$work/out")" "$(report_says "$dir")" \
        "summary.txt's Advice section:" "$(sed -n '/^@--- Advice/,$p' "$dir"/tdshim-report-*/summary.txt 2>/dev/null)"
    if grep -q 'TDSHIM_IGNORE_TAGS=2\|add it to TDSHIM_IGNORE_TAGS.*tag 2\|tag 2: .*add it to TDSHIM_IGNORE_TAGS' \
        "$work/out.err" "$dir"/tdshim-report-*/summary.txt 2>/dev/null; then
        st=1
        diag "the advice suggests ignoring tag 2, the work tag"
    fi
    # the scoped notification, unless every try's advice named a notion
    # with no breach in its run instead: that is the advice's rule (a
    # notion without breach is what the run supports), and under load it
    # can hold five runs in a row (a fresh-clone CI run at 374df94; here 1
    # run in 6 beside nothing, with the library before and after that
    # day's changes alike). The rest is checked all the same.
    if ! printf '%s\n' "$adv" | grep -Eq "$2"; then
        st=1
        diag "the advice does not name $2"
    elif ! printf '%s\n' "$adv" | grep -q 'TDSHIM_NOTIFY=tag:N probed for only where idle'; then
        if [ -n "$few" ] && [ $try -ge 5 ]; then
            diag "the advice names TDSHIM_IDLE=${few% *} (no breach in ${few#* } passive judgements) in all $try tries instead of the scoped notification: accepted, that is the advice's rule"
        else
            st=1
            diag "the advice does not name the scoped notification"
        fi
    fi
    ok $st "measure mode${1:+ with $1} np=4 --native-stop --workload short: result untouched, report written, the advice names $2 and TDSHIM_NOTIFY=tag:N (or, in every try, a notion without breach), never the work tag (advice above)"
    rm -rf "$dir"
}
# The first step's advice for the requests' tag (every message on it 4
# bytes) is TDSHIM_IGNORE_TAGS=1, or TDSHIM_IGNORE_SHORT=1:4 -- the same
# setting for this tag -- when the run's work-tag evidence counted tag 1 as
# carrying work: a victim misjudged passive at this grain answers a request
# with a batch and goes on with its items, which crossed the share of
# tdr_advice.c's TDR_WORK_SHARE once in a fresh-clone CI run (2 cores, other
# tests beside it; 5-12 % of the finds in 10 runs under two CPU hogs)
measure "" 'TDSHIM_IGNORE_TAGS=1 if tag 1 carries no work|TDSHIM_IGNORE_SHORT=1:4 '
measure TDSHIM_IGNORE_TAGS=1 'TDSHIM_IGNORE_SHORT=2:4 if its 4-byte messages carry no work'

# (d) one step before the sound setting: requests ignored, "no work"
# replies counted. The replies a passive rank sends are contract
# violations, all 4 bytes on tag 2; the advice names TDSHIM_IGNORE_SHORT=2:4
# and never the work tag. (The run itself may lose work or end late: only
# its report is judged.)
step_before() {
    dir="$work/before" st=0
    mkdir -p "$dir"
    if ! have_shim; then ok 1 "advice one step before: libtdshim.so not built"; return; fi
    for try in 1 2 3; do
        rm -rf "$dir" && mkdir -p "$dir"
        TDSHIM_IDLE=probe TDSHIM_IGNORE_TAGS=1 timeout -k 5 "$TMO" "$RUN" --algo bcj --notify "tag:$DONE_TAG" \
            --report-dir "$dir" -np 2 "$EX/work_queue" --done-tag "$DONE_TAG" --linger-ms 2 --workload short \
            --phases 2 --seed $((SEED + try - 1)) >"$work/out" 2>"$work/out.err"
        rc=$?
        [ $rc -eq 124 ] || break
        diag "try $try timed out after ${TMO}s (the unsound setting never ended)"
    done
    adv=$(grep '^tdshim: advice:' "$work/out.err")
    if [ $rc -eq 124 ]; then
        st=1
        diag "timed out after ${TMO}s: no report to read"
    elif ! printf '%s\n' "$adv" | grep -q 'TDSHIM_IGNORE_SHORT=2:4' || printf '%s\n' "$adv" | grep -q 'TDSHIM_IGNORE_TAGS=2'; then
        st=1
        diag "exit status $rc: $(fields "$work/out")" "$(report_says "$dir")"
    fi
    diag "advice on stderr: ${adv:-(none)}"
    ok $st "TDSHIM_IDLE=probe TDSHIM_IGNORE_TAGS=1 (the \"no work\" replies counted) np=2: the advice names TDSHIM_IGNORE_SHORT=2:4, never the work tag"
    rm -rf "$dir"
}
[ "$FULL" = 1 ] && step_before
done_testing
